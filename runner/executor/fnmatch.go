package executor

// A port of the semantics of CPython 3.11's fnmatch.translate (and of the regular
// expression character classes it produces), so that "[!a-c]", "[]]", "[z-a]" and friends
// match what they matched for the model in training. Matching is case-sensitive, as
// os.path.normcase is the identity on POSIX, and "*" also matches newlines.

type globTokenKind uint8

const (
	tokLiteral globTokenKind = iota
	tokAny
	tokStar
	tokClass
)

type globToken struct {
	kind  globTokenKind
	r     rune
	class *charClass
}

type charClass struct {
	negate bool
	ranges [][2]rune
}

func (c *charClass) has(r rune) bool {
	in := false
	for _, rg := range c.ranges {
		if r >= rg[0] && r <= rg[1] {
			in = true
			break
		}
	}
	return in != c.negate
}

type globPattern struct {
	tokens []globToken
}

func compileGlob(pat string) *globPattern {
	p := []rune(pat)
	n := len(p)
	var toks []globToken
	for i := 0; i < n; {
		c := p[i]
		i++
		switch c {
		case '*':
			if len(toks) == 0 || toks[len(toks)-1].kind != tokStar {
				toks = append(toks, globToken{kind: tokStar})
			}
		case '?':
			toks = append(toks, globToken{kind: tokAny})
		case '[':
			j := i
			if j < n && p[j] == '!' {
				j++
			}
			if j < n && p[j] == ']' {
				j++
			}
			for j < n && p[j] != ']' {
				j++
			}
			if j >= n {
				toks = append(toks, globToken{kind: tokLiteral, r: '['})
				continue
			}
			toks = append(toks, classToken(p, i, j))
			i = j + 1
		default:
			toks = append(toks, globToken{kind: tokLiteral, r: c})
		}
	}
	return &globPattern{tokens: toks}
}

// classElem is one character of the class text fnmatch hands to the regex engine: either
// an escaped (always literal) character or a bare one, where a bare "-" forms a range.
type classElem struct {
	r       rune
	escaped bool
}

// classToken builds the token for p[i:j], the text between "[" and "]".
func classToken(p []rune, i, j int) globToken {
	var elems []classElem
	add := func(s []rune, escapeHyphen bool) {
		for _, r := range s {
			elems = append(elems, classElem{r: r, escaped: r == '\\' || (escapeHyphen && r == '-')})
		}
	}
	stuff := p[i:j]
	if !containsRune(stuff, '-') {
		add(stuff, false)
	} else {
		// fnmatch splits at the hyphens that form ranges ...
		var chunks [][]rune
		k := i + 1
		if p[i] == '!' {
			k = i + 2
		}
		for {
			k = indexRune(p, '-', k, j)
			if k < 0 {
				break
			}
			chunks = append(chunks, p[i:k])
			i = k + 1
			k += 3
		}
		if last := p[i:j]; len(last) > 0 {
			chunks = append(chunks, last)
		} else {
			chunks[len(chunks)-1] = append(append([]rune(nil), chunks[len(chunks)-1]...), '-')
		}
		// ... drops the reversed ones ("z-a"), which the regex engine would reject ...
		for k := len(chunks) - 1; k > 0; k-- {
			prev, cur := chunks[k-1], chunks[k]
			if len(prev) > 0 && len(cur) > 0 && prev[len(prev)-1] > cur[0] {
				chunks[k-1] = append(append([]rune(nil), prev[:len(prev)-1]...), cur[1:]...)
				chunks = append(chunks[:k], chunks[k+1:]...)
			}
		}
		// ... and escapes every hyphen that is not a range.
		for ci, ch := range chunks {
			if ci > 0 {
				elems = append(elems, classElem{r: '-'})
			}
			add(ch, true)
		}
	}
	switch {
	case len(elems) == 0:
		return globToken{kind: tokClass, class: &charClass{}} // "(?!)": never matches
	case len(elems) == 1 && elems[0].r == '!' && !elems[0].escaped:
		return globToken{kind: tokAny} // negated empty class: any character
	}
	cls := &charClass{}
	if elems[0].r == '!' && !elems[0].escaped {
		cls.negate = true
		elems = elems[1:]
	}
	// The regex engine's reading of the class: an element, then "-" and another element
	// make a range; a "-" before the closing bracket is a literal.
	for e := 0; e < len(elems); e++ {
		lo := elems[e].r
		if e+1 < len(elems) && elems[e+1].r == '-' && !elems[e+1].escaped {
			if e+2 >= len(elems) {
				cls.ranges = append(cls.ranges, [2]rune{lo, lo}, [2]rune{'-', '-'})
				break
			}
			hi := elems[e+2].r
			if hi >= lo {
				cls.ranges = append(cls.ranges, [2]rune{lo, hi})
			}
			e += 2
			continue
		}
		cls.ranges = append(cls.ranges, [2]rune{lo, lo})
	}
	return globToken{kind: tokClass, class: cls}
}

func containsRune(s []rune, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

// indexRune is str.find(r, from, to).
func indexRune(s []rune, r rune, from, to int) int {
	for k := from; k < to && k < len(s); k++ {
		if s[k] == r {
			return k
		}
	}
	return -1
}

func (t globToken) matches(r rune) bool {
	switch t.kind {
	case tokLiteral:
		return t.r == r
	case tokAny:
		return true
	case tokClass:
		return t.class.has(r)
	}
	return false
}

// match reports whether the whole name matches, with the usual linear-time backtracking
// to the most recent star.
func (g *globPattern) match(name string) bool {
	s := []rune(name)
	toks := g.tokens
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		switch {
		case ti < len(toks) && toks[ti].kind == tokStar:
			starT, starS = ti, si
			ti++
		case ti < len(toks) && toks[ti].matches(s[si]):
			ti++
			si++
		case starT >= 0:
			ti = starT + 1
			starS++
			si = starS
		default:
			return false
		}
	}
	for ti < len(toks) && toks[ti].kind == tokStar {
		ti++
	}
	return ti == len(toks)
}

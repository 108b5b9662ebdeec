package deps

import (
	"sort"
	"strings"
)

// key is what one package of a set of manifests is known by: its ecosystem, its name (PyPI's
// normalised: "Foo_Bar" and "foo-bar" are one package), or its source when it has no name,
// and its role.
type key struct{ eco, name, role string }

func keyOf(p Package) key {
	name := p.Name
	switch {
	case name == "":
		name = "\x00" + string(p.Source.Kind) + "\x00" + p.Source.Where
	case p.Ecosystem == "PyPI":
		name = pyNormal(name)
	}
	return key{p.Ecosystem, name, p.Role}
}

// pyNormal is PEP 503's normalised name.
func pyNormal(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(s) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

// compare lists, package by package, what changed between old and cur (the entries of one set
// of manifests on each side). partial says the patched side holds something unread: a
// package no longer found is then Unlisted, not Removed.
func compare(old, cur []Package, partial bool) []Change {
	type pair struct{ old, cur []Package }
	by := map[key]*pair{}
	var keys []key
	get := func(k key) *pair {
		s, ok := by[k]
		if !ok {
			s = &pair{}
			by[k] = s
			keys = append(keys, k)
		}
		return s
	}
	for _, o := range old {
		s := get(keyOf(o))
		s.old = append(s.old, o)
	}
	for _, c := range cur {
		s := get(keyOf(c))
		s.cur = append(s.cur, c)
	}
	var out []Change
	var outKeys []key
	for _, k := range keys {
		s := by[k]
		gone, came := minus(s.old, s.cur, false), minus(s.cur, s.old, false)
		c := Change{Ecosystem: k.eco, Role: k.role, Old: gone, New: came, Kind: Changed}
		switch {
		case len(gone) == 0 && len(came) == 0:
			// The same entries; written in other files? Then it moved.
			goneF, cameF := minus(s.old, s.cur, true), minus(s.cur, s.old, true)
			if len(goneF) == 0 || len(cameF) == 0 {
				continue
			}
			c.Kind, c.Old, c.New = Moved, goneF, cameF
		case len(s.old) == 0:
			c.Kind = Added
		case len(s.cur) == 0:
			c.Kind = Removed
			if partial {
				c.Kind = Unlisted
			}
		}
		c.Name, c.File = nameAndFile(c)
		out = append(out, c)
		outKeys = append(outKeys, k)
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := out[idx[i]], out[idx[j]]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Ecosystem != b.Ecosystem {
			return a.Ecosystem < b.Ecosystem
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		return outKeys[idx[i]].name < outKeys[idx[j]].name
	})
	sorted := make([]Change, len(out))
	for i, k := range idx {
		sorted[i] = out[k]
	}
	return sorted
}

// nameAndFile is how a change is named: as the patched tree writes it, else as the base did.
func nameAndFile(c Change) (string, string) {
	for _, ps := range [][]Package{c.New, c.Old} {
		if len(ps) > 0 {
			return ps[0].Name, ps[0].In
		}
	}
	return "", ""
}

// minus returns the entries of a that b does not hold, once each: by version and source, and
// with inFile by the file they are written in too.
func minus(a, b []Package, inFile bool) []Package {
	id := func(p Package) string {
		if inFile {
			return p.ident() + "\x00" + p.In
		}
		return p.ident()
	}
	in := map[string]bool{}
	for _, x := range b {
		in[id(x)] = true
	}
	var out []Package
	for _, x := range a {
		if !in[id(x)] {
			in[id(x)] = true
			out = append(out, x)
		}
	}
	return out
}

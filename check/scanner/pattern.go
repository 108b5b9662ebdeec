package scanner

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Pattern names configuration files of a scanner, as the operator writes them (config=) or
// frognano's table of known tools has them (tools.go):
//
//   - a name without '/' ("pyproject.toml", ".eslintrc*") is a file of that name in any
//     folder, so a configuration file a patch adds deeper in the tree (eslint's cascading
//     files, pylint's search up the tree, a nested .semgrepignore) is one too;
//   - a name ending in '/' (".semgrep/") is every file under a folder of that name, in any
//     folder, and a file of that name;
//   - a path with '/' inside ("tools/eslint/*.js") is anchored at the repository's root, and
//     "**" stands for any number of folders.
//
// Each part between slashes is matched with path.Match ('*', '?', '[...]').
type Pattern struct {
	text  string   // as written
	parts []string // anchored at the root, "**" for any folders
}

func (p Pattern) String() string { return p.text }

// Bounds of one pattern and of a scanner's patterns.
const (
	maxPatternLen      = 200
	maxPatternsPerScan = 64
)

// ParsePattern reads one pattern. It refuses what could not name a path of the repository:
// an absolute path, "." or ".." parts, empty parts, a backslash or a control character, or
// a part path.Match cannot read.
func ParsePattern(s string) (Pattern, error) {
	if s == "" || len(s) > maxPatternLen {
		return Pattern{}, fmt.Errorf("a pattern must have 1 to %d characters", maxPatternLen)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return Pattern{}, errors.New("a pattern holds a control character or a backslash")
		}
	}
	if strings.HasPrefix(s, "/") {
		return Pattern{}, errors.New("a pattern is a path inside the repository, not an absolute one")
	}
	dir := strings.HasSuffix(s, "/")
	body := strings.TrimSuffix(s, "/")
	parts := strings.Split(body, "/")
	for _, part := range parts {
		switch {
		case part == "" || part == "." || part == "..":
			return Pattern{}, errors.New("a pattern has an empty, '.' or '..' part")
		case part == "**":
			continue
		case strings.Contains(part, "**"):
			return Pattern{}, errors.New("'**' must be a whole part of a pattern")
		}
		if _, err := path.Match(part, ""); err != nil {
			return Pattern{}, errors.New("a pattern has a malformed '[...]'")
		}
	}
	if len(parts) == 1 {
		parts = append([]string{"**"}, parts...)
	}
	if dir {
		parts = append(parts, "**")
	}
	return Pattern{text: s, parts: parts}, nil
}

// mustPattern is ParsePattern for the table of known tools.
func mustPattern(s string) Pattern {
	p, err := ParsePattern(s)
	if err != nil {
		panic(fmt.Sprintf("scanner: bad built-in pattern %q: %v", s, err))
	}
	return p
}

// Match reports whether the repository path file (slash-separated, relative) is named by p.
// A folder pattern ("x/") also names a file x itself.
func (p Pattern) Match(file string) bool {
	segs := strings.Split(file, "/")
	if matchParts(p.parts, segs) {
		return true
	}
	n := len(p.parts)
	return n >= 2 && p.parts[n-1] == "**" && strings.HasSuffix(p.text, "/") && matchParts(p.parts[:n-1], segs)
}

// matchParts matches path segments against pattern parts, "**" taking any number of segments.
// It fills a table of which pattern suffix matches which path suffix, so that a path of many
// segments (a patch chooses its paths) costs parts × segments, whatever the number of "**".
func matchParts(parts, segs []string) bool {
	// ok[i][j]: parts[i:] matches segs[j:].
	ok := make([][]bool, len(parts)+1)
	for i := range ok {
		ok[i] = make([]bool, len(segs)+1)
	}
	ok[len(parts)][len(segs)] = true
	for i := len(parts) - 1; i >= 0; i-- {
		for j := len(segs); j >= 0; j-- {
			if parts[i] == "**" {
				ok[i][j] = ok[i+1][j] || (j < len(segs) && ok[i][j+1])
				continue
			}
			if j < len(segs) {
				m, _ := path.Match(parts[i], segs[j])
				ok[i][j] = m && ok[i+1][j+1]
			}
		}
	}
	return ok[0][0]
}

// matchAny reports whether one of ps names file.
func matchAny(ps []Pattern, file string) bool {
	for _, p := range ps {
		if p.Match(file) {
			return true
		}
	}
	return false
}

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocumentLinks holds every relative link of the repository's markdown documents to what
// it names: the file or folder exists inside the repository, and a #fragment is a heading of
// the document it points at (as GitHub spells heading anchors). A document moved or a heading
// renamed breaks its readers' links; this says where.
func TestDocumentLinks(t *testing.T) {
	t.Parallel()
	docs := markdownFiles(t)
	anchors := map[string]map[string]bool{} // document (repository path) → its anchors
	anchorsOf := func(doc string) map[string]bool {
		if a, ok := anchors[doc]; ok {
			return a
		}
		anchors[doc] = headingAnchors(readDoc(t, doc))
		return anchors[doc]
	}
	links := 0
	for _, doc := range docs {
		for _, l := range relativeLinks(readDoc(t, doc)) {
			links++
			where := doc + ":" + l.line
			path, frag, _ := strings.Cut(l.target, "#")
			target := doc
			if path != "" {
				target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(doc), path)))
				if target == ".." || strings.HasPrefix(target, "../") {
					t.Errorf("%s: %s leaves the repository", where, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(repoRoot, target)); err != nil {
					t.Errorf("%s: %s: no such file or folder in the repository", where, l.target)
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s: %s: a fragment on something that is not a markdown document", where, l.target)
				continue
			}
			if !anchorsOf(target)[frag] {
				t.Errorf("%s: %s: %s has no heading #%s", where, l.target, target, frag)
			}
		}
	}
	if links < 10 {
		t.Fatalf("found %d relative links in %d documents; the README alone has more", links, len(docs))
	}
}

// markdownFiles are the repository's markdown documents (repository paths), test data aside.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(repoRoot, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (strings.HasPrefix(e.Name(), ".") && path != repoRoot || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !e.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 5 {
		t.Fatalf("found %d markdown documents: %v", len(out), out)
	}
	return out
}

type docLink struct {
	line   string
	target string
}

var (
	inlineLinkRE  = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	refLinkRE     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	codeSpanRE    = regexp.MustCompile("`[^`]*`")
	schemeRE      = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	headingLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// relativeLinks are the links of a markdown text that point inside the repository: inline
// ([text](target)) and reference definitions ([name]: target), outside code.
func relativeLinks(text string) []docLink {
	var out []docLink
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = codeSpanRE.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLinkRE.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLinkRE.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if schemeRE.MatchString(target) || strings.HasPrefix(target, "//") {
				continue // another site's address
			}
			out = append(out, docLink{line: strconv.Itoa(i + 1), target: strings.Trim(target, "<>")})
		}
	}
	return out
}

// headingAnchors are the anchors GitHub gives a document's headings: the heading's text, lower
// case, without what is neither a letter, a digit, '_', '-' nor a space, spaces made '-'; a
// repeated anchor gets -1, -2, ….
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		heading = headingLinkRE.ReplaceAllString(heading, "$1") // a link's text
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r), r == '_', r == '-':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			out[anchor+"-"+strconv.Itoa(n)] = true
		} else {
			out[anchor] = true
		}
		seen[anchor]++
	}
	return out
}

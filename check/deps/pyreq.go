package deps

import (
	"context"
	"path"
	"regexp"
	"strings"

	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/requirements"
)

// This file reads one Python requirement, wherever it is written (a requirements file's line,
// a string of pyproject.toml, setup.cfg or setup.py), as pip reads it: a URL, a repository or
// a path (editable or not) is a package with its Source; "name @ URL" too (PEP 508's direct
// reference); a registry requirement goes to SCALIBR's requirements extractor for its name,
// version and comparator; anything else is unread, with why.

// pep508 is a requirement's name, its extras and the rest (a specifier, "@ URL", a marker).
var pep508 = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)$`)

// archiveSuffixes are the file names pip takes for an archive to install (is_archive_file).
var archiveSuffixes = []string{".whl", ".zip", ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tlz", ".tar.lz", ".tar.lzma"}

// pipURLSchemes are the schemes of pip's is_url (with its VCS schemes).
var pipURLSchemes = regexp.MustCompile(`(?i)^(https?|file|ftp|git|git\+[a-z]+|hg\+[a-z]+|hg|svn|svn\+[a-z]+|bzr|bzr\+[a-z]+):`)

// eggName is the name a URL gives its package: #egg=NAME, or a wheel's or archive's file name.
func eggName(u string) string {
	if _, frag, ok := strings.Cut(u, "#"); ok {
		for _, kv := range strings.Split(frag, "&") {
			if v, ok := strings.CutPrefix(kv, "egg="); ok && pep508.MatchString(v) {
				if m := pep508.FindStringSubmatch(v); m[3] == "" {
					return m[1]
				}
			}
		}
	}
	base := path.Base(strings.SplitN(strings.SplitN(u, "#", 2)[0], "?", 2)[0])
	for _, s := range archiveSuffixes {
		if strings.HasSuffix(strings.ToLower(base), s) {
			name, _, _ := strings.Cut(base[:len(base)-len(s)], "-")
			if m := pep508.FindStringSubmatch(name); m != nil && m[3] == "" && m[2] == "" {
				return m[1]
			}
		}
	}
	return ""
}

// reqLine is a requirement of a Python manifest: the text and where it is.
type reqLine struct {
	n        int
	text     string
	editable bool
	role     string
}

// pyReader collects what the requirements of one Python manifest say.
type pyReader struct {
	file  string
	m     *Manifest
	plain []reqLine // registry requirements, for SCALIBR's extractor
	role  string
}

func (r *pyReader) unread(n int, what, why string) {
	r.m.Unread = append(r.m.Unread, Unread{File: r.file, Line: n, What: clip(what, 200), Why: why})
}

// requirement reads one requirement (a requirements file's line without its options, or a
// string of pyproject.toml, setup.cfg or setup.py).
func (r *pyReader) requirement(l reqLine) {
	s := strings.TrimSpace(l.text)
	l.role = r.role
	if l.editable || pipURLSchemes.MatchString(s) {
		r.direct(l, s)
		return
	}
	m := pep508.FindStringSubmatch(s)
	if m != nil {
		// name @ URL: pip takes it for a URL requirement when the part before "@" does not
		// look like a path (pip's _get_url_from_path).
		if u, ok := strings.CutPrefix(strings.TrimSpace(m[3]), "@"); ok {
			r.urlRequirement(l, s, m[1], strings.TrimSpace(u))
			return
		}
	}
	if looksLikePath(s) {
		r.direct(l, s)
		return
	}
	if m == nil {
		r.unread(l.n, s, "it is not a requirement pip reads")
		return
	}
	rest := strings.TrimSpace(m[3])
	if rest != "" && !strings.ContainsAny(rest[:1], "=<>!~(;") {
		r.unread(l.n, s, "it is not a requirement pip reads")
		return
	}
	r.plain = append(r.plain, l)
}

// urlRequirement reads "name @ URL ; marker" (PEP 508's direct reference).
func (r *pyReader) urlRequirement(l reqLine, s, name, u string) {
	// A marker follows the URL after whitespace (PEP 508).
	if i := strings.IndexAny(u, " \t"); i >= 0 {
		if rest := strings.TrimSpace(u[i:]); rest != "" && !strings.HasPrefix(rest, ";") {
			r.unread(l.n, s, "its URL cannot be read")
			return
		}
		u = u[:i]
	}
	if u == "" {
		r.unread(l.n, s, "its URL cannot be read")
		return
	}
	r.add(Package{Ecosystem: "PyPI", Name: name, Source: urlSource(r.file, u)})
}

// direct reads a requirement that names its source instead of a version: a URL, a
// repository or a path, editable or not.
func (r *pyReader) direct(l reqLine, s string) {
	var src Source
	switch {
	case pipURLSchemes.MatchString(s):
		src = urlSource(r.file, s)
	default:
		p, _, _ := strings.Cut(s, ";")
		p = strings.TrimSpace(p)
		if i := strings.LastIndex(p, "["); i > 0 && strings.HasSuffix(p, "]") {
			p = p[:i] // ./pkg[extra]
		}
		if strings.ContainsAny(p, " \t") {
			r.unread(l.n, s, "it is not a requirement pip reads")
			return
		}
		src = pathSource(r.file, p)
	}
	name := eggName(s)
	r.add(Package{Ecosystem: "PyPI", Name: name, Source: src})
}

func (r *pyReader) add(p Package) {
	p.Role = r.role
	p.In = r.file
	r.m.Packages = append(r.m.Packages, p)
}

// looksLikePath is pip's test for a requirement that is a path: a folder separator, a leading
// dot, or an archive's file name.
func looksLikePath(s string) bool {
	p, _, _ := strings.Cut(s, ";")
	p = strings.TrimSpace(p)
	if strings.Contains(p, "/") || strings.HasPrefix(p, ".") || strings.HasPrefix(p, "~") {
		return true
	}
	lp := strings.ToLower(p)
	for _, suf := range archiveSuffixes {
		if strings.HasSuffix(lp, suf) {
			return true
		}
	}
	return false
}

// finish hands the registry requirements to SCALIBR's requirements extractor, one a line, and
// reports as unread each one it returns nothing for.
func (r *pyReader) finish(ctx context.Context) error {
	if len(r.plain) == 0 {
		return nil
	}
	var b strings.Builder
	for _, l := range r.plain {
		// One requirement a line: a newline or a backslash would join or split them.
		b.WriteString(strings.Join(strings.Fields(strings.ReplaceAll(l.text, `\`, " ")), " "))
		b.WriteByte('\n')
	}
	ex, err := requirements.New(nil)
	if err != nil {
		return err
	}
	pkgs, err := extract(ctx, ex, "requirements.txt", []byte(b.String()))
	if err != nil {
		return err
	}
	got := map[int]bool{}
	for _, k := range pkgs {
		line := 0
		if loc := k.Location.Descriptor; loc != nil && loc.File != nil {
			line = loc.File.LineNumber
		}
		if line < 1 || line > len(r.plain) {
			continue
		}
		got[line] = true
		ps, _ := requirementsDeps(ctx, []*extractor.Package{k})
		for _, p := range ps {
			p.Role = r.plain[line-1].role
			p.In = r.file
			r.m.Packages = append(r.m.Packages, p)
		}
	}
	for i, l := range r.plain {
		if !got[i+1] {
			why := "frognano could not read this requirement"
			if strings.Contains(l.text, "${") {
				why = "it uses an environment variable, which pip expands when it runs"
			}
			r.unread(l.n, l.text, why)
		}
	}
	return nil
}

// clip bounds a text of the patch kept for a report, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

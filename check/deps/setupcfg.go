package deps

import (
	"context"
	"strings"
)

// parseSetupCfg reads setup.cfg as setuptools does (configparser's format): [options]
// install_requires and setup_requires and [options.extras_require], each a list of
// requirements one a line (or separated by ";"), or "file: FILE ..." to read requirements from
// files (an include). SCALIBR has no extractor of setup.cfg.
//
// configparser reads the file as setuptools opens it, in universal-newline mode (a line ends
// at \n, \r\n or a lone \r), strips lines by str.strip() and measures a line's indentation by
// Python's whitespace (pySpace): a line is a continuation of the value above when it is
// indented more than that value's key, and a section header is "[" up to the last "]" of the
// stripped line. setuptools then splits a value that holds a newline by str.splitlines(), at
// \f, \v and the other separators of pySplitlines too. Before, lines were split at \n alone
// and indentation was a space or a tab, so a key after a lone \r was read inside a comment, a
// key indented like the key above was read as its value, and a requirement after a \f in a
// value was read as the tail of the one before.
func parseSetupCfg(ctx context.Context, file string, content []byte) (*Manifest, error) {
	m := &Manifest{}
	r := &pyReader{file: file, m: m}
	section := ""
	type entry struct {
		section, key, value string
		line                int
	}
	var cur *entry
	var entries []entry
	indent := 0 // the indentation of the last line that was not a continuation
	flush := func() {
		if cur != nil {
			entries = append(entries, *cur)
			cur = nil
		}
	}
	for _, pl := range universalLines(string(content)) {
		n, l := pl.n, pl.text
		trim := pyStrip(l)
		if strings.HasPrefix(trim, "#") || strings.HasPrefix(trim, ";") {
			continue
		}
		if trim == "" {
			if cur != nil {
				cur.value += "\n"
			}
			continue
		}
		in := pyIndent(l)
		if cur != nil && in > indent {
			cur.value += "\n" + trim // a continuation line of the value
			continue
		}
		indent = in
		flush()
		if end := strings.LastIndex(trim, "]"); strings.HasPrefix(trim, "[") && end >= 2 {
			section = strings.TrimSpace(trim[1:end])
			continue
		}
		k, v, ok := cutFirst(trim, "=:")
		if !ok {
			if section == "options" || section == "options.extras_require" {
				r.unread(n, trim, "configparser would refuse the line")
			}
			continue
		}
		cur = &entry{section: section, key: pyStrip(k), value: pyStrip(v), line: n}
	}
	flush()
	kept := entries[:0]
	for _, e := range entries {
		key := strings.ReplaceAll(strings.ToLower(e.key), "-", "_")
		switch {
		case e.section == "options" && (key == "install_requires" || key == "setup_requires"):
			e.key = key
		case e.section == "options.extras_require":
			e.key = "extras_require " + e.key
		default:
			continue
		}
		kept = append(kept, e)
	}
	entries = kept
	flush()
	for _, e := range entries {
		r.role = ""
		if e.key == "setup_requires" {
			r.role = RoleBuild
		}
		v := pyStrip(e.value)
		if strings.Contains(v, "%") {
			r.unread(e.line, e.key, "it uses configparser's % interpolation, which frognano does not evaluate")
			continue
		}
		if files, ok := strings.CutPrefix(v, "file:"); ok {
			for _, f := range strings.Fields(strings.ReplaceAll(files, ",", " ")) {
				m.Includes = append(m.Includes, Include{Path: f, Line: e.line, What: e.key + " = file: " + clip(f, 200)})
			}
			continue
		}
		// setuptools' _parse_list: str.splitlines() when the value holds a newline, else ";".
		var items []string
		if strings.Contains(v, "\n") {
			for _, l := range pySplitlines(v) {
				items = append(items, l.text)
			}
		} else {
			items = strings.Split(v, ";")
		}
		for _, item := range items {
			item = pyStrip(item)
			if item == "" || strings.HasPrefix(item, "#") {
				continue
			}
			r.requirement(reqLine{n: e.line, text: item})
		}
	}
	r.role = ""
	if err := r.finish(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// cutFirst cuts s at the first of the bytes of seps.
func cutFirst(s, seps string) (string, string, bool) {
	i := strings.IndexAny(s, seps)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

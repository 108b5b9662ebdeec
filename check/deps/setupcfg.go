package deps

import (
	"context"
	"strings"
)

// parseSetupCfg reads setup.cfg as setuptools does (configparser's format): [options]
// install_requires and setup_requires and [options.extras_require], each a list of
// requirements one a line (or separated by ";"), or "file: FILE ..." to read requirements from
// files (an include). SCALIBR has no extractor of setup.cfg.
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
	flush := func() {
		if cur != nil {
			entries = append(entries, *cur)
			cur = nil
		}
	}
	for i, l := range strings.Split(strings.ReplaceAll(string(content), "\r\n", "\n"), "\n") {
		n := i + 1
		trim := strings.TrimSpace(l)
		if strings.HasPrefix(trim, "#") || strings.HasPrefix(trim, ";") {
			continue
		}
		if cur != nil && trim != "" && (l[0] == ' ' || l[0] == '\t') {
			cur.value += "\n" + trim // a continuation line of the value
			continue
		}
		if trim == "" {
			if cur != nil {
				cur.value += "\n"
			}
			continue
		}
		flush()
		if strings.HasPrefix(trim, "[") && strings.HasSuffix(trim, "]") {
			section = strings.TrimSpace(trim[1 : len(trim)-1])
			continue
		}
		k, v, ok := cutFirst(l, "=:")
		if !ok {
			if section == "options" || section == "options.extras_require" {
				r.unread(n, trim, "configparser would refuse the line")
			}
			continue
		}
		cur = &entry{section: section, key: strings.TrimSpace(k), value: strings.TrimSpace(v), line: n}
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
		v := strings.TrimSpace(e.value)
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
		sep := ";"
		if strings.Contains(v, "\n") {
			sep = "\n"
		}
		for _, item := range strings.Split(v, sep) {
			item = strings.TrimSpace(item)
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

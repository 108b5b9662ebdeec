package deps

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"regexp"
	"strings"
	"unicode/utf16"
)

// This file reads pip's requirements files as pip does (pip's req_file.py): lines joined at a
// trailing backslash, comments dropped, then each line either options (-r, -c, -i, ...) or a
// requirement with its own options (--hash). SCALIBR's requirements extractor reads the plain
// requirements (name, version, comparator), as before; what it skips is read here: includes
// (-r, -c and their long forms, which it would open on the host's file system and this
// package follows in git's objects instead), index options, editable, URL, VCS and path
// requirements (name @ URL, git+https://..., ./pkg), and every option pip would refuse.

// pipOption is one option pip takes in a requirements file.
type pipOption struct {
	long, short string
	value       bool // takes a value
}

// pipOptions are the options of pip's requirements files (SUPPORTED_OPTIONS and
// SUPPORTED_OPTIONS_REQ of pip's req_file.py). pip's option parser also takes any unique
// prefix of a long option (--extra-index for --extra-index-url), and so does pipOptionOf.
var pipOptions = []pipOption{
	{"--index-url", "-i", true}, {"--extra-index-url", "", true}, {"--no-index", "", false},
	{"--constraint", "-c", true}, {"--requirement", "-r", true}, {"--editable", "-e", true},
	{"--find-links", "-f", true}, {"--no-binary", "", true}, {"--only-binary", "", true},
	{"--prefer-binary", "", false}, {"--require-hashes", "", false}, {"--pre", "", false},
	{"--trusted-host", "", true}, {"--use-feature", "", true},
	// A requirement's own options.
	{"--global-option", "", true}, {"--hash", "", true}, {"--config-settings", "-C", true},
}

// perRequirement are the options that belong to the requirement on their line.
var perRequirement = map[string]bool{"--global-option": true, "--hash": true, "--config-settings": true}

// pipOptionOf finds the option a token names: exactly, or (a long one) by a unique prefix.
func pipOptionOf(tok string) (pipOption, string, bool) {
	if strings.HasPrefix(tok, "--") {
		name, _, _ := strings.Cut(tok, "=")
		var found []pipOption
		for _, o := range pipOptions {
			if o.long == name {
				return o, name, true
			}
			if strings.HasPrefix(o.long, name) && len(name) > 2 {
				found = append(found, o)
			}
		}
		if len(found) == 1 {
			return found[0], name, true
		}
		return pipOption{}, name, false
	}
	if len(tok) >= 2 && tok[0] == '-' {
		for _, o := range pipOptions {
			if o.short != "" && strings.HasPrefix(tok, o.short) {
				return o, o.short, true
			}
		}
	}
	return pipOption{}, tok, false
}

// pipComment is pip's COMMENT_RE, (^|\s+)#.*$, with Python's \s: every character str.isspace()
// takes for whitespace (pySpace), not RE2's ASCII five.
var pipComment = regexp.MustCompile(`(^|[\t\n\v\f\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]+)#.*$`)

// pipLines joins and strips the lines of a requirements file as pip's preprocess does: split
// by str.splitlines() (pySplitlines: at \r, \v, \f, \x1c-\x1e, U+0085, U+2028 and U+2029 as
// well as \n), joined at a trailing backslash, comments dropped, stripped by str.strip().
// Before, the file was split at \n alone, so what followed another separator was read as the
// rest of its line (inside a comment, dropped) while pip reads it as a line of its own.
func pipLines(content string) []line {
	var out []line
	var joined []string
	first := 0
	for _, pl := range pySplitlines(content) {
		l := pl.text
		loc := pipComment.FindStringIndex(l)
		isComment := loc != nil && loc[0] == 0 // re.match: at the start only
		if !strings.HasSuffix(l, `\`) || isComment {
			if isComment {
				l = " " + l
			}
			n := pl.n
			if joined != nil {
				l = strings.Join(joined, "") + l
				n = first
				joined = nil
			}
			out = append(out, line{n, l})
			continue
		}
		if joined == nil {
			first = pl.n
		}
		joined = append(joined, strings.Trim(l, `\`))
	}
	if joined != nil {
		out = append(out, line{first, strings.Join(joined, "")})
	}
	kept := out[:0]
	for _, l := range out {
		l.text = pyStrip(pipComment.ReplaceAllString(l.text, ""))
		if l.text != "" {
			kept = append(kept, l)
		}
	}
	return kept
}

// shlexSplit splits s as Python's shlex.split does (POSIX mode, no comments), which is how
// pip splits a line's options; false when a quote is not closed.
func shlexSplit(s string) ([]string, bool) {
	var out []string
	var cur strings.Builder
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\\':
			in = true
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			in = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if !closed {
				return nil, false
			}
		default:
			in = true
			cur.WriteByte(c)
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out, true
}

// pipOpt is one option of a line with its value.
type pipOpt struct{ name, value string }

// splitPipOptions reads a line's options as pip's option parser does; why says what pip
// would refuse (frognano's words), and detail quotes the line's part it refuses. Like
// optparse, it passes over a word that is no option ("x" in "-i URL x -f DIR") and stops at
// "--": pip drops those words and keeps every option around them. Before, such a line was
// said to be refused, and its index was no finding, while pip installs from it.
func splitPipOptions(s string) (opts []pipOpt, why, detail string) {
	toks, ok := shlexSplit(s)
	if !ok {
		return nil, "a quote is not closed", ""
	}
	var out []pipOpt
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t == "--" {
			break // optparse: the end of the options; pip drops the words after it
		}
		if !strings.HasPrefix(t, "-") || t == "-" {
			continue // optparse keeps a word that is no option aside, and pip drops it
		}
		o, name, ok := pipOptionOf(t)
		if !ok {
			return nil, "pip does not take this option", clip(name, 80)
		}
		if !o.value {
			if strings.Contains(t, "=") || (!strings.HasPrefix(t, "--") && t != o.short) {
				return nil, "the option " + o.long + " takes no value", ""
			}
			out = append(out, pipOpt{o.long, ""})
			continue
		}
		var v string
		switch {
		case strings.HasPrefix(t, "--") && strings.Contains(t, "="):
			_, v, _ = strings.Cut(t, "=")
		case !strings.HasPrefix(t, "--") && len(t) > len(o.short):
			v = t[len(o.short):]
		case i+1 < len(toks):
			i++
			v = toks[i]
		default:
			return nil, "the option " + o.long + " has no value", ""
		}
		out = append(out, pipOpt{o.long, v})
	}
	return out, "", ""
}

// breakArgs is pip's break_args_options: the words before the first one that starts with
// "-" (split at single spaces, as pip splits) are the requirement, the rest its options.
func breakArgs(line string) (args, opts string) {
	toks := strings.Split(line, " ")
	for i, t := range toks {
		if strings.HasPrefix(t, "-") {
			return strings.Join(toks[:i], " "), strings.Join(toks[i:], " ")
		}
	}
	return line, ""
}

// parseRequirements reads a requirements file at file.
func parseRequirements(ctx context.Context, file string, content []byte) (*Manifest, error) {
	m := &Manifest{}
	r := &pyReader{file: file, m: m}
	text, err := decodeLikePip(content)
	if err != nil {
		return nil, err
	}
	for _, l := range pipLines(text) {
		args, opts := breakArgs(l.text)
		options, why, detail := splitPipOptions(opts)
		if why != "" {
			r.m.Unread = append(r.m.Unread, Unread{File: r.file, Line: l.n, What: clip(l.text, 200), Why: "pip would refuse the line: " + why, Detail: detail})
			continue
		}
		if args != "" {
			for _, o := range options {
				if !perRequirement[o.name] {
					r.unread(l.n, l.text, "pip ignores the option "+o.name+" on a requirement's line")
				}
			}
			r.requirement(reqLine{n: l.n, text: args})
			continue
		}
		if e := editableOf(options); e != "" {
			// pip takes the line for an editable requirement and ignores its other options.
			r.requirement(reqLine{n: l.n, text: e, editable: true})
			continue
		}
		for _, o := range options {
			switch o.name {
			case "--requirement", "--constraint":
				if pipURLSchemes.MatchString(o.value) && !strings.HasPrefix(strings.ToLower(o.value), "file:") {
					// pip downloads it when it runs: nothing frognano can read offline.
					m.Settings = append(m.Settings, Setting{Name: o.name, Value: RedactURL(o.value), Line: l.n, Index: true})
					r.unread(l.n, o.name+" "+RedactURL(o.value), "pip downloads this file when it runs; frognano reads only the repository")
					continue
				}
				p := o.value
				if v, ok := strings.CutPrefix(p, "file:"); ok {
					p = v
					if strings.HasPrefix(v, "//") {
						p = "/" // file://HOST/PATH: an absolute path
					}
				}
				m.Includes = append(m.Includes, Include{Path: p, Constraint: o.name == "--constraint", Line: l.n, What: o.name + " " + clip(o.value, 200)})
			case "--index-url", "--extra-index-url", "--find-links", "--trusted-host":
				v := o.value
				if o.name != "--trusted-host" {
					v = RedactURL(v)
				}
				m.Settings = append(m.Settings, Setting{Name: o.name, Value: clip(v, maxWhere), Line: l.n, Index: true})
			case "--hash", "--global-option", "--config-settings":
				r.unread(l.n, l.text, "the option "+o.name+" belongs on a requirement's line")
			default:
				m.Settings = append(m.Settings, Setting{Name: o.name, Value: clip(o.value, 200), Line: l.n})
			}
		}
	}
	if err := r.finish(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// editableOf returns the last --editable value of a line's options, "" when there is none.
func editableOf(opts []pipOpt) string {
	e := ""
	for _, o := range opts {
		if o.name == "--editable" && o.value != "" {
			e = o.value
		}
	}
	return e
}

// decodeLikePip decodes a requirements file as pip does (pip's auto_decode): a byte order mark
// names the encoding (UTF-8, UTF-16 or UTF-32, either byte order) and is not part of the text;
// without one the file is read as UTF-8. Before, a requirements file in UTF-16 was read as
// bytes (every line unread, its new index no finding), and a UTF-8 one with a BOM hid its
// first line's --extra-index-url as "not a requirement pip reads", both of which pip follows.
// (pip also honours a "# -*- coding: NAME -*-" line for other encodings: such a file's lines
// are read as UTF-8 and what does not read is listed as unread.)
func decodeLikePip(b []byte) (string, error) {
	switch {
	case bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}):
		return string(b[3:]), nil
	case bytes.HasPrefix(b, []byte{0xff, 0xfe, 0, 0}):
		return decodeUTF32(b[4:], binary.LittleEndian)
	case bytes.HasPrefix(b, []byte{0, 0, 0xfe, 0xff}):
		return decodeUTF32(b[4:], binary.BigEndian)
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}):
		return decodeUTF16(b[2:], binary.LittleEndian)
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}):
		return decodeUTF16(b[2:], binary.BigEndian)
	}
	return string(b), nil
}

func decodeUTF16(b []byte, order binary.ByteOrder) (string, error) {
	if len(b)%2 != 0 {
		return "", errors.New("its UTF-16 text has an odd number of bytes")
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		units[i] = order.Uint16(b[2*i:])
	}
	return string(utf16.Decode(units)), nil
}

func decodeUTF32(b []byte, order binary.ByteOrder) (string, error) {
	if len(b)%4 != 0 {
		return "", errors.New("its UTF-32 text has a number of bytes that is not a multiple of 4")
	}
	rs := make([]rune, len(b)/4)
	for i := range rs {
		rs[i] = rune(order.Uint32(b[4*i:]))
	}
	return string(rs), nil
}

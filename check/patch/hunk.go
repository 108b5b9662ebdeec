package patch

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// textChange reads the "---"/"+++" lines and every "@@" hunk of one file.
func (p *parser) textChange(h *header, f *File) error {
	var err error
	h.minus, h.minusNull, err = fileLine(p.peek(), "--- ", "a/")
	if err != nil {
		return p.errorf("reading %q line: %v", "---", err)
	}
	h.haveMinus = true
	p.next()
	h.plus, h.plusNull, err = fileLine(p.peek(), "+++ ", "b/")
	if err != nil {
		return p.errorf("reading %q line: %v", "+++", err)
	}
	h.havePlus = true
	p.next()
	if !strings.HasPrefix(p.peek(), "@@ ") {
		return p.errorf("expected a hunk after the file names, got %s", quote(p.peek()))
	}
	for strings.HasPrefix(p.peek(), "@@ ") {
		if err := p.hunk(f); err != nil {
			return err
		}
	}
	return nil
}

// fileLine parses "--- a/NAME", "+++ b/NAME" or "/dev/null". Git adds a tab after a
// name that contains a space, so one trailing tab is dropped.
func fileLine(line, lead, prefix string) (name string, null bool, err error) {
	rest, ok := strings.CutPrefix(line, lead)
	if !ok {
		return "", false, fmt.Errorf("missing %q", lead)
	}
	if rest == "/dev/null" {
		return "", true, nil
	}
	rest = strings.TrimSuffix(rest, "\t")
	if name, err = parseName(rest); err != nil {
		return "", false, err
	}
	name, ok = strings.CutPrefix(name, prefix)
	if !ok || name == "" {
		return "", false, fmt.Errorf("name %s lacks the %q prefix", quote(rest), prefix)
	}
	return name, false, nil
}

// maxHunkLines bounds a hunk's declared size so arithmetic on it cannot overflow.
const maxHunkLines = 1 << 30

// hunk reads one "@@ -a,b +c,d @@" hunk and exactly the lines its header declares.
func (p *parser) hunk(f *File) error {
	oldN, newN, err := hunkHeader(p.peek())
	if err != nil {
		return p.errorf("reading hunk header: %v", err)
	}
	p.next()
	symlink := f.NewMode == ModeSymlink
	lastContent := false
	for oldN > 0 || newN > 0 || strings.HasPrefix(p.peek(), `\`) {
		if p.eof() {
			return p.errorf("patch ends inside a hunk")
		}
		line := p.peek()
		c := byte(' ')
		if line != "" {
			c = line[0]
		}
		switch {
		case c == ' ' && oldN > 0 && newN > 0:
			// An empty line is a context line whose space was stripped; git apply
			// accepts it, so we count it the same way.
			oldN--
			newN--
			if symlink {
				f.symlinkLines++
				f.SymlinkTarget = strings.TrimPrefix(line, " ")
			}
		case c == '-' && oldN > 0:
			oldN--
			f.Deleted++
		case c == '+' && newN > 0:
			newN--
			f.Added++
			if symlink {
				f.symlinkLines++
				f.SymlinkTarget = line[1:]
			}
		case c == '\\' && lastContent:
			// "\ No newline at end of file" applies to the line before it.
			lastContent = false
			p.next()
			continue
		default:
			return p.errorf("hunk line %s does not fit the hunk header", quote(line))
		}
		lastContent = true
		p.next()
	}
	return nil
}

func hunkHeader(line string) (oldN, newN int, err error) {
	rest, ok := strings.CutPrefix(line, "@@ -")
	if !ok {
		return 0, 0, fmt.Errorf("bad hunk header %s", quote(line))
	}
	ranges, _, ok := strings.Cut(rest, " @@")
	if !ok {
		return 0, 0, fmt.Errorf("unterminated hunk header %s", quote(line))
	}
	o, n, ok := strings.Cut(ranges, " +")
	if !ok {
		return 0, 0, fmt.Errorf("bad hunk ranges %s", quote(ranges))
	}
	if oldN, err = hunkRange(o); err != nil {
		return 0, 0, err
	}
	if newN, err = hunkRange(n); err != nil {
		return 0, 0, err
	}
	return oldN, newN, nil
}

// hunkRange parses "start[,count]"; a missing count means 1.
func hunkRange(s string) (int, error) {
	start, count, hasCount := strings.Cut(s, ",")
	if _, err := atoi(start); err != nil {
		return 0, fmt.Errorf("bad hunk start %s", quote(s))
	}
	if !hasCount {
		return 1, nil
	}
	n, err := atoi(count)
	if err != nil {
		return 0, fmt.Errorf("bad hunk count %s", quote(s))
	}
	return n, nil
}

func atoi(s string) (int, error) {
	if s == "" || len(s) > 10 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a number")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > maxHunkLines {
		return 0, fmt.Errorf("number out of range")
	}
	return n, nil
}

// binaryChange reads the forward and (optional) reverse parts of a "GIT binary patch":
// "literal N" or "delta N", base85 lines, then an empty line. The data is checked for
// shape only; git apply verifies it against the object ids.
func (p *parser) binaryChange() error {
	for part := 0; part < 2; part++ {
		line := p.peek()
		kind, size, ok := strings.Cut(line, " ")
		if (kind != "literal" && kind != "delta") || !ok {
			if part == 1 {
				return nil // git apply accepts a patch without the reverse part
			}
			return p.errorf("expected %q or %q, got %s", "literal N", "delta N", quote(line))
		}
		n, err := atoi(size)
		if err != nil {
			return p.errorf("bad binary size %s", quote(size))
		}
		start := p.line
		p.next()
		var data []string
		for {
			if p.eof() {
				return p.errorf("patch ends inside binary data")
			}
			line := p.peek()
			p.next()
			if line == "" {
				break
			}
			if err := base85Line(line); err != nil {
				return &ParseError{Line: p.line, Msg: err.Error()}
			}
			data = append(data, line)
		}
		if len(data) == 0 {
			return &ParseError{Line: p.line, Msg: "binary part without data"}
		}
		// What git will inflate: a literal's size is given; a delta's result size is in the
		// delta's own header (a small delta can copy the base over and over into a huge file).
		out := int64(n)
		if kind == "delta" {
			if out, err = deltaResultSize(data); err != nil {
				return &ParseError{Line: start + 1, Msg: "binary delta: " + err.Error()}
			}
		}
		if p.binary += out; p.binary > MaxBinaryBytes {
			return &ParseError{Line: start + 1, Msg: fmt.Sprintf("the patch's binary data would be over %d MiB once git inflates it", MaxBinaryBytes>>20)}
		}
	}
	return nil
}

// base85Line checks one line of git's base85 encoding: a length character ('A'-'Z'
// for 1-26 bytes, 'a'-'z' for 27-52) and five characters per four bytes.
func base85Line(line string) error {
	c := line[0]
	var n int
	switch {
	case c >= 'A' && c <= 'Z':
		n = int(c-'A') + 1
	case c >= 'a' && c <= 'z':
		n = int(c-'a') + 27
	default:
		return fmt.Errorf("bad binary line length %s", quote(line[:1]))
	}
	if len(line)-1 != (n+3)/4*5 {
		return fmt.Errorf("binary line has %d characters for %d bytes", len(line)-1, n)
	}
	for i := 1; i < len(line); i++ {
		if !strings.ContainsRune(base85Alphabet, rune(line[i])) {
			return fmt.Errorf("bad base85 character %s", quote(line[i:i+1]))
		}
	}
	return nil
}

const base85Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// MaxBinaryBytes bounds what git inflates from a patch's binary parts, all of them together:
// a patch of a few KiB can describe a file of a GiB, which git would build in memory on the
// host (and Publish would read).
const MaxBinaryBytes = 16 << 20

// deltaResultSize decodes a "delta" part's base85 lines and returns the size of the file the
// delta makes: the second number of the inflated delta's header (git's varints, after the
// base's size). Only the header is inflated.
func deltaResultSize(lines []string) (int64, error) {
	var raw []byte
	for _, l := range lines {
		b, err := base85Decode(l)
		if err != nil {
			return 0, err
		}
		raw = append(raw, b...)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return 0, fmt.Errorf("not zlib data")
	}
	defer zr.Close()
	head := make([]byte, 20)
	n, _ := io.ReadFull(zr, head)
	head = head[:n]
	varint := func() (int64, error) {
		var v int64
		for shift := uint(0); shift < 63; shift += 7 {
			if len(head) == 0 {
				return 0, fmt.Errorf("header cut short")
			}
			c := head[0]
			head = head[1:]
			v |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, nil
			}
		}
		return 0, fmt.Errorf("size out of range")
	}
	if _, err := varint(); err != nil { // the base's size
		return 0, err
	}
	return varint()
}

// base85Decode decodes one line base85Line accepted.
func base85Decode(line string) ([]byte, error) {
	c := line[0]
	n := int(c-'A') + 1
	if c >= 'a' {
		n = int(c-'a') + 27
	}
	var out []byte
	for i := 1; i+5 <= len(line); i += 5 {
		var acc uint64
		for _, ch := range line[i : i+5] {
			acc = acc*85 + uint64(strings.IndexRune(base85Alphabet, ch))
		}
		if acc > 0xffffffff {
			return nil, fmt.Errorf("bad base85 group")
		}
		out = append(out, byte(acc>>24), byte(acc>>16), byte(acc>>8), byte(acc))
	}
	if len(out) < n {
		return nil, fmt.Errorf("binary line too short")
	}
	return out[:n], nil
}

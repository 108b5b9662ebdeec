package executor

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// CPython decodes UTF-8 by "maximal subparts": an invalid sequence is replaced by one U+FFFD
// per longest prefix that could have started a valid character, where Go's decoder emits one
// per byte. The observations must show what Python showed, so the decoder is written here.

// utf8Unit classifies the bytes at the start of p. It returns the length of the next unit
// (a whole character, or the maximal invalid subpart), whether it is valid, and for an
// invalid unit the reason CPython reports. incomplete is true when p ends inside a sequence
// that is still a valid prefix (more input may complete it).
func utf8Unit(p []byte) (size int, valid bool, reason string, incomplete bool) {
	b := p[0]
	if b < 0x80 {
		return 1, true, "", false
	}
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case b >= 0xC2 && b <= 0xDF:
		need = 1
	case b == 0xE0:
		need, lo = 2, 0xA0
	case b >= 0xE1 && b <= 0xEC, b == 0xEE, b == 0xEF:
		need = 2
	case b == 0xED:
		need, hi = 2, 0x9F
	case b == 0xF0:
		need, lo = 3, 0x90
	case b >= 0xF1 && b <= 0xF3:
		need = 3
	case b == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1, false, "invalid start byte", false
	}
	for i := 1; i <= need; i++ {
		if i >= len(p) {
			return i, false, "unexpected end of data", true
		}
		if p[i] < lo || p[i] > hi {
			return i, false, "invalid continuation byte", false
		}
		lo, hi = 0x80, 0xBF
	}
	return need + 1, true, "", false
}

// decodeReplace is bytes.decode("utf-8", errors="replace").
func decodeReplace(p []byte) string {
	if utf8.Valid(p) {
		return string(p)
	}
	var b strings.Builder
	b.Grow(len(p) + 16)
	for len(p) > 0 {
		n, ok, _, _ := utf8Unit(p)
		if ok {
			b.Write(p[:n])
		} else {
			b.WriteRune(utf8.RuneError)
		}
		p = p[n:]
	}
	return b.String()
}

// translateNewlines is Python's universal-newlines translation on read: "\r\n" and "\r"
// both become "\n".
func translateNewlines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// splitLines is str.splitlines(): every Unicode line boundary Python knows, no empty
// last element for a trailing terminator.
func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			lines = append(lines, s[start:i])
			start = i + size
		case '\r':
			lines = append(lines, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				size++
			}
			start = i + size
		}
		i += size
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// truncateChars is the reference's _truncate: cut at limit characters (code points, as
// Python's len and slicing count them) and say how many were dropped.
func truncateChars(s string, limit int) string {
	if limit <= 0 {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	return fmt.Sprintf("%s\n[truncated %d chars]", prefixRunes(s, limit), n-limit)
}

// prefixRunes returns the first n runes of s.
func prefixRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// streamDecoder follows a byte stream of unknown length the way CPython would decode it
// whole, without keeping it: it counts characters (with errors="replace" semantics),
// counts "\r\n" pairs (so the length after newline translation is known) and remembers
// the first strict-mode error as UnicodeDecodeError would report it.
type streamDecoder struct {
	carry  []byte // an incomplete sequence waiting for more bytes
	pos    int64  // stream offset of carry[0] (or of the next byte when carry is empty)
	units  int64  // characters, one U+FFFD per maximal invalid subpart
	crlf   int64  // "\r\n" pairs
	lastCR bool
	err    string // first strict-mode error, without the type name
}

func (d *streamDecoder) write(p []byte) {
	if len(d.carry) > 0 {
		// Complete the carried sequence with up to 3 new bytes, then continue in p.
		take := min(len(p), 4-len(d.carry))
		buf := append(append([]byte(nil), d.carry...), p[:take]...)
		n, valid, reason, incomplete := utf8Unit(buf)
		if incomplete && take == len(p) {
			d.carry = buf
			return
		}
		d.unit(buf[:n], valid, reason)
		consumed := n - len(d.carry)
		d.carry = nil
		p = p[consumed:]
	}
	for len(p) > 0 {
		if p[0] < 0x80 { // fast path for ASCII
			d.ascii(p[0])
			p = p[1:]
			continue
		}
		n, valid, reason, incomplete := utf8Unit(p)
		if incomplete {
			d.carry = append([]byte(nil), p...)
			return
		}
		d.unit(p[:n], valid, reason)
		p = p[n:]
	}
}

func (d *streamDecoder) ascii(b byte) {
	d.units++
	if b == '\n' && d.lastCR {
		d.crlf++
	}
	d.lastCR = b == '\r'
	d.pos++
}

func (d *streamDecoder) unit(u []byte, valid bool, reason string) {
	if len(u) == 1 && u[0] < 0x80 {
		d.ascii(u[0])
		return
	}
	if !valid && d.err == "" {
		d.err = decodeErrorText(u, d.pos, reason)
	}
	d.units++
	d.lastCR = false
	d.pos += int64(len(u))
}

// close ends the stream: a carried incomplete sequence is an "unexpected end of data".
func (d *streamDecoder) close() {
	if len(d.carry) > 0 {
		d.unit(d.carry, false, "unexpected end of data")
		d.carry = nil
	}
}

// decodeErrorText renders str(UnicodeDecodeError) for the unit u found at offset pos.
func decodeErrorText(u []byte, pos int64, reason string) string {
	if len(u) == 1 {
		return fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", u[0], pos, reason)
	}
	return fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s", pos, pos+int64(len(u))-1, reason)
}

package executor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The reference reads the model's arguments with Python's json.loads (agent.py's
// _parse_arguments), so this is a port of CPython 3.11's json scanner rather than
// encoding/json, which differs where a small model's output goes: json.loads accepts NaN,
// Infinity and -Infinity, refuses trailing data ("Extra data") whatever it is, keeps a lone
// surrogate escape such as "\ud800", and turns an integer literal longer than 4,300
// digits or nesting deeper than the interpreter's recursion limit into an exception that
// the reference does not catch.
//
// Three outcomes follow the reference:
//   - a JSONDecodeError (any syntax error) or a value that is not an object: the call runs
//     with {} and the model sees the tool's own complaint;
//   - an exception the reference does not catch while it prepares the call (the digit
//     limit, RecursionError, and a lone surrogate, which its UTF-8 request file cannot
//     hold): the reference ends the run with tool_error and that text as the error. frognano
//     instead answers with the same text as the observation (docs/leaf-protocol.md,
//     section 10), so a run does not end over one odd argument;
//   - otherwise the object, with Python's key order and last-value-wins duplicates.

// jsonRecursionLimit is where the reference's json.loads raises RecursionError. Python's
// limit is 1,000 frames, shared with the frames of the agent loop that called json.loads,
// so the exact depth depends on the reference's call stack: a few dozen levels below 1,000.
const jsonRecursionLimit = 980

// maxIntDigits is Python 3.11's sys.get_int_max_str_digits() default.
const maxIntDigits = 4300

// errSyntax is any JSONDecodeError: the reference then uses {}.
var errSyntax = fmt.Errorf("json syntax error")

type jsonParser struct {
	s     string
	i     int
	depth int
	fatal error // an exception the reference does not catch (a toolError)
}

// parseArguments is parseCall for callers that only need the dict.
func parseArguments(raw string) *pyDict {
	d, _ := parseCall(raw)
	return d
}

// parseCall parses raw as the reference's _parse_arguments does. It returns the arguments
// dict ({} for anything but an object) and, separately, the exception json.loads raises
// that _parse_arguments does not catch.
func parseCall(raw string) (*pyDict, error) {
	empty := &pyDict{vals: map[string]any{}}
	if raw == "" {
		return empty, nil
	}
	if strings.HasPrefix(raw, "\ufeff") {
		return empty, nil // "Unexpected UTF-8 BOM"
	}
	p := &jsonParser{s: raw}
	p.skipSpace()
	v, err := p.value()
	if p.fatal != nil {
		return empty, p.fatal
	}
	if err != nil {
		return empty, nil
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return empty, nil // "Extra data"
	}
	d, ok := v.(*pyDict)
	if !ok {
		return empty, nil
	}
	return d, nil
}

// skipSpace skips JSON whitespace: only space, tab, LF and CR.
func (p *jsonParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) hasPrefix(lit string) bool { return strings.HasPrefix(p.s[p.i:], lit) }

func (p *jsonParser) value() (any, error) {
	if p.i >= len(p.s) {
		return nil, errSyntax
	}
	switch c := p.s[p.i]; c {
	case '"':
		p.i++
		return p.str()
	case '{':
		if err := p.enter("object"); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		p.i++
		return p.object()
	case '[':
		if err := p.enter("array"); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		p.i++
		return p.array()
	case 'n':
		if p.hasPrefix("null") {
			p.i += 4
			return nil, nil
		}
	case 't':
		if p.hasPrefix("true") {
			p.i += 4
			return true, nil
		}
	case 'f':
		if p.hasPrefix("false") {
			p.i += 5
			return false, nil
		}
	case 'N':
		if p.hasPrefix("NaN") {
			p.i += 3
			return math.NaN(), nil
		}
	case 'I':
		if p.hasPrefix("Infinity") {
			p.i += 8
			return math.Inf(1), nil
		}
	case '-':
		if p.hasPrefix("-Infinity") {
			p.i += 9
			return math.Inf(-1), nil
		}
		return p.number()
	default:
		if c >= '0' && c <= '9' {
			return p.number()
		}
	}
	return nil, errSyntax
}

func (p *jsonParser) enter(kind string) error {
	p.depth++
	if p.depth > jsonRecursionLimit {
		p.fatal = pyError("RecursionError", "maximum recursion depth exceeded while decoding a JSON "+kind+" from a unicode string")
		return p.fatal
	}
	return nil
}

// number matches (-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)? with ASCII digits only,
// backing off a "." or "e" that no digit follows, as the C scanner does.
func (p *jsonParser) number() (any, error) {
	start := p.i
	digits := func(j int) int {
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		return j
	}
	j := p.i
	if p.s[j] == '-' {
		j++
	}
	switch {
	case j < len(p.s) && p.s[j] == '0':
		j++
	case j < len(p.s) && p.s[j] >= '1' && p.s[j] <= '9':
		j = digits(j + 1)
	default:
		return nil, errSyntax
	}
	isFloat := false
	if j+1 < len(p.s) && p.s[j] == '.' && p.s[j+1] >= '0' && p.s[j+1] <= '9' {
		j = digits(j + 2)
		isFloat = true
	}
	if j < len(p.s) && (p.s[j] == 'e' || p.s[j] == 'E') {
		k := j + 1
		if k < len(p.s) && (p.s[k] == '-' || p.s[k] == '+') {
			k++
		}
		if e := digits(k); e > k {
			j = e
			isFloat = true
		}
	}
	p.i = j
	text := p.s[start:j]
	if isFloat {
		// The syntax is checked above; out of range is ±inf or ±0.0, as in Python.
		f, _ := strconv.ParseFloat(text, 64)
		return f, nil
	}
	n := strings.TrimPrefix(text, "-")
	if len(n) > maxIntDigits {
		p.fatal = intDigitsError(len(n))
		return nil, p.fatal
	}
	if text == "-0" {
		text = "0"
	}
	return pyInt(text), nil
}

// intDigitsError is the ValueError of int() on a decimal string over the digit limit.
func intDigitsError(n int) error {
	return pyError("ValueError", fmt.Sprintf("Exceeds the limit (%d digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", maxIntDigits, n))
}

// str reads a string after its opening quote (strict mode: no raw control characters). A
// lone surrogate escape is kept, encoded as its three WTF-8 bytes, so that surrogateCheck
// can report it where the reference's request file fails.
func (p *jsonParser) str() (string, error) {
	var b strings.Builder
	for {
		j := p.i
		for j < len(p.s) && p.s[j] != '"' && p.s[j] != '\\' && p.s[j] >= 0x20 {
			j++
		}
		b.WriteString(p.s[p.i:j])
		p.i = j
		if j >= len(p.s) || p.s[j] < 0x20 {
			return "", errSyntax // unterminated, or "Invalid control character"
		}
		p.i++
		if p.s[j] == '"' {
			return b.String(), nil
		}
		if p.i >= len(p.s) {
			return "", errSyntax
		}
		esc := p.s[p.i]
		p.i++
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", errSyntax
			}
			if r >= 0xD800 && r <= 0xDBFF && p.hasPrefix(`\u`) {
				save := p.i
				p.i += 2
				if lo, ok := p.hex4(); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					b.WriteRune(0x10000 + (r-0xD800)<<10 + (lo - 0xDC00))
					continue
				}
				p.i = save
			}
			if r >= 0xD800 && r <= 0xDFFF {
				b.WriteString(wtf8Surrogate(r))
				continue
			}
			b.WriteRune(r)
		default:
			return "", errSyntax // "Invalid \\escape"
		}
	}
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	p.i += 4
	return r, true
}

func wtf8Surrogate(r rune) string {
	return string([]byte{0xED, byte(0x80 | (r>>6)&0x3F), byte(0x80 | r&0x3F)})
}

// isWTF8Surrogate reports whether s starts with an encoded surrogate.
func isWTF8Surrogate(s string) bool {
	return len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF
}

func (p *jsonParser) object() (any, error) {
	d := &pyDict{vals: map[string]any{}}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return d, nil
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, errSyntax
		}
		p.i++
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, errSyntax
		}
		p.i++
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if _, seen := d.vals[key]; !seen {
			d.keys = append(d.keys, key)
		}
		d.vals[key] = v
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, errSyntax
		}
		switch p.s[p.i] {
		case '}':
			p.i++
			return d, nil
		case ',':
			p.i++
			p.skipSpace()
		default:
			return nil, errSyntax
		}
	}
}

func (p *jsonParser) array() (any, error) {
	list := []any{}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return list, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		list = append(list, v)
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, errSyntax
		}
		switch p.s[p.i] {
		case ']':
			p.i++
			return list, nil
		case ',':
			p.i++
			p.skipSpace()
		default:
			return nil, errSyntax
		}
	}
}

// surrogateCheck finds the first lone surrogate in the reference's request file,
// json.dumps({"tool": name, "args": d, "workdir": ...}, ensure_ascii=False), and returns the
// UnicodeEncodeError that writing it as UTF-8 raises, or nil.
func surrogateCheck(name string, d *pyDict) error {
	if !hasSurrogate(d) {
		return nil
	}
	var b strings.Builder
	b.WriteString(`{"tool": `)
	dumpString(&b, name)
	b.WriteString(`, "args": `)
	dumpJSON(&b, d)
	text := b.String()
	pos := 0
	for i := 0; i < len(text); {
		if isWTF8Surrogate(text[i:]) {
			end := pos + 1
			j := i + 3
			for isWTF8Surrogate(text[j:]) {
				end++
				j += 3
			}
			if end == pos+1 {
				r := rune(text[i+1]&0x3F)<<6 | rune(text[i+2]&0x3F) | 0xD000
				return pyError("UnicodeEncodeError", fmt.Sprintf("'utf-8' codec can't encode character '\\u%04x' in position %d: surrogates not allowed", r, pos))
			}
			return pyError("UnicodeEncodeError", fmt.Sprintf("'utf-8' codec can't encode characters in position %d-%d: surrogates not allowed", pos, end-1))
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		pos++
	}
	return nil
}

func hasSurrogate(v any) bool {
	switch t := v.(type) {
	case string:
		for i := 0; i+2 < len(t); i++ {
			if isWTF8Surrogate(t[i:]) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasSurrogate(e) {
				return true
			}
		}
	case *pyDict:
		for _, k := range t.keys {
			if hasSurrogate(k) || hasSurrogate(t.vals[k]) {
				return true
			}
		}
	}
	return false
}

// dumpJSON is json.dumps(v, ensure_ascii=False) with its default separators.
func dumpJSON(b *strings.Builder, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case pyInt:
		b.WriteString(string(t))
	case float64:
		switch {
		case math.IsNaN(t):
			b.WriteString("NaN")
		case math.IsInf(t, 1):
			b.WriteString("Infinity")
		case math.IsInf(t, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(pyFloatRepr(t))
		}
	case string:
		dumpString(b, t)
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			dumpJSON(b, e)
		}
		b.WriteByte(']')
	case *pyDict:
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			dumpString(b, k)
			b.WriteString(": ")
			dumpJSON(b, t.vals[k])
		}
		b.WriteByte('}')
	}
}

// dumpString writes a JSON string the way json.dumps(ensure_ascii=False) does: only the
// quote, the backslash and control characters are escaped.
func dumpString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

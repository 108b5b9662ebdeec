package executor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The reference executor is Python: it receives the model's arguments as a dict built by
// json.loads and applies str(), int(), float() and truthiness to whatever JSON type the
// model sent. This file models those JSON values the way Python sees them, so that odd
// arguments ("offset": "5", "content": null, "replace_all": 1) behave as in training.

// pyInt is a JSON integer literal. Python keeps arbitrary precision, so the literal text
// is kept (canonicalised the way str(int) prints it) rather than parsed into an int64.
type pyInt string

// pyDict is a JSON object with Python's key order: insertion order, a repeated key
// keeps its first position and takes its last value.
type pyDict struct {
	keys []string
	vals map[string]any
}

func (d *pyDict) get(key string) (any, bool) {
	if d == nil {
		return nil, false
	}
	v, ok := d.vals[key]
	return v, ok
}

// parseArguments turns the model's raw arguments string into a dict. Anything that is not
// one JSON object becomes the empty dict, as in the reference (Leaf rule: the call still runs
// and the model sees the tool's own error).
func parseArguments(raw string) *pyDict {
	empty := &pyDict{vals: map[string]any{}}
	if raw == "" {
		return empty
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return empty
	}
	// Trailing data after the object is an error for json.loads too ("Extra data").
	if _, err := dec.Token(); err == nil || dec.More() {
		return empty
	}
	d, ok := v.(*pyDict)
	if !ok {
		return empty
	}
	return d
}

// maxDepth bounds nesting so hostile arguments cannot exhaust the stack; Python's own
// json module fails with RecursionError near 1000 levels, which the reference turns into {}.
const maxDepth = 900

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("arguments nested deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := &pyDict{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is %T", kt)
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if _, seen := d.vals[key]; !seen {
					d.keys = append(d.keys, key)
				}
				d.vals[key] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return d, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, fmt.Errorf("unexpected delimiter %q", t)
	case json.Number:
		s := string(t)
		if strings.ContainsAny(s, ".eE") {
			// float('1e400') is inf in Python; ParseFloat returns ±Inf with ErrRange then.
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !math.IsInf(f, 0) {
				return nil, fmt.Errorf("parsing number %q: %w", s, err)
			}
			return f, nil
		}
		if s == "-0" {
			s = "0"
		}
		return pyInt(s), nil
	default: // nil, bool, string
		return t, nil
	}
}

// pyTruthy is Python's bool(v).
func pyTruthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case pyInt:
		return t != "0"
	case float64:
		return t != 0
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case *pyDict:
		return len(t.keys) > 0
	}
	return true
}

// pyTypeName is type(v).__name__, used in TypeError messages.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case pyInt:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case *pyDict:
		return "dict"
	}
	return "object"
}

// pyStr is Python's str(v).
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyRepr is Python's repr(v) for the JSON types.
func pyRepr(v any) string {
	switch t := v.(type) {
	case nil:
		return "None"
	case bool:
		if t {
			return "True"
		}
		return "False"
	case pyInt:
		return string(t)
	case float64:
		return pyFloatRepr(t)
	case string:
		return pyStrRepr(t)
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *pyDict:
		parts := make([]string, len(t.keys))
		for i, k := range t.keys {
			parts[i] = pyStrRepr(k) + ": " + pyRepr(t.vals[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// pyStrRepr is repr(str): single quotes unless the text has a single quote and no double
// quote; printable characters kept, others escaped as \xNN, \uNNNN or \UNNNNNNNN.
func pyStrRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		// Python's str.isprintable() is true for letters, marks, numbers, punctuation,
		// symbols and the ASCII space: the same classes as Go's unicode.IsPrint.
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// pyFloatRepr is repr(float): the shortest round-tripping digits, positional notation for
// decimal exponents in [-4, 16), scientific ("1e+16", "1.5e-05") otherwise.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // "-d.ddde±XX"
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
	}
	point := exp + 1 // digits before the decimal point
	switch {
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits)) + ".0"
	default:
		return sign + digits[:point] + "." + digits[point:]
	}
}

// pyStrip is str.strip() with no argument: Python's whitespace set.
func pyStrip(s string) string {
	return strings.TrimFunc(s, pyIsSpace)
}

func pyIsSpace(r rune) bool {
	switch r {
	case 0x1c, 0x1d, 0x1e, 0x1f:
		return true
	}
	return unicode.IsSpace(r)
}

var intLiteral = regexp.MustCompile(`^[+-]?[0-9](?:_?[0-9])*$`)

// pyIntValue is Python's int(v), clamped to ±2^62 (line numbers and limits are the only
// uses; anything that large behaves the same as infinity there). Non-ASCII digits, which
// int() also accepts, are treated as invalid: a deliberate simplification.
func pyIntValue(v any) (int64, error) {
	const clamp = int64(1) << 62
	switch t := v.(type) {
	case bool:
		if t {
			return 1, nil
		}
		return 0, nil
	case pyInt:
		return clampDecimal(string(t), clamp), nil
	case float64:
		switch {
		case math.IsInf(t, 0):
			return 0, pyError("OverflowError", "cannot convert float infinity to integer")
		case math.IsNaN(t):
			return 0, pyError("ValueError", "cannot convert float NaN to integer")
		}
		t = math.Trunc(t)
		return int64(math.Max(math.Min(t, float64(clamp)), -float64(clamp))), nil
	case string:
		s := pyStrip(t)
		if !intLiteral.MatchString(s) {
			return 0, pyError("ValueError", "invalid literal for int() with base 10: "+pyStrRepr(t))
		}
		return clampDecimal(strings.ReplaceAll(s, "_", ""), clamp), nil
	}
	return 0, pyError("TypeError", "int() argument must be a string, a bytes-like object or a real number, not '"+pyTypeName(v)+"'")
}

func clampDecimal(s string, clamp int64) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > clamp || n < -clamp {
		if strings.HasPrefix(s, "-") {
			return -clamp
		}
		return clamp
	}
	return n
}

var floatLiteral = regexp.MustCompile(`^[+-]?(?:(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9](?:_?[0-9])*)(?:[eE][+-]?[0-9](?:_?[0-9])*)?|(?i:inf|infinity|nan))$`)

// pyFloatValue is Python's float(v).
func pyFloatValue(v any) (float64, error) {
	switch t := v.(type) {
	case bool:
		if t {
			return 1, nil
		}
		return 0, nil
	case pyInt:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return 0, pyError("OverflowError", "int too large to convert to float")
		}
		return f, nil
	case float64:
		return t, nil
	case string:
		s := pyStrip(t)
		if !floatLiteral.MatchString(s) {
			return 0, pyError("ValueError", "could not convert string to float: "+pyStrRepr(t))
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
		if err != nil && !math.IsInf(f, 0) {
			return 0, pyError("ValueError", "could not convert string to float: "+pyStrRepr(t))
		}
		return f, nil
	}
	return 0, pyError("TypeError", "float() argument must be a string or a real number, not '"+pyTypeName(v)+"'")
}

// pyLower approximates str.lower() for the truthy-word comparison.
func pyLower(s string) string {
	if !utf8.ValidString(s) {
		s = string(bytes.ToValidUTF8([]byte(s), []byte("\uFFFD")))
	}
	return strings.ToLower(s)
}

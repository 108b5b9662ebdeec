package executor

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"sort"
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

// pyRepr is Python's repr(v) for the JSON values of the model's arguments.
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
		return pyArgRepr(t)
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *pyDict:
		parts := make([]string, len(t.keys))
		for i, k := range t.keys {
			parts[i] = pyArgRepr(k) + ": " + pyRepr(t.vals[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// pyStrRepr is repr(str) of text from the system (a file name, a path): single quotes
// unless the text has a single quote and no double quote; characters Python 3.11 calls
// printable kept, others escaped as \xNN, \uNNNN or \UNNNNNNNN. A byte that is not UTF-8 (a
// file name read from disk) is shown as Python's surrogateescape decoding shows it, \udcNN.
func pyStrRepr(s string) string { return strRepr(s, false) }

// pyArgRepr is repr(str) of a string from the model's arguments. There the parser keeps a
// lone surrogate escape ("\ud800") as its three WTF-8 bytes (pyjson.go), and Python's
// string holds that one code point, so its repr is '\ud800', not the three \udcNN that the
// same bytes read from disk would give.
func pyArgRepr(s string) string { return strRepr(s, true) }

func strRepr(s string, wtf8 bool) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 && wtf8 && isWTF8Surrogate(s[i:]) {
			// A surrogate is never printable, and below U+10000.
			fmt.Fprintf(&b, `\u%04x`, rune(s[i+1]&0x3F)<<6|rune(s[i+2]&0x3F)|0xD000)
			i += 3
			continue
		}
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\udc%02x`, s[i])
			i++
			continue
		}
		i += size
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
		case r < 0x7f || unicode.Is(pyPrintable, r):
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

// pyReprCut is "%.200R" of an argument string: the repr cut after n characters, as int()'s
// error message shows it.
func pyReprCut(s string, n int) string {
	return prefixRunes(pyArgRepr(s), n)
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

// pyIsSpace is str.isspace() for one character.
func pyIsSpace(r rune) bool {
	switch r {
	case 0x1c, 0x1d, 0x1e, 0x1f:
		return true
	}
	return unicode.IsSpace(r)
}

// pyNumberText is what int() and float() parse: CPython first turns every non-ASCII
// whitespace character into a space and every non-ASCII decimal digit (Arabic-Indic,
// fullwidth, ...) into its ASCII digit, other non-ASCII characters into "?", and then strips
// ASCII whitespace only (so "\x1c5" is not a number, "\u00a05" is).
func pyNumberText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case pyIsSpace(r):
			b.WriteByte(' ')
		default:
			if d, ok := pyDecimal(r); ok {
				b.WriteByte(byte('0' + d))
			} else {
				b.WriteByte('?')
			}
		}
	}
	return strings.Trim(b.String(), " \t\n\v\f\r")
}

// pyDecimal is unicodedata.decimal for a non-ASCII character in Python 3.11's tables.
func pyDecimal(r rune) (int, bool) {
	i := sort.Search(len(pyDecimalZeros), func(i int) bool { return pyDecimalZeros[i] > r }) - 1
	if i >= 0 && r-pyDecimalZeros[i] < 10 {
		return int(r - pyDecimalZeros[i]), true
	}
	return 0, false
}

// intPrefix is the run of digits (single underscores between them) after an optional sign
// that int() scans before it checks the digit limit.
var intPrefix = regexp.MustCompile(`^[+-]?([0-9](?:_?[0-9])*)`)

// pyIntValue is Python's int(v), clamped to ±2^62 (line numbers and limits are the only
// uses; anything that large behaves the same as infinity there).
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
		s := pyNumberText(t)
		m := intPrefix.FindStringSubmatch(s)
		if m != nil {
			if n := len(m[1]) - strings.Count(m[1], "_"); n > maxIntDigits {
				return 0, intDigitsError(n)
			}
		}
		if m == nil || len(m[0]) != len(s) {
			return 0, pyError("ValueError", "invalid literal for int() with base 10: "+pyReprCut(t, 200))
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

var floatLiteral = regexp.MustCompile(`^[+-]?(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9](?:_?[0-9])*)(?:[eE][+-]?[0-9](?:_?[0-9])*)?$`)

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
		s := pyNumberText(t)
		sign, word := 1.0, s
		if strings.HasPrefix(word, "-") {
			sign, word = -1, word[1:]
		} else {
			word = strings.TrimPrefix(word, "+")
		}
		// float() takes inf, infinity and nan in any case, signed: "-nan" is a NaN too.
		switch strings.ToLower(word) {
		case "inf", "infinity":
			return math.Inf(int(sign)), nil
		case "nan":
			return math.NaN(), nil
		}
		if !floatLiteral.MatchString(s) {
			return 0, pyError("ValueError", "could not convert string to float: "+pyArgRepr(t))
		}
		// Out of range is ±inf or ±0.0, as in Python.
		f, _ := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
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

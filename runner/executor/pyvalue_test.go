package executor

import (
	"bytes"
	"math"
	"testing"
)

func TestPyFloatRepr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    float64
		want string
	}{
		{1, "1.0"}, {math.Copysign(0, -1), "-0.0"}, {0.1, "0.1"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"},
		{1.5e-5, "1.5e-05"}, {0.0001, "0.0001"}, {123.456, "123.456"}, {1.2345678901234568e+17, "1.2345678901234568e+17"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}, {5e-324, "5e-324"},
	}
	for _, tt := range tests {
		if got := pyFloatRepr(tt.f); got != tt.want {
			t.Errorf("pyFloatRepr(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestPyStrRepr(t *testing.T) {
	t.Parallel()
	tests := []struct{ s, want string }{
		{"abc", "'abc'"},
		{"it's", `"it's"`},
		{`it's "x"`, `'it\'s "x"'`},
		{"a\\b", `'a\\b'`},
		{"\n\r\t\x00\x7f", `'\n\r\t\x00\x7f'`},
		{"\u00a0\u200b\u2028é😀", `'\xa0\u200b\u2028é😀'`},
		{"\U000e0041", `'\U000e0041'`},
	}
	for _, tt := range tests {
		if got := pyStrRepr(tt.s); got != tt.want {
			t.Errorf("pyStrRepr(%q) = %s, want %s", tt.s, got, tt.want)
		}
	}
}

func TestPyNumbers(t *testing.T) {
	t.Parallel()
	ints := []struct {
		v       any
		want    int64
		wantErr string
	}{
		{pyInt("42"), 42, ""}, {" -7 ", -7, ""}, {"1_000", 1000, ""}, {"+3", 3, ""}, {true, 1, ""}, {2.9, 2, ""}, {-2.9, -2, ""},
		{pyInt("99999999999999999999999"), 1 << 62, ""}, {1e300, 1 << 62, ""},
		{"1__0", 0, "ValueError: invalid literal for int() with base 10: '1__0'"},
		{"", 0, "ValueError: invalid literal for int() with base 10: ''"},
		{math.NaN(), 0, "ValueError: cannot convert float NaN to integer"},
		{nil, 0, "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'"},
	}
	for _, tt := range ints {
		got, err := pyIntValue(tt.v)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("int(%#v) error %v, want %q", tt.v, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("int(%#v) = %d, %v; want %d", tt.v, got, err, tt.want)
		}
	}
	floats := []struct {
		v       any
		want    float64
		wantErr string
	}{
		{"1.5", 1.5, ""}, {" 2e3 ", 2000, ""}, {".5", 0.5, ""}, {"5.", 5, ""}, {"1_0.5", 10.5, ""}, {"-Infinity", math.Inf(-1), ""},
		{pyInt("3"), 3, ""}, {false, 0, ""},
		{"0x10", 0, "ValueError: could not convert string to float: '0x10'"},
		{"1e", 0, "ValueError: could not convert string to float: '1e'"},
		{[]any{}, 0, "TypeError: float() argument must be a string or a real number, not 'list'"},
		{&pyDict{}, 0, "TypeError: float() argument must be a string or a real number, not 'dict'"},
	}
	for _, tt := range floats {
		got, err := pyFloatValue(tt.v)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("float(%#v) error %v, want %q", tt.v, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("float(%#v) = %v, %v; want %v", tt.v, got, err, tt.want)
		}
	}
}

func TestTimeoutSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args string
		want float64
	}{
		{`{}`, 120}, {`{"timeout": null}`, 120}, {`{"timeout": 30}`, 30}, {`{"timeout": 1000}`, 1000},
		{`{"timeout": 1001}`, 1.001}, {`{"timeout": 0}`, 0.1}, {`{"timeout": "NaN"}`, 0.1},
		{`{"timeout_ms": 5000}`, 5}, {`{"timeout_ms": 1}`, 0.1}, {`{"timeout_ms": null, "timeout": 7}`, 7},
	}
	for _, tt := range tests {
		got, err := timeoutSeconds(parseArguments(tt.args))
		if err != nil || got != tt.want {
			t.Errorf("timeoutSeconds(%s) = %v, %v; want %v", tt.args, got, err, tt.want)
		}
	}
}

func TestTextHelpers(t *testing.T) {
	t.Parallel()
	lines := []struct {
		s    string
		want []string
	}{
		{"", nil}, {"a", []string{"a"}}, {"a\n", []string{"a"}}, {"a\n\nb", []string{"a", "", "b"}},
		{"a\r\nb\rc", []string{"a", "b", "c"}}, {"a\x1db\u2029c\fd", []string{"a", "b", "c", "d"}},
	}
	for _, tt := range lines {
		got := splitLines(tt.s)
		if len(got) != len(tt.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tt.s, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("splitLines(%q) = %q, want %q", tt.s, got, tt.want)
			}
		}
	}
	decodes := []struct{ in, want string }{
		{"ok", "ok"}, {"\xff", "\uFFFD"}, {"a\xe2\x82A", "a\uFFFDA"}, {"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"\xf0\x90\x80", "\uFFFD"}, {"\xc0\xaf", "\uFFFD\uFFFD"}, {"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	}
	for _, tt := range decodes {
		if got := decodeReplace([]byte(tt.in)); got != tt.want {
			t.Errorf("decodeReplace(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	truncs := []struct {
		s     string
		limit int
		want  string
	}{
		{"abc", 3, "abc"}, {"abcd", 3, "abc\n[truncated 1 chars]"}, {"éééé", 2, "éé\n[truncated 2 chars]"}, {"abc", 0, "abc"},
	}
	for _, tt := range truncs {
		if got := truncateChars(tt.s, tt.limit); got != tt.want {
			t.Errorf("truncateChars(%q, %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
}

// FuzzStreamDecoder checks that decoding a stream in arbitrary pieces counts what decoding
// it whole produces, and reports the same first error.
func FuzzStreamDecoder(f *testing.F) {
	for _, seed := range []string{"", "ascii", "é😀\r\n\r", "a\xe2\x82A", "\xed\xa0\x80", "x\xf0\x90\x80", "\xff\xfe", "\r\n\r\n\n\r"} {
		f.Add([]byte(seed), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		var whole, pieces streamDecoder
		whole.write(data)
		whole.close()
		n := int(step)%7 + 1
		for i := 0; i < len(data); i += n {
			pieces.write(data[i:min(len(data), i+n)])
		}
		pieces.close()
		if whole.units != pieces.units || whole.crlf != pieces.crlf || whole.err != pieces.err {
			t.Fatalf("whole %+v, pieces of %d %+v", whole, n, pieces)
		}
		text := decodeReplace(data)
		if got := int64(len([]rune(text))); got != whole.units {
			t.Fatalf("decodeReplace has %d characters, decoder counted %d", got, whole.units)
		}
		if got := int64(len([]rune(translateNewlines(text)))); whole.err == "" && got != whole.units-whole.crlf {
			t.Fatalf("translated text has %d characters, decoder says %d", got, whole.units-whole.crlf)
		}
		if (whole.err == "") != bytes.Equal([]byte(text), data) {
			t.Fatalf("error %q but decode changed=%v", whole.err, !bytes.Equal([]byte(text), data))
		}
	})
}

// TestPyArgRepr: the same three bytes are one lone surrogate in a string the model sent
// (json.loads keeps "\ud800") and three undecodable bytes in a file name read from disk
// (os.fsdecode's surrogateescape); repr() shows each as Python holds it.
func TestPyArgRepr(t *testing.T) {
	t.Parallel()
	lone := wtf8Surrogate(0xD800)
	if got, want := pyArgRepr("a"+lone+wtf8Surrogate(0xDC80)+"é"), `'a\ud800\udc80é'`; got != want {
		t.Errorf("pyArgRepr = %s, want %s", got, want)
	}
	if got, want := pyStrRepr(lone), `'\udced\udca0\udc80'`; got != want {
		t.Errorf("pyStrRepr = %s, want %s", got, want)
	}
	// An invalid byte that is not a WTF-8 surrogate stays \udcNN in both.
	if got, want := pyArgRepr("\xff"), `'\udcff'`; got != want {
		t.Errorf("pyArgRepr(\\xff) = %s, want %s", got, want)
	}
}

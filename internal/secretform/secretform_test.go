package secretform

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// value is a made-up secret with characters that URL and JSON encode differently.
const value = "tok/en+va<l>ue&=1234"

// encodings are the ways a program (a setup script, a model) writes a value it means to hide
// from a plain search, each with the form a Matcher must name.
var encodings = []struct {
	name string
	form string
	text func(prefix, v string) string // the value after prefix, as the program writes it
}{
	{"Raw", AsIs, func(p, v string) string { return p + v }},
	{"JSON", AsJSON, func(p, v string) string {
		return strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(p + v)
	}},
	{"Base64", Base64, func(p, v string) string { return base64.StdEncoding.EncodeToString([]byte(p + v)) }},
	{"Base64Raw", Base64, func(p, v string) string { return base64.RawStdEncoding.EncodeToString([]byte(p + v)) }},
	{"Base64URL", Base64URL, func(p, v string) string { return base64.URLEncoding.EncodeToString([]byte(p + v)) }},
	{"Hex", Hex, func(p, v string) string { return hex.EncodeToString([]byte(p + v)) }},
	{"HexUpper", HexUpper, func(p, v string) string { return strings.ToUpper(hex.EncodeToString([]byte(p + v))) }},
	{"Query", URLEncoded, func(p, v string) string { return url.QueryEscape(p + v) }},
	{"Path", URLEncoded, func(p, v string) string { return url.PathEscape(p + v) }},
	{"UTF16LE", UTF16, func(p, v string) string { return utf16Bytes(p+v, binary.LittleEndian) }},
	{"UTF16LEWithBOM", UTF16, func(p, v string) string { return "\xff\xfe" + utf16Bytes(p+v, binary.LittleEndian) }},
	{"UTF16BE", UTF16, func(p, v string) string { return utf16Bytes(p+v, binary.BigEndian) }},
	{"EveryByte", PercentBytes, func(p, v string) string {
		var b strings.Builder
		for i := range len(p + v) {
			b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{(p + v)[i]})))
		}
		return b.String()
	}},
}

// utf16Bytes is s in UTF-16, as a Windows tool writes a text file.
func utf16Bytes(s string, order binary.AppendByteOrder) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = order.AppendUint16(b, u)
	}
	return string(b)
}

// TestMatcherFindsEveryEncoding: the value is found in each encoding, whatever precedes it in
// the encoded text (every base64 alignment) and whatever follows, and the match names the
// secret and the form, never the value.
func TestMatcherFindsEveryEncoding(t *testing.T) {
	t.Parallel()
	m := New([]Secret{{Name: "OTHER", Value: "unrelated-value-9"}, {Name: "MIRROR_TOKEN", Value: value}})
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			t.Parallel()
			for _, prefix := range []string{"", "a", "ab", "abc", "token=", "x\x00y\xff"} {
				for _, suffix := range []string{"", "\n", "#tail", "\x00"} {
					text := "head " + enc.text(prefix, value) + suffix + " end"
					got, ok := m.Find([]byte(text))
					if !ok {
						t.Errorf("prefix %q suffix %q: %q not found", prefix, suffix, text)
						continue
					}
					if got.Secret != 1 || got.Name != "MIRROR_TOKEN" {
						t.Errorf("prefix %q: found %+v, want secret 1", prefix, got)
					}
					// A form that is also another spelling is named for the first: a JSON
					// escape where the value has no <, > or & is the value as is, and the URL
					// alphabet's base64 where the encoding has no + or / is the standard one.
					if got.Form != enc.form && got.Form != AsIs && !(enc.form == Base64URL && got.Form == Base64) {
						t.Errorf("prefix %q suffix %q: form %q, want %q", prefix, suffix, got.Form, enc.form)
					}
					if strings.Contains(got.What(), value) {
						t.Errorf("What() shows the value: %q", got.What())
					}
				}
			}
		})
	}
}

func TestMatcherFindsNothingElse(t *testing.T) {
	t.Parallel()
	m := New([]Secret{{Name: "MIRROR_TOKEN", Value: value}, {Value: "short"}})
	for _, text := range []string{
		"", "short", "tok/en+va<l>ue&=123", // one byte short
		strings.Repeat("\x00", 1<<16), strings.Repeat("tok/en+v", 1000),
		base64.StdEncoding.EncodeToString([]byte("tok/en+va<l>ue&=123")),
	} {
		if got, ok := m.Find([]byte(text)); ok {
			t.Errorf("Find(%.40q) = %+v; want nothing", text, got)
		}
	}
	if !New(nil).Empty() || !New([]Secret{{Value: "short"}}).Empty() || m.Empty() {
		t.Error("Empty is wrong")
	}
}

// TestStreamFindsAcrossPieces: a form split between two pieces (a file read in chunks) is
// found wherever the split falls, and Reset forgets the first piece.
func TestStreamFindsAcrossPieces(t *testing.T) {
	t.Parallel()
	m := New([]Secret{{Name: "T", Value: value}})
	text := []byte("some leading text " + base64.StdEncoding.EncodeToString([]byte("xx"+value)) + " trailing")
	for cut := range len(text) + 1 {
		for _, step := range []int{1, 3, len(text)} {
			s := m.Stream()
			s.Write(text[:cut])
			for rest := text[cut:]; len(rest) > 0; rest = rest[min(step, len(rest)):] {
				s.Write(rest[:min(step, len(rest))])
			}
			if f, ok := s.Found(); !ok || f.Form != Base64 {
				t.Fatalf("cut %d step %d: found %+v %v", cut, step, f, ok)
			}
		}
		s := m.Stream()
		s.Write(text[:cut])
		s.Reset()
		s.Write(text[cut:])
		whole := m.FindAll(text)[0]
		if _, ok := s.Found(); ok != (cut <= whole.Start || cut >= whole.End) {
			t.Errorf("cut %d of a form at [%d, %d): found %v across a Reset", cut, whole.Start, whole.End, ok)
		}
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	m := New([]Secret{{Value: value}, {Value: "second-secret"}})
	got := m.Mask("/etc/" + value + "/x-" + hex.EncodeToString([]byte(value)) + "-second-secret.txt")
	if want := "/etc/[REDACTED]/x-[REDACTED]-[REDACTED].txt"; got != want {
		t.Errorf("Mask = %q, want %q", got, want)
	}
	if got := m.Mask("/plain/path"); got != "/plain/path" {
		t.Errorf("Mask changed a plain path: %q", got)
	}
}

func TestForms(t *testing.T) {
	t.Parallel()
	if f := Forms("1234567"); f != nil {
		t.Errorf("a 7-byte value has forms: %v", f)
	}
	forms := Forms("abcdefgh") // its hex has no letter, so no upper case spelling either
	var kinds []string
	for _, f := range forms {
		kinds = append(kinds, f.Kind)
		if len(f.Text) < MinLen {
			t.Errorf("form %q is shorter than %d", f.Text, MinLen)
		}
	}
	// Letters only: no JSON, URL or URL-alphabet spelling differs from another one.
	want := []string{AsIs, Base64, Base64, Base64, Hex, PercentBytes, UTF16, UTF16}
	if !slices.Equal(kinds, want) {
		t.Errorf("kinds %q, want %q", kinds, want)
	}
	if forms[1].Text != "YWJjZGVmZ2" { // base64("abcdefgh") = YWJjZGVmZ2g=, its last char holds bits of what follows
		t.Errorf("aligned base64 = %q", forms[1].Text)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	got, err := Settings([]string{"CI=true", "MIRROR_TOKEN=" + value, "HTTPS_PROXY=http://user:p%40ss-w%3Ard@proxy:3128/"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Secret{{"MIRROR_TOKEN", value}, {"HTTPS_PROXY", "http://user:p%40ss-w%3Ard@proxy:3128/"},
		{"the password in HTTPS_PROXY", "p@ss-w:rd"}, {"the password in HTTPS_PROXY", "p%40ss-w%3Ard"}}
	if !slices.Equal(got, want) {
		t.Errorf("Settings = %q, want %q", got, want)
	}
	if _, err := Settings([]string{"P=http://u:hunter2@proxy/"}); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a short URL password: err = %v", err)
	}
	m := New(got)
	if f, _ := m.Find([]byte("x p%40ss-w%3Ard y")); f.What() != "the password in HTTPS_PROXY, URL-encoded" { // the decoded password's form comes first
		t.Errorf("What = %q", f.What())
	}
}

// FuzzMatcher: Find, FindAll and a Stream fed in pieces agree with a plain search for every
// form, on any bytes around any value.
func FuzzMatcher(f *testing.F) {
	f.Add("s3cr3t-value-1234", []byte("x"), []byte("y"), uint8(3))
	f.Add(value, []byte{0, 1, 2}, []byte("%74%6F"), uint8(1))
	f.Add("aaaaaaaaaaaa", bytes.Repeat([]byte("a"), 40), []byte("YWFhYWFh"), uint8(7))
	f.Fuzz(func(t *testing.T, v string, before, after []byte, step uint8) {
		m := New([]Secret{{Value: v}})
		for _, form := range Forms(v) {
			for _, text := range [][]byte{
				append(append(append([]byte(nil), before...), form.Text...), after...),
				append(append([]byte(nil), before...), after...),
			} {
				want := false
				for _, g := range Forms(v) {
					want = want || bytes.Contains(text, []byte(g.Text))
				}
				_, got := m.Find(text)
				if got != want || (len(m.FindAll(text)) > 0) != want {
					t.Fatalf("Find(%q) = %v, plain search %v", text, got, want)
				}
				s := m.Stream()
				n := int(step%16) + 1
				for rest := text; len(rest) > 0; rest = rest[min(n, len(rest)):] {
					s.Write(rest[:min(n, len(rest))])
				}
				if _, got := s.Found(); got != want {
					t.Fatalf("Stream(%q, pieces of %d) = %v, plain search %v", text, n, got, want)
				}
			}
		}
	})
}

// BenchmarkMatcher: bytes a second over unrelated text, for a few operator values and for a
// full token registry.
func BenchmarkMatcher(b *testing.B) {
	data := bytes.Repeat([]byte("def handler(request):\n    return render(request, 'index.html', {'n': 42})\n"), 1<<14)
	for _, n := range []int{3, 4096} {
		var secrets []Secret
		for i := range n {
			secrets = append(secrets, Secret{Value: strings.Repeat(string(rune('a'+i%26)), 4) + "-secret-" + hex.EncodeToString([]byte{byte(i), byte(i >> 8)})})
		}
		m := New(secrets)
		b.Run(map[int]string{3: "ThreeValues", 4096: "4096Values"}[n], func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, ok := m.Find(data); ok {
					b.Fatal("found a secret in unrelated text")
				}
			}
		})
	}
}

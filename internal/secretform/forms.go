package secretform

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
)

// MinLen is the shortest value that is a secret. Shorter strings (a "1", a "true", a port) are
// settings: too common to look for without finding them everywhere, and no real credential is
// that short.
const MinLen = 8

// The forms a value is looked for in: what Match.Form holds, worded to follow "holds the value
// ...".
const (
	AsIs         = "as is"
	AsJSON       = "as JSON spells it"
	Base64       = "base64-encoded"
	Base64URL    = "base64-encoded (URL alphabet)"
	Hex          = "hex-encoded"
	HexUpper     = "hex-encoded (upper case)"
	URLEncoded   = "URL-encoded"
	PercentBytes = "percent-encoded byte by byte"
	// UTF16 is either byte order: UTF-16 text in one holds the value in the other one byte on.
	UTF16 = "UTF-16-encoded"
)

// Form is one spelling of a secret.
type Form struct {
	Kind string // AsIs, AsJSON, ...
	Text string
}

// Forms returns every form of value that the checks look for, each spelling once (a value of
// letters and digits is the same URL-encoded as it is, and is then listed once, as is). A
// base64 form of a value that starts at any offset of a longer encoded text is the part of its
// encoding that does not depend on the bytes around it: for each of the three alignments, the
// characters that only the value's own bits make up. Values shorter than MinLen have no forms.
func Forms(value string) []Form {
	if len(value) < MinLen {
		return nil
	}
	var out []Form
	add := func(kind, text string) {
		if len(text) < MinLen || slices.ContainsFunc(out, func(f Form) bool { return f.Text == text }) {
			return
		}
		out = append(out, Form{Kind: kind, Text: text})
	}
	add(AsIs, value)
	for _, j := range JSONForms(value)[1:] {
		add(AsJSON, j)
	}
	for _, enc := range []struct {
		kind string
		enc  *base64.Encoding
	}{{Base64, base64.StdEncoding}, {Base64URL, base64.URLEncoding}} {
		for align := range 3 {
			add(enc.kind, alignedBase64(enc.enc, value, align))
		}
	}
	h := hex.EncodeToString([]byte(value))
	add(Hex, h)
	add(HexUpper, strings.ToUpper(h))
	add(URLEncoded, url.QueryEscape(value))
	add(URLEncoded, url.PathEscape(value))
	var every strings.Builder
	for i := range len(value) {
		fmt.Fprintf(&every, "%%%02X", value[i])
	}
	add(PercentBytes, every.String())
	add(PercentBytes, strings.ToLower(every.String()))
	// What a Windows tool writes by default (PowerShell's redirection, .reg files, many
	// editors): a text file in UTF-16, which shows the value to whoever opens it.
	var le, be []byte
	for _, u := range utf16.Encode([]rune(value)) {
		le, be = binary.LittleEndian.AppendUint16(le, u), binary.BigEndian.AppendUint16(be, u)
	}
	add(UTF16, string(le))
	add(UTF16, string(be))
	return out
}

// alignedBase64 is the part of the encoding of value, preceded by align other bytes, that only
// value's bits make up: each base64 character holds 6 bits, so the first characters hold bits of
// the preceding bytes and the last one may hold bits of what follows.
func alignedBase64(enc *base64.Encoding, value string, align int) string {
	s := enc.EncodeToString(append(make([]byte, align), value...))
	first := (8*align + 5) / 6           // characters touched by the preceding bytes
	last := 8 * (align + len(value)) / 6 // characters made of whole 6-bit groups
	return s[first:last]
}

// JSONForms returns s, then s as it is spelled inside a JSON string by Go (which escapes <, >
// and &) and by encoders that do not, each once: a trajectory and a tool call's arguments are
// JSON, and a secret in them must be found as they spell it.
func JSONForms(s string) []string {
	forms := []string{s}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(s) != nil {
			continue
		}
		q := strings.TrimSuffix(b.String(), "\n")
		if q = q[1 : len(q)-1]; !slices.Contains(forms, q) {
			forms = append(forms, q)
		}
	}
	return forms
}

package run

import (
	"bytes"
	"encoding/json"
	"strings"
)

// CleanText makes s storable as PostgreSQL text: valid UTF-8 without NUL.
func CleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

// cleanJSON makes b storable as jsonb: nil when it is not valid JSON, and
// with every \u0000 escape (which jsonb rejects) replaced by \ufffd.
func cleanJSON(b []byte) []byte {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	if !bytes.Contains(b, []byte(`\u0000`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case escaped:
			escaped = false
			if c == 'u' && i+4 < len(b) && string(b[i+1:i+5]) == "0000" {
				out = append(out, "ufffd"...)
				i += 4
				continue
			}
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
		out = append(out, c)
	}
	return out
}

package githubapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// RedactJSON returns the JSON document b with Redact applied to every string in it, keys
// included: the same document, in the same order, compact, with no secret in any string.
// Redacting its text instead could miss a secret that JSON spells with escapes Redact does not
// know, and could cut one escape in half.
func RedactJSON(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers keep their text
	var out bytes.Buffer
	type level struct {
		object bool
		n      int // tokens written at this level (an object's keys and values both count)
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) && len(stack) == 0 && out.Len() > 0 {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the JSON to redact: %w", err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out.WriteByte(byte(d))
			continue
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			switch {
			case top.object && top.n%2 == 1:
				out.WriteByte(':')
			case top.n > 0:
				out.WriteByte(',')
			}
			top.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			out.WriteByte(byte(v))
			stack = append(stack, level{object: v == '{'})
		case string:
			s, err := json.Marshal(Redact(v))
			if err != nil {
				return nil, fmt.Errorf("encoding a redacted string: %w", err)
			}
			out.Write(s)
		case json.Number:
			out.WriteString(v.String())
		case bool:
			out.WriteString(strconv.FormatBool(v))
		case nil:
			out.WriteString("null")
		}
	}
	return out.Bytes(), nil
}

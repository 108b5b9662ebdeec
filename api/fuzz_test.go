package api

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeStart: whatever the body, DecodeStart either refuses it with a *RequestError or
// returns a request whose every field is what the handler may use as is.
func FuzzDecodeStart(f *testing.F) {
	for _, seed := range []string{
		`{"repository": "acme/widgets", "issue": 12}`,
		`{"repository": "acme/widgets", "issue": 12, "base": "main", "attempts": 3, "model": "big", "instructions": "do it"}`,
		`{"repository": "acme/widgets", "issue": 12, "attempts": 0}`,
		`{"repository": "acme/widgets", "issue": -1}`,
		`{"repository": "acme", "issue": 1}`,
		`{"repository": "a/b", "issue": 1, "base": "--upload-pack=x"}`,
		`{"repository": "a/b", "issue": 1, "model": "../x"}`,
		`{"repository": "a/b", "issue": 1, "instructions": "\u0000\ud800"}`,
		`{"repository": "a/b", "issue": 1}{}`,
		`{"repository": "a/b", "issue": 1, "extra": true}`,
		`[]`, `null`, `{`, ``, "\xff",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req, err := DecodeStart(strings.NewReader(body))
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || re.Msg == "" {
				t.Fatalf("refusal %v (%T) is not a RequestError", err, err)
			}
			return
		}
		if !repoName.MatchString(req.Repository) || req.Owner() == "" || req.Repo() == "" || req.Issue <= 0 {
			t.Fatalf("accepted %+v", req)
		}
		if err := req.Options.Check(); err != nil {
			t.Fatalf("accepted options that Check refuses: %v", err)
		}
		if len(req.Instructions) > MaxInstructionsBytes || !utf8.ValidString(req.Instructions) {
			t.Fatalf("accepted instructions of %d bytes, valid UTF-8: %v", len(req.Instructions), utf8.ValidString(req.Instructions))
		}
	})
}

package secrets

import (
	"reflect"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/secrettest"
)

// TestPlaceholderWordsBesideAValueDoNotAllowIt: a placeholder word of gitleaks' default
// allow-lists ("false", the stopword "abcdefghijklmnopqrstuvwxyz") that the patch writes
// beside a value, inside what a rule takes for the secret, does not make the value a
// placeholder. Each of these was published before, listed as a placeholder: the private-key
// rule's secret is the whole block (its label, its headers and, its match being lazy, a decoy
// block's lines up to the real key's BEGIN line), curl-auth-user's is the user and the
// password, and gitleaks' global regex (?i)^true|false|null$ takes "false" anywhere.
func TestPlaceholderWordsBesideAValueDoNotAllowIt(t *testing.T) {
	t.Parallel()
	kind := "RSA " + "PRIVATE KEY"
	stop := "abcdefghijklmnopqrstuvwxyz"
	cases := []struct {
		name    string
		content func(key string) string
		want    []Finding
		shown   bool // Redact leaves the key's body: the decoy's match ends before it (a key's body alone is not covered)
	}{
		{
			// A block before the key, up to the key's own BEGIN line, holds a stopword: the
			// lazy rule ends its match at that line, and the key's body and END line are in no
			// match of their own.
			name: "PrivateKey/DecoyBlockBefore",
			content: func(key string) string {
				return pemLine("DECOY "+"PRIVATE KEY", "BEGIN") + "\n" + stop + " " + stop + " " + stop + "\n" + key + "\n"
			},
			want:  []Finding{{Rule: "private-key", File: "deploy/key.pem", Line: 1}},
			shown: true,
		},
		{
			name: "PrivateKey/FalseInTheLabel",
			content: func(key string) string {
				return strings.ReplaceAll(key, kind, "FALSE "+kind) + "\n"
			},
			want: []Finding{{Rule: "private-key", File: "deploy/key.pem", Line: 1}},
		},
		{
			name: "PrivateKey/StopwordInAHeader",
			content: func(key string) string {
				begin, rest, _ := strings.Cut(key, "\n")
				return begin + "\nComment: " + stop + "\n\n" + rest + "\n"
			},
			want: []Finding{{Rule: "private-key", File: "deploy/key.pem", Line: 1}},
		},
		{
			name: "CurlUserFalse",
			content: func(string) string {
				return "#!/bin/sh\ncurl -u false:" + genericValue(t) + " https://api.example.com/data\n"
			},
			want: []Finding{{Rule: "curl-auth-user", File: "deploy/key.pem", Line: 2}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			key, body := secrettest.PrivateKey(t)
			content := c.content(key)
			b := setup(t, readme)
			got := b.scan(t, b.change(t, map[string]string{"deploy/key.pem": content}))
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("findings: got %v, want %v", got, c.want)
			}
			// What the model prints is shown redacted by the same judgement.
			shown := Redact(content)
			if shown == content {
				t.Fatalf("Redact left the text as it was: %q", shown)
			}
			if !c.shown && strings.Contains(content, body[3]) && strings.Contains(shown, body[3]) {
				t.Fatalf("Redact left the key's body: %q", shown)
			}
		})
	}
}

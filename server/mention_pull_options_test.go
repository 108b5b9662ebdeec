package server

import (
	"context"
	"strings"
	"testing"
)

// TestWebhookMentionOnAPullRequestTakesOptions: a mention on a pull request takes the same
// options as on an issue (attempts=, model=), out of the request the model reads; base=, which
// a pull request's run cannot take, and an option that does not parse are kept as the refused
// option, for the worker to answer once it knows the requester may write.
func TestWebhookMentionOnAPullRequestTakesOptions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, body, request string
		attempts            int
		model, refused      string
	}{
		{"Options", "Looks close. @Frognano-App attempts=2 model=big please add a test for page 0", "Looks close. @Frognano-App please add a test for page 0", 2, "big", ""},
		{"NoOptions", "@frognano-app please add a test", "@frognano-app please add a test", 0, "", ""},
		{"Base", "@frognano-app base=main add a test", "@frognano-app base=main add a test", 0, "", "base"},
		{"Typo", "@frognano-app atempts=2 add a test", "@frognano-app atempts=2 add a test", 0, "", "atempts"},
		{"BadValue", "@frognano-app attempts=99 add a test", "@frognano-app attempts=99 add a test", 0, "", "attempts"},
		{"HiddenOptions", "@frognano-app <!-- model=evil --> add a test", "@frognano-app <!-- model=evil --> add a test", 0, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if code, status := commentSender(t, b)(onPR("Codertocat", "User", tt.body)); status != "queued" {
				t.Fatalf("%d %s, want queued", code, status)
			}
			var request, model, refused string
			var attempts int
			if err := b.pool.QueryRow(context.Background(), `SELECT request, coalesce(asked_attempts, 0), coalesce(asked_model, ''),
					coalesce(asked_refused, ''), kind FROM runs`).Scan(&request, &attempts, &model, &refused, new(string)); err != nil {
				t.Fatal(err)
			}
			name, _, _ := strings.Cut(refused, "\n")
			if request != tt.request || attempts != tt.attempts || model != tt.model || name != tt.refused {
				t.Errorf("run asks %q, attempts %d, model %q, refused %q; want %q, %d, %q, %q",
					request, attempts, model, refused, tt.request, tt.attempts, tt.model, tt.refused)
			}
		})
	}
}

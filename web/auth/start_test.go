package auth

import (
	"net/http"
	"net/url"
	"testing"
)

// TestSignInPagesStartAlike: both sign-in pages (OAuth's GET /login and the shared token's
// form) refuse a next that is not a local path, and send a person already signed in straight
// to next without starting another sign-in.
func TestSignInPagesStartAlike(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, token string
		signIn      func(t *testing.T, b *bundle, c *http.Client)
	}{
		{"OAuth", "", func(t *testing.T, b *bundle, c *http.Client) {
			if status, body := b.signIn(t, c, "alice", "/runs/octo/public"); status != http.StatusOK {
				t.Fatalf("signing in: %d %s", status, body)
			}
		}},
		{"SharedToken", testToken, func(t *testing.T, b *bundle, c *http.Client) {
			csrf := loginForm(t, c, b.srv.URL, "/runs/octo/public")
			if resp, body := submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}, "next": {"/runs/octo/public"}}, nil); resp.StatusCode != http.StatusOK {
				t.Fatalf("signing in: %d %s", resp.StatusCode, body)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.token)
			c := b.browser(t, true)
			noFollow := &http.Client{Jar: c.Jar, Timeout: c.Timeout,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			open := func(next string) *http.Response {
				t.Helper()
				resp, err := noFollow.Get(b.srv.URL + "/login?next=" + url.QueryEscape(next))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			if resp := open("//evil.example"); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
				t.Errorf("next=//evil.example: %d %q, want 400 without a redirect", resp.StatusCode, resp.Header.Get("Location"))
			}
			tc.signIn(t, b, c)
			if resp := open("/runs/5"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/runs/5" {
				t.Errorf("signed in: %d %q, want 303 to /runs/5", resp.StatusCode, resp.Header.Get("Location"))
			}
			if resp := open("//evil.example"); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
				t.Errorf("signed in, next=//evil.example: %d %q, want 400 without a redirect", resp.StatusCode, resp.Header.Get("Location"))
			}
		})
	}
}

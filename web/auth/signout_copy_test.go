package auth

import (
	"net/http"
	"net/url"
	"testing"
)

// TestSignOutEndsACopiedSession is an attack with a session cookie copied before its
// owner signed out (from a shared computer, a proxy's log, a browser extension): sign-out
// must end the session itself, not only delete the browser's copy, or the copy reads private
// runs for the rest of the session's lifetime (8 hours, with the person's GitHub token inside).
func TestSignOutEndsACopiedSession(t *testing.T) {
	t.Parallel()
	signIns := map[string]func(t *testing.T, b *bundle, c *http.Client){
		"OAuth": func(t *testing.T, b *bundle, c *http.Client) {
			if status, _ := b.signIn(t, c, "alice", "/runs/octo/secret"); status != http.StatusOK {
				t.Fatalf("sign-in: %d", status)
			}
		},
		"SharedToken": func(t *testing.T, b *bundle, c *http.Client) {
			csrf := loginForm(t, c, b.srv.URL, "/runs/octo/secret")
			if resp, body := submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}, "next": {"/runs/octo/secret"}}, nil); resp.StatusCode != http.StatusOK {
				t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
			}
		},
	}
	for name, signIn := range signIns {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			token := ""
			if name == "SharedToken" {
				token = testToken
			}
			b := setup(t, token)
			c := b.browser(t, true)
			signIn(t, b, c)
			copied := reqWithCookies(t, c, b.srv.URL)
			if _, ok := b.auth.Viewer(copied); !ok {
				t.Fatal("not signed in")
			}
			// Another session of the same person in another browser.
			other := b.browser(t, true)
			signIn(t, b, other)

			resp, err := c.Post(b.srv.URL+"/logout", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("logout: %d", resp.StatusCode)
			}
			if v, ok := b.auth.Viewer(copied); ok {
				t.Errorf("the copy of a signed-out session still signs in as %s", v)
			}
			if _, ok := b.auth.Viewer(reqWithCookies(t, other, b.srv.URL)); !ok {
				t.Error("signing out in one browser ended the session in another")
			}
		})
	}
}

package auth

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// foreignOrigins are the ways a browser marks a request that another site's page sent: a
// cross-site page, a page of the same site on another port (another origin), and browsers
// that send only Origin.
var foreignOrigins = map[string]map[string]string{
	"CrossSite":         {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
	"SameSiteOtherPort": {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"},
	"OriginOnly":        {"Origin": "http://127.0.0.1:1"},
	"NullOrigin":        {"Origin": "null"},
}

// TestEveryChangeIsSameOriginOnly sends each request of auth that changes something (every
// route but GET: signing in with the shared token's form, signing out), with this browser's
// valid cookies and form, as another site's page would: each is refused with 403 and changes
// nothing. A route added later without a case here fails the test.
func TestEveryChangeIsSameOriginOnly(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"OAuth", "SharedToken"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			token := ""
			if mode == "SharedToken" {
				token = testToken
			}
			b := setup(t, token)
			r := chi.NewRouter()
			b.auth.Routes(r)
			var changing []string
			_ = chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
				if method != http.MethodGet && method != http.MethodHead {
					changing = append(changing, method+" "+route)
				}
				return nil
			})
			slices.Sort(changing)
			want := []string{"POST /logout"}
			if token != "" {
				want = []string{"POST /login", "POST /logout"}
			}
			if !slices.Equal(changing, want) {
				t.Fatalf("routes that change something: %v, tested here: %v", changing, want)
			}

			for name, header := range foreignOrigins {
				// Sign-out: the person stays signed in.
				c := b.browser(t, token == "")
				if token == "" {
					if status, _ := b.signIn(t, c, "alice", "/runs/octo/secret"); status != http.StatusOK {
						t.Fatalf("sign-in: %d", status)
					}
				} else {
					csrf := loginForm(t, c, b.srv.URL, "/runs/octo/secret")
					if resp, body := submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}, "next": {"/runs/octo/secret"}}, nil); resp.StatusCode != http.StatusSeeOther {
						t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
					}
				}
				req, _ := http.NewRequest("POST", b.srv.URL+"/logout", nil)
				for k, v := range header {
					req.Header.Set(k, v)
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden {
					t.Errorf("%s: POST /logout answered %d, want 403", name, resp.StatusCode)
				}
				if _, ok := b.auth.Viewer(reqWithCookies(t, c, b.srv.URL)); !ok {
					t.Errorf("%s: POST /logout signed the person out", name)
				}
				if token == "" {
					continue
				}
				// Sign-in with the shared token's form, its CSRF value and the right
				// token: no session is started.
				c = b.browser(t, false)
				csrf := loginForm(t, c, b.srv.URL, "/runs/octo/secret")
				resp, body := submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}, "next": {"/runs/octo/secret"}}, header)
				if resp.StatusCode != http.StatusForbidden {
					t.Errorf("%s: POST /login answered %d, want 403", name, resp.StatusCode)
				}
				if _, ok := b.auth.Viewer(reqWithCookies(t, c, b.srv.URL)); ok || strings.Contains(body, "Runs of") {
					t.Errorf("%s: POST /login signed the browser in", name)
				}
			}
		})
	}
}

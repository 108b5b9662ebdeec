package auth

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/frognano/frognano/migrations/dbtest"
)

const testToken = "correct-horse-battery-staple-42"

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// loginForm loads the sign-in form in c and returns its CSRF value.
func loginForm(t *testing.T, c *http.Client, base, next string) string {
	t.Helper()
	status, _, body := get(t, c, base+"/login?next="+url.QueryEscape(next))
	m := csrfField.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("sign-in form: %d %s", status, body)
	}
	return m[1]
}

func submit(t *testing.T, c *http.Client, base string, form url.Values, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestSharedTokenSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t, testToken)
	c := b.browser(t, false)

	// Not signed in: the page sends to the form.
	resp, err := c.Get(b.srv.URL + "/runs/octo/secret")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fruns%2Focto%2Fsecret" {
		t.Fatalf("unsigned page: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	csrf := loginForm(t, c, b.srv.URL, "/runs/octo/secret")
	resp, body := submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}, "next": {"/runs/octo/secret"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/runs/octo/secret" {
		t.Fatalf("sign-in: %d %s", resp.StatusCode, body)
	}
	status, _, page := get(t, c, b.srv.URL+"/runs/octo/secret")
	if status != http.StatusOK || !strings.Contains(page, "signed in as "+SharedTokenLogin) {
		t.Errorf("page after sign-in: %d %s", status, page)
	}
	if strings.Contains(b.log.String(), testToken) || strings.Contains(body, testToken) {
		t.Errorf("the token was logged or shown")
	}
	u, _ := url.Parse(b.srv.URL)
	for _, ck := range c.Jar.Cookies(u) {
		if strings.Contains(ck.Value, testToken) {
			t.Errorf("cookie %s holds the token", ck.Name)
		}
	}
	// The token holder reads everything, and nothing is asked of GitHub.
	if n := len(b.gh.Requests()); n != 0 {
		t.Errorf("GitHub asked %d times in token mode", n)
	}

	// A new token ends the sessions of the old one.
	b2, err := New(Config{PublicURL: b.srv.URL, Token: testToken + "-rotated", SessionKey: strings.Repeat("k", 32), Now: b.clock.Now, Pool: dbtest.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b2.Viewer(reqWithCookies(t, c, b.srv.URL)); ok {
		t.Errorf("a session of the old token is valid with the new one")
	}
	if _, ok := b.auth.Viewer(reqWithCookies(t, c, b.srv.URL)); !ok {
		t.Errorf("the session is not valid with its own token")
	}
}

func TestSharedTokenRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, testToken)

	t.Run("MissingCSRF", func(t *testing.T) {
		c := b.browser(t, false)
		loginForm(t, c, b.srv.URL, "/runs")
		resp, _ := submit(t, c, b.srv.URL, url.Values{"token": {testToken}}, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("without the form's CSRF value: %d", resp.StatusCode)
		}
	})
	t.Run("CSRFFromAnotherBrowser", func(t *testing.T) {
		attacker := b.browser(t, false)
		csrf := loginForm(t, attacker, b.srv.URL, "/runs")
		victim := b.browser(t, false)
		loginForm(t, victim, b.srv.URL, "/runs")
		resp, _ := submit(t, victim, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}}, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("someone else's CSRF value: %d", resp.StatusCode)
		}
	})
	t.Run("CrossSite", func(t *testing.T) {
		c := b.browser(t, false)
		csrf := loginForm(t, c, b.srv.URL, "/runs")
		resp, _ := submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site POST: %d", resp.StatusCode)
		}
		resp, _ = submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}}, map[string]string{"Origin": "https://evil.example"})
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST from another origin: %d", resp.StatusCode)
		}
	})
	t.Run("OpenRedirect", func(t *testing.T) {
		c := b.browser(t, false)
		csrf := loginForm(t, c, b.srv.URL, "/runs")
		resp, _ := submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}, "next": {"//evil.example"}}, nil)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("next=//evil.example: %d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
}

func TestSharedTokenLockout(t *testing.T) {
	t.Parallel()
	b := setup(t, testToken)
	c := b.browser(t, false)
	for i := range MaxFailedLogins {
		csrf := loginForm(t, c, b.srv.URL, "/runs")
		resp, body := submit(t, c, b.srv.URL, url.Values{"token": {"wrong-token-number-" + string(rune('a'+i))}, "csrf": {csrf}}, nil)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not the access token") {
			t.Fatalf("wrong token %d: %d", i, resp.StatusCode)
		}
	}
	// Locked out: even the right token is refused until the window has passed.
	csrf := loginForm(t, c, b.srv.URL, "/runs")
	resp, _ := submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}}, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("after %d wrong tokens: %d", MaxFailedLogins, resp.StatusCode)
	}
	b.clock.Add(FailedLoginWindow)
	csrf = loginForm(t, c, b.srv.URL, "/runs")
	resp, _ = submit(t, c, b.srv.URL, url.Values{"token": {testToken}, "csrf": {csrf}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after the window: %d", resp.StatusCode)
	}
}

func TestClientKey(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"192.0.2.7:5555":                 "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443":     "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443":     "2001:db8:1:2::/64",
		"not an address":                 "not an address",
		"[::ffff:192.0.2.7]:80":          "192.0.2.7",
		"[2001:db8:1:3:3:4:5:6]:443":     "2001:db8:1:3::/64",
		"127.0.0.1:1":                    "127.0.0.1",
		"[2001:db8::1]:1":                "2001:db8::/64",
		"[2001:db8:0:0:1::1]:1":          "2001:db8::/64",
		"[2001:db8:0:1:1::1]:1":          "2001:db8:0:1::/64",
		"[2001:0db8:0000:0000::0001]:65": "2001:db8::/64",
	} {
		r := &http.Request{RemoteAddr: addr}
		if got := clientKey(r); got != want {
			t.Errorf("clientKey(%q) = %q, want %q", addr, got, want)
		}
	}
}

// TestSignInBehindAProxy: a proxy that passes another Host still gets the form through, since
// the browser's Origin is the configured public URL.
func TestSignInBehindAProxy(t *testing.T) {
	t.Parallel()
	b := setup(t, testToken)
	c := b.browser(t, false)
	csrf := loginForm(t, c, b.srv.URL, "/runs")
	form := url.Values{"token": {testToken}, "csrf": {csrf}}
	req, _ := http.NewRequest("POST", b.srv.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.srv.URL)
	req.Host = "frognano-internal:8080"
	// The client's jar would pick cookies by Host; the proxy's browser sent them for the URL.
	u, _ := url.Parse(b.srv.URL)
	for _, ck := range c.Jar.Cookies(u) {
		req.AddCookie(ck)
	}
	resp, err := (&http.Client{CheckRedirect: c.CheckRedirect}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		body, _ := io.ReadAll(resp.Body)
		t.Errorf("sign-in through a proxy: %d %s", resp.StatusCode, body)
	}
}

package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp/githubtest"
)

func TestOAuthSignInAndReadAccess(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	alice := b.browser(t, true)

	// Not signed in: the page sends the browser through GitHub and back to it.
	status, body := b.signIn(t, alice, "alice", "/runs/octo/secret")
	if status != http.StatusOK || !strings.Contains(body, "Runs of octo/secret") || !strings.Contains(body, "signed in as alice") {
		t.Fatalf("alice after sign-in: %d %s", status, body)
	}
	if got := b.gh.OAuthExchanges(); len(got) != 1 || got[0] != "alice" {
		t.Errorf("code exchanges = %v, want [alice]", got)
	}
	// Signed in: no second trip to GitHub.
	if status, final, _ := get(t, alice, b.srv.URL+"/runs/octo/public"); status != http.StatusOK || !strings.HasPrefix(final, b.srv.URL) {
		t.Errorf("public repository: %d at %s", status, final)
	}
	if n := b.gh.CountRequests("GET", "/user"); n != 1 {
		t.Errorf("GET /user asked %d times, want 1", n)
	}

	// bob may not read the private repository.
	bob := b.browser(t, true)
	status, body = b.signIn(t, bob, "bob", "/runs/octo/secret")
	if status != http.StatusNotFound || !strings.Contains(body, "No such run") || strings.Contains(body, "Runs of") {
		t.Errorf("bob on the private repository: %d %s", status, body)
	}
	if status, _, _ := get(t, bob, b.srv.URL+"/runs/octo/public"); status != http.StatusOK {
		t.Errorf("bob on the public repository: %d", status)
	}

	// The cookie is HttpOnly, SameSite=Lax, not Secure over http, and holds no token in clear.
	u, _ := url.Parse(b.srv.URL)
	cookies := alice.Jar.Cookies(u)
	if len(cookies) != 1 || cookies[0].Name != sessionCookie {
		t.Fatalf("cookies after sign-in: %v", cookies)
	}
	for _, tok := range b.gh.UserTokens() {
		if strings.Contains(cookies[0].Value, tok) || strings.Contains(b.log.String(), tok) {
			t.Errorf("a user token is readable in the cookie or the log")
		}
	}
	if strings.Contains(b.log.String(), b.gh.OAuthClientSecret()) {
		t.Errorf("the client secret is in the log")
	}
}

func TestOAuthCookieAttributes(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	c := b.browser(t, false)
	resp, err := c.Get(b.srv.URL + "/login?next=/runs/5")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("/login: %d", resp.StatusCode)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	q := loc.Query()
	if loc.Path != "/login/oauth/authorize" || q.Get("client_id") != b.gh.OAuthClientID() ||
		q.Get("redirect_uri") != b.srv.URL+"/oauth/callback" || len(q.Get("state")) < 40 {
		t.Errorf("authorize address: %s", loc)
	}
	var state *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == stateCookie {
			state = ck
		}
	}
	if state == nil || !state.HttpOnly || state.SameSite != http.SameSiteLaxMode || state.Secure || state.MaxAge <= 0 || state.MaxAge > 600 {
		t.Errorf("state cookie: %+v", state)
	}
	if strings.Contains(state.Value, q.Get("state")) {
		t.Errorf("the state is readable in its cookie")
	}
	// Two sign-ins get two states.
	resp2, err := c.Get(b.srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	loc2, _ := url.Parse(resp2.Header.Get("Location"))
	if loc2.Query().Get("state") == q.Get("state") {
		t.Errorf("the state was reused")
	}
}

func TestSecureCookiesOverHTTPS(t *testing.T) {
	t.Parallel()
	j, err := newJar(Config{PublicURL: "https://frognano.example.com", SessionKey: strings.Repeat("x", 32), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	c := j.cookie(sessionCookie, "v", 60)
	if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Name != "__Host-"+sessionCookie || c.Path != "/" || c.Domain != "" {
		t.Errorf("cookie over https: %+v", c)
	}
}

// startLogin runs /login in c without following GitHub, and returns the state and the callback
// address GitHub would send the browser to (code included) for the signed-in person.
func (b *bundle) startLogin(t *testing.T, c *http.Client, login string) (state, callback string) {
	t.Helper()
	b.gh.SignInAs(login)
	resp, err := c.Get(b.srv.URL + "/login?next=/runs/octo/secret")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	authorize := resp.Header.Get("Location")
	u, _ := url.Parse(authorize)
	state = u.Query().Get("state")
	resp, err = c.Get(authorize) // the fake GitHub authorizes at once
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %d", resp.StatusCode)
	}
	return state, resp.Header.Get("Location")
}

func withState(t *testing.T, callback, state string) string {
	t.Helper()
	u, _ := url.Parse(callback)
	q := u.Query()
	q.Set("state", state)
	u.RawQuery = q.Encode()
	return u.String()
}

func TestOAuthCallbackRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, "")

	t.Run("StateMismatch", func(t *testing.T) {
		c := b.browser(t, false)
		_, callback := b.startLogin(t, c, "alice")
		status, _, body := get(t, c, withState(t, callback, randomToken()))
		if status != http.StatusBadRequest || !strings.Contains(body, "does not belong") {
			t.Errorf("forged state: %d %s", status, body)
		}
		if _, ok := b.auth.Viewer(reqWithCookies(t, c, b.srv.URL)); ok {
			t.Errorf("signed in with a forged state")
		}
	})
	t.Run("NoStateCookie", func(t *testing.T) {
		// A callback address made in the attacker's browser, opened in the victim's (login CSRF).
		attacker := b.browser(t, false)
		_, callback := b.startLogin(t, attacker, "bob")
		victim := b.browser(t, false)
		status, _, body := get(t, victim, callback)
		if status != http.StatusBadRequest || !strings.Contains(body, "not started in this browser") {
			t.Errorf("callback without the state cookie: %d %s", status, body)
		}
		if _, ok := b.auth.Viewer(reqWithCookies(t, victim, b.srv.URL)); ok {
			t.Errorf("the victim was signed in as the attacker")
		}
	})
	t.Run("Replay", func(t *testing.T) {
		c := b.browser(t, false)
		_, callback := b.startLogin(t, c, "alice")
		u, _ := url.Parse(b.srv.URL)
		stateCookies := c.Jar.Cookies(u) // kept, as an attacker who copied them would
		if status, _, _ := get(t, c, callback); status != http.StatusSeeOther {
			t.Fatalf("first callback: %d", status)
		}
		before := len(b.gh.OAuthExchanges())
		replay := b.browser(t, false)
		replay.Jar.SetCookies(u, stateCookies)
		status, _, body := get(t, replay, callback)
		if status != http.StatusBadRequest || !strings.Contains(body, "already used") {
			t.Errorf("replayed callback: %d %s", status, body)
		}
		if after := len(b.gh.OAuthExchanges()); after != before {
			t.Errorf("the replay exchanged a code")
		}
		// The browser that used it no longer holds the state cookie.
		if status, _, _ := get(t, c, callback); status != http.StatusBadRequest {
			t.Errorf("second callback in the same browser: %d", status)
		}
	})
	t.Run("StateExpired", func(t *testing.T) {
		bb := setup(t, "")
		c := bb.browser(t, false)
		_, callback := bb.startLogin(t, c, "alice")
		bb.clock.Add(stateLifetime + time.Second)
		if status, _, _ := get(t, c, callback); status != http.StatusBadRequest {
			t.Errorf("late callback: %d", status)
		}
	})
	t.Run("Denied", func(t *testing.T) {
		bb := setup(t, "")
		bb.gh.DenyAuthorization(true)
		c := bb.browser(t, true)
		status, body := bb.signIn(t, c, "alice", "/runs/octo/secret")
		if status != http.StatusForbidden || !strings.Contains(body, "declined") {
			t.Errorf("declined authorization: %d %s", status, body)
		}
	})
}

func reqWithCookies(t *testing.T, c *http.Client, base string) *http.Request {
	t.Helper()
	r, _ := http.NewRequest("GET", base+"/runs", nil)
	u, _ := url.Parse(base)
	for _, ck := range c.Jar.Cookies(u) {
		r.AddCookie(ck)
	}
	return r
}

func TestOAuthWrongClientSecret(t *testing.T) {
	t.Parallel()
	const wrong = "0123456789abcdef0123456789abcdef01234567"
	b := setup(t, "", func(c *Config) { c.ClientSecret = wrong })
	c := b.browser(t, true)
	status, body := b.signIn(t, c, "alice", "/runs/octo/secret")
	if status != http.StatusBadGateway || strings.Contains(body, "Runs of") {
		t.Errorf("wrong secret: %d %s", status, body)
	}
	if len(b.gh.UserTokens()) != 0 {
		t.Errorf("a token was issued for a wrong secret")
	}
	log := b.log.String()
	if !strings.Contains(log, "incorrect_client_credentials") || !strings.Contains(log, EnvClientSecret) {
		t.Errorf("the log does not say the secret is wrong: %s", log)
	}
	if strings.Contains(log, wrong) || strings.Contains(body, wrong) {
		t.Errorf("the secret was logged or shown")
	}
}

func TestOpenRedirectRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	c := b.browser(t, false)
	for _, next := range []string{"//evil.example", "/\\evil.example", "https://evil.example/", "javascript:alert(1)", "/\t/evil.example", "evil.example", "/%2F%2Fevil.example"} {
		resp, err := c.Get(b.srv.URL + "/login?next=" + url.QueryEscape(next))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || len(resp.Cookies()) != 0 {
			t.Errorf("next=%q: %d, Location %q, %d cookies", next, resp.StatusCode, resp.Header.Get("Location"), len(resp.Cookies()))
		}
	}
	if n := b.gh.CountRequests("*", "/login/oauth/*"); n != 0 {
		t.Errorf("GitHub was asked %d times", n)
	}
}

func TestReadCache(t *testing.T) {
	t.Parallel()
	b := setup(t, "", func(c *Config) { c.ReadCacheSize = 2 })
	c := b.browser(t, true)
	if status, _ := b.signIn(t, c, "alice", "/runs/octo/secret"); status != http.StatusOK {
		t.Fatalf("sign-in: %d", status)
	}
	v, ok := b.auth.Viewer(reqWithCookies(t, c, b.srv.URL))
	if !ok {
		t.Fatal("not signed in")
	}
	ctx := context.Background()
	byID := func(r *githubtest.Repo) string { return "/repositories/" + strconv.FormatInt(r.ID, 10) }
	asked := func() int { return b.gh.CountRequests("GET", byID(b.secret)) }
	// The sign-in's page found octo/secret by its name, which remembered alice's access by id.
	n0 := asked()
	for range 3 {
		if ok, err := b.auth.CanRead(ctx, v, b.secret.ID); !ok || err != nil {
			t.Fatalf("CanRead: %v %v", ok, err)
		}
	}
	if asked() != n0 {
		t.Errorf("GitHub asked %d times within the cache's lifetime", asked()-n0)
	}
	// Access removed on GitHub: remembered until the entry expires, then refused.
	b.gh.SetPermission(b.secret, "alice", "none")
	if ok, _ := b.auth.CanRead(ctx, v, b.secret.ID); !ok {
		t.Errorf("the cached answer was not used")
	}
	b.clock.Add(DefaultReadCacheTTL + time.Second)
	if ok, err := b.auth.CanRead(ctx, v, b.secret.ID); ok || err != nil {
		t.Errorf("after the cache expired: %v %v, want false", ok, err)
	}
	if asked() != n0+1 {
		t.Errorf("GitHub asked %d times, want once more", asked()-n0)
	}
	// Bounded: a third repository pushes one out.
	third := b.gh.AddRepo("octo", "third", nil)
	_, _ = b.auth.CanRead(ctx, v, b.public.ID)
	_, _ = b.auth.CanRead(ctx, v, third.ID)
	if n := b.auth.(*OAuth).reads.len(); n > 2 {
		t.Errorf("read cache holds %d entries, bound 2", n)
	}
	// Errors are never a yes and never remembered.
	b.gh.FailNext("GET", byID(b.public), http.StatusBadGateway, nil, 1)
	b.clock.Add(DefaultReadCacheTTL + time.Second)
	if ok, err := b.auth.CanRead(ctx, v, b.public.ID); ok || err == nil {
		t.Errorf("GitHub failing: %v %v, want false and an error", ok, err)
	}
	if ok, err := b.auth.CanRead(ctx, v, b.public.ID); !ok || err != nil {
		t.Errorf("after the failure: %v %v", ok, err)
	}
	// Names that are not repository names, and ids that are not ids, never reach GitHub.
	before := len(b.gh.Requests())
	for _, bad := range [][2]string{{"octo", ".."}, {"../x", "y"}, {"octo", "a/b"}, {"", "x"}, {"octo", "a?b"}} {
		if id, ok, err := b.auth.FindRepo(ctx, v, bad[0], bad[1]); ok || id != 0 || err == nil {
			t.Errorf("FindRepo(%q, %q) = %d, %v, %v", bad[0], bad[1], id, ok, err)
		}
	}
	for _, bad := range []int64{0, -1} {
		if ok, err := b.auth.CanRead(ctx, v, bad); ok || err == nil {
			t.Errorf("CanRead(%d) = %v, %v", bad, ok, err)
		}
	}
	if len(b.gh.Requests()) != before {
		t.Errorf("an invalid name or id reached GitHub")
	}
}

// TestFindRepoRemembersIDsNotNames: a name is asked of GitHub each time (it can change hands),
// and what it named is remembered by id only; once octo/secret is renamed and someone else's
// repository takes the name, the name finds the new repository, and the old one is still
// readable by its id.
func TestFindRepoRemembersIDsNotNames(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	c := b.browser(t, true)
	if status, _ := b.signIn(t, c, "alice", "/runs/octo/public"); status != http.StatusOK {
		t.Fatalf("sign-in: %d", status)
	}
	v, ok := b.auth.Viewer(reqWithCookies(t, c, b.srv.URL))
	if !ok {
		t.Fatal("not signed in")
	}
	ctx := context.Background()
	if id, ok, err := b.auth.FindRepo(ctx, v, "octo", "secret"); id != b.secret.ID || !ok || err != nil {
		t.Fatalf("FindRepo(octo/secret) = %d, %v, %v; want %d", id, ok, err, b.secret.ID)
	}
	b.gh.RenameRepo(b.secret, "octo", "vault")
	// Not taken yet: GitHub redirects the old name to the repository, which is still alice's.
	if id, ok, err := b.auth.FindRepo(ctx, v, "octo", "secret"); id != b.secret.ID || !ok || err != nil {
		t.Errorf("the old name, free: %d, %v, %v; want %d", id, ok, err, b.secret.ID)
	}
	squat := b.gh.AddRepo("octo", "secret", nil)
	b.gh.AddInstallation(7, squat)
	b.gh.SetPrivate(squat, true)
	if id, ok, err := b.auth.FindRepo(ctx, v, "octo", "secret"); ok || id != 0 || err != nil {
		t.Errorf("the old name, taken by a repository alice cannot see: %d, %v, %v; want none", id, ok, err)
	}
	if n := b.gh.CountRequests("GET", "/repos/octo/secret"); n != 3 {
		t.Errorf("GitHub was asked about the name %d times, want each time (3)", n)
	}
	if ok, err := b.auth.CanRead(ctx, v, b.secret.ID); !ok || err != nil {
		t.Errorf("the renamed repository by id: %v, %v", ok, err)
	}
	if ok, err := b.auth.CanRead(ctx, v, squat.ID); ok || err != nil {
		t.Errorf("the new repository of the old name by id: %v, %v; want false", ok, err)
	}
}

func TestRevokedTokenSignsOut(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	c := b.browser(t, true)
	if status, _ := b.signIn(t, c, "alice", "/runs/octo/secret"); status != http.StatusOK {
		t.Fatalf("sign-in: %d", status)
	}
	r := reqWithCookies(t, c, b.srv.URL)
	v, _ := b.auth.Viewer(r)
	b.gh.RevokeUserTokens("alice")
	if ok, err := b.auth.CanRead(context.Background(), v, b.public.ID); ok || !errors.Is(err, ErrSignedOut) {
		t.Errorf("revoked token: %v %v, want ErrSignedOut", ok, err)
	}
	if _, ok := b.auth.Viewer(r); ok {
		t.Errorf("a session whose token was revoked is still signed in")
	}
	// The page sends the browser to sign in again; GitHub signs alice in afresh.
	status, body := b.signIn(t, c, "alice", "/runs/octo/secret")
	if status != http.StatusOK || !strings.Contains(body, "signed in as alice") {
		t.Errorf("signing in again: %d %s", status, body)
	}
}

func TestSessionExpiresWithTheToken(t *testing.T) {
	t.Parallel()
	b := setup(t, "", func(c *Config) { c.SessionTTL = 24 * time.Hour })
	c := b.browser(t, true)
	if status, _ := b.signIn(t, c, "alice", "/runs/octo/secret"); status != http.StatusOK {
		t.Fatalf("sign-in: %d", status)
	}
	r := reqWithCookies(t, c, b.srv.URL)
	b.clock.Add(time.Hour)
	if _, ok := b.auth.Viewer(r); !ok {
		t.Fatal("signed out after an hour")
	}
	b.clock.Add(7 * time.Hour) // GitHub's user tokens last 8 hours
	if _, ok := b.auth.Viewer(r); ok {
		t.Errorf("still signed in after the token expired")
	}
}

func TestLogout(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	c := b.browser(t, true)
	if status, _ := b.signIn(t, c, "alice", "/runs/octo/secret"); status != http.StatusOK {
		t.Fatalf("sign-in: %d", status)
	}
	// Another site's form cannot sign the person out.
	req, _ := http.NewRequest("POST", b.srv.URL+"/logout", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site logout: %d", resp.StatusCode)
	}
	if _, ok := b.auth.Viewer(reqWithCookies(t, c, b.srv.URL)); !ok {
		t.Fatal("signed out by a cross-site request")
	}
	resp, err = c.Post(b.srv.URL+"/logout", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, ok := b.auth.Viewer(reqWithCookies(t, c, b.srv.URL)); ok || resp.StatusCode != http.StatusOK {
		t.Errorf("still signed in after logout (%d)", resp.StatusCode)
	}
}

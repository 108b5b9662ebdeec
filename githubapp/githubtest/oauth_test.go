package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// authorize drives the authorize page for the signed-in person and returns the redirect's query.
func authorize(t *testing.T, s *Server, clientID, state string) url.Values {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	q := url.Values{"client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:1/oauth/callback?x=1"}, "state": {state}}
	resp, err := c.Get(s.URL + "/login/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: status %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Path != "/oauth/callback" || loc.Query().Get("x") != "1" {
		t.Fatalf("authorize redirected to %q", resp.Header.Get("Location"))
	}
	return loc.Query()
}

func exchange(t *testing.T, s *Server, secret, code string, jsonAnswer bool) map[string]string {
	t.Helper()
	form := url.Values{"client_id": {s.OAuthClientID()}, "client_secret": {secret}, "code": {code}}
	req, _ := http.NewRequest("POST", s.URL+"/login/oauth/access_token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if jsonAnswer {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("access_token: status %d (GitHub answers errors with 200)", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	out := map[string]string{}
	if jsonAnswer {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("access_token answer is not JSON: %s", body)
		}
		for k, v := range m {
			if s, ok := v.(string); ok {
				out[k] = s
			}
		}
		return out
	}
	v, err := url.ParseQuery(string(body))
	if err != nil {
		t.Fatalf("access_token answer is not form-encoded: %s", body)
	}
	for k := range v {
		out[k] = v.Get(k)
	}
	return out
}

func TestOAuthFlow(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.s
	s.SetPrivate(f.b, true)
	s.SetPermission(f.a, "alice", "write")
	s.SetPermission(f.b, "alice", "read")
	s.SignInAs("alice")

	back := authorize(t, s, s.OAuthClientID(), "st8")
	code := back.Get("code")
	if code == "" || back.Get("state") != "st8" {
		t.Fatalf("authorize: %v", back)
	}
	if got := exchange(t, s, "wrong", code, true); got["error"] != "incorrect_client_credentials" {
		t.Errorf("wrong secret: %v", got)
	}
	tok := exchange(t, s, s.OAuthClientSecret(), code, true)
	user := tok["access_token"]
	if !strings.HasPrefix(user, "ghu_") || tok["token_type"] != "bearer" {
		t.Fatalf("exchange: %v", tok)
	}
	if got := exchange(t, s, s.OAuthClientSecret(), code, true); got["error"] != "bad_verification_code" {
		t.Errorf("reused code: %v", got)
	}
	// Form encoding unless JSON is asked for.
	code2 := authorize(t, s, s.OAuthClientID(), "").Get("code")
	if got := exchange(t, s, s.OAuthClientSecret(), code2, false); !strings.HasPrefix(got["access_token"], "ghu_") || got["expires_in"] != "28800" {
		t.Errorf("form answer: %v", got)
	}

	if status, out := do(t, "GET", s.URL+"/api/v3/user", "Bearer "+user, ""); status != 200 || out["login"] != "alice" {
		t.Errorf("GET /user: %d %v", status, out)
	}
	status, out := do(t, "GET", s.URL+"/api/v3/repos/o/b", "Bearer "+user, "")
	perms, _ := out["permissions"].(map[string]any)
	if status != 200 || perms["pull"] != true || perms["push"] != false || out["private"] != true {
		t.Errorf("GET private repo as reader: %d %v", status, out)
	}
	status, out = do(t, "GET", s.URL+"/api/v3/repos/o/a", "token "+user, "")
	perms, _ = out["permissions"].(map[string]any)
	if status != 200 || perms["push"] != true || perms["admin"] != false {
		t.Errorf("GET repo as writer: %d %v", status, out)
	}

	// bob has no role: the public repository reads, the private one does not exist for him.
	s.SignInAs("bob")
	bob := exchange(t, s, s.OAuthClientSecret(), authorize(t, s, s.OAuthClientID(), "x").Get("code"), true)["access_token"]
	if status, _ := do(t, "GET", s.URL+"/api/v3/repos/o/b", "Bearer "+bob, ""); status != 404 {
		t.Errorf("private repo without a role: %d, want 404", status)
	}
	if status, out := do(t, "GET", s.URL+"/api/v3/repos/o/a", "Bearer "+bob, ""); status != 200 || out["permissions"].(map[string]any)["pull"] != true {
		t.Errorf("public repo without a role: %d %v", status, out)
	}

	// An installation token is not a person.
	if status, _ := do(t, "GET", s.URL+"/api/v3/user", "token "+f.token(t, ""), ""); status != 403 {
		t.Errorf("GET /user with an installation token: %d, want 403", status)
	}
	s.RevokeUserTokens("alice")
	if status, _ := do(t, "GET", s.URL+"/api/v3/user", "Bearer "+user, ""); status != 401 {
		t.Errorf("revoked token: %d, want 401", status)
	}
	if status, _ := do(t, "GET", s.URL+"/api/v3/repos/o/a", "Bearer "+user, ""); status != 401 {
		t.Errorf("revoked token on a repository: %d, want 401", status)
	}
	if got := s.OAuthExchanges(); strings.Join(got, ",") != "alice,alice,bob" {
		t.Errorf("exchanges: %v", got)
	}
}

func TestOAuthDenied(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.SignInAs("alice")
	s.DenyAuthorization(true)
	back := authorize(t, s, s.OAuthClientID(), "st")
	if back.Get("error") != "access_denied" || back.Get("code") != "" || back.Get("state") != "st" {
		t.Errorf("denied: %v", back)
	}
	resp, err := http.Get(s.URL + "/login/oauth/authorize?client_id=someone-else&redirect_uri=http://127.0.0.1/cb")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown client id: %d, want 404", resp.StatusCode)
	}
	s.DenyAuthorization(false)
	s.SetOAuthCallback("http://127.0.0.1:1/oauth/callback")
	if back := authorize(t, s, s.OAuthClientID(), "st"); back.Get("code") == "" {
		t.Errorf("registered callback: %v", back)
	}
	s.SetOAuthCallback("https://frognano.example/oauth/callback")
	resp, err = http.Get(s.URL + "/login/oauth/authorize?client_id=" + s.OAuthClientID() + "&redirect_uri=http://127.0.0.1:1/oauth/callback")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unregistered callback: %d, want 400", resp.StatusCode)
	}
}

func TestOAuthTokenJSONBody(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.SignInAs("alice")
	code := authorize(t, s, s.OAuthClientID(), "").Get("code")
	body, _ := json.Marshal(map[string]string{"client_id": s.OAuthClientID(), "client_secret": s.OAuthClientSecret(), "code": code})
	req, _ := http.NewRequest("POST", s.URL+"/login/oauth/access_token", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if tok, _ := got["access_token"].(string); !strings.HasPrefix(tok, "ghu_") {
		t.Errorf("JSON body: %v", got)
	}
}

package githubtest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// signInToken signs login in at the fake and returns their user token.
func signInToken(t *testing.T, s *Server, login string) string {
	t.Helper()
	s.SignInAs(login)
	tok := exchange(t, s, s.OAuthClientSecret(), authorize(t, s, s.OAuthClientID(), "st").Get("code"), true)["access_token"]
	if tok == "" {
		t.Fatalf("no user token for %s", login)
	}
	return tok
}

// noFollow requests url with auth and returns the status and Location without following it.
func noFollow(t *testing.T, method, url, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", auth)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// TestRenameAndDeleteKeepIDs: a renamed repository keeps its id, privacy, roles and token
// scope, and its old name redirects to /repositories/{id} until a new repository takes the
// name; a deleted one is gone by id and by name; GET /repositories/{id} answers a person's
// token with their permissions and 404 where they may not look.
func TestRenameAndDeleteKeepIDs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	s := f.s
	s.SetPrivate(f.b, true)
	s.SetPermission(f.b, "alice", "read")
	alice := "Bearer " + signInToken(t, s, "alice")
	bob := "Bearer " + signInToken(t, s, "bob")
	inst := "token " + f.token(t, `{"repositories":["b"]}`)
	byID := fmt.Sprintf("%s/api/v3/repositories/%d", s.URL, f.b.ID)

	status, out := do(t, "GET", byID, alice, "")
	if perms, _ := out["permissions"].(map[string]any); status != 200 || out["full_name"] != "o/b" || perms["pull"] != true || perms["push"] != false {
		t.Fatalf("GET /repositories/{id} as a reader: %d %v", status, out)
	}
	if status, _ := do(t, "GET", byID, bob, ""); status != 404 {
		t.Errorf("GET /repositories/{id} of a private repository without a role: %d, want 404", status)
	}
	if status, _ := do(t, "GET", s.URL+"/api/v3/repositories/999999", alice, ""); status != 404 {
		t.Errorf("GET /repositories/{id} of no repository: %d, want 404", status)
	}

	s.RenameRepo(f.b, "o", "renamed")
	status, out = do(t, "GET", byID, alice, "")
	if status != 200 || out["full_name"] != "o/renamed" || out["private"] != true {
		t.Errorf("by id after the rename: %d %v", status, out)
	}
	if status, out := do(t, "GET", byID, inst, ""); status != 200 || out["id"] != float64(f.b.ID) {
		t.Errorf("the installation token scoped to the old name, after the rename: %d %v", status, out)
	}
	if status, loc := noFollow(t, "GET", s.URL+"/api/v3/repos/o/b/issues/1?x=1", alice); status != 301 || loc != byID+"/issues/1?x=1" {
		t.Errorf("the old name: %d to %q, want 301 to the repository by id", status, loc)
	}
	if status, loc := noFollow(t, "PATCH", s.URL+"/api/v3/repos/o/b/pulls/1", alice); status != 307 || !strings.HasPrefix(loc, byID) {
		t.Errorf("the old name, PATCH: %d to %q, want 307", status, loc)
	}
	if status, out := do(t, "GET", s.URL+"/api/v3/repos/o/renamed", alice, ""); status != 200 || out["id"] != float64(f.b.ID) {
		t.Errorf("the new name: %d %v", status, out)
	}

	// A stranger takes the old name: it is their repository now, with another id.
	taken := s.AddRepo("o", "b", nil)
	s.SetPermission(taken, "bob", "admin")
	if taken.ID == f.b.ID {
		t.Fatal("the new repository got the old one's id")
	}
	if status, out := do(t, "GET", s.URL+"/api/v3/repos/o/b", bob, ""); status != 200 || out["id"] != float64(taken.ID) || out["private"] != false {
		t.Errorf("the taken name: %d %v", status, out)
	}
	if status, _ := do(t, "GET", s.URL+"/api/v3/repos/o/b", inst, ""); status != 404 {
		t.Errorf("the old repository's installation token on the new one: %d, want 404", status)
	}

	// The owner renamed: every repository moves, ids stay.
	s.RenameOwner("o", "p")
	if status, out := do(t, "GET", s.URL+"/api/v3/repos/p/a", "token "+f.token(t, ""), ""); status != 200 || out["id"] != float64(f.a.ID) {
		t.Errorf("after the owner's rename: %d %v", status, out)
	}

	s.DeleteRepo(f.b)
	if status, _ := do(t, "GET", byID, alice, ""); status != 404 {
		t.Errorf("a deleted repository by id: %d, want 404", status)
	}
	if status, _ := noFollow(t, "GET", s.URL+"/api/v3/repos/p/renamed", alice); status != 404 {
		t.Errorf("a deleted repository by name: %d, want 404", status)
	}
}

package githubtest

import (
	"encoding/base64"
	"testing"
)

// TestRevokeUserToken: the App revokes one user token with its client id and secret, as
// GitHub's DELETE /applications/{client_id}/token does; other credentials revoke nothing.
func TestRevokeUserToken(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.SignInAs("alice")
	first := exchange(t, s, s.OAuthClientSecret(), authorize(t, s, s.OAuthClientID(), "a").Get("code"), true)["access_token"]
	second := exchange(t, s, s.OAuthClientSecret(), authorize(t, s, s.OAuthClientID(), "b").Get("code"), true)["access_token"]
	basic := func(id, secret string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
	}
	path := s.URL + "/api/v3/applications/" + s.OAuthClientID() + "/token"
	body := `{"access_token":"` + first + `"}`

	for name, auth := range map[string]string{
		"NoCredentials": "",
		"WrongSecret":   basic(s.OAuthClientID(), "not-the-secret"),
		"UserToken":     "Bearer " + second,
	} {
		if status, _ := do(t, "DELETE", path, auth, body); status != 404 {
			t.Errorf("%s: %d, want 404", name, status)
		}
	}
	if status, _ := do(t, "DELETE", path, basic(s.OAuthClientID(), s.OAuthClientSecret()), `{}`); status != 422 {
		t.Errorf("without a token: %d, want 422", status)
	}
	if status, _ := do(t, "GET", s.URL+"/api/v3/user", "Bearer "+first, ""); status != 200 {
		t.Fatalf("the token was revoked by a refused request: %d", status)
	}
	if status, _ := do(t, "DELETE", path, basic(s.OAuthClientID(), s.OAuthClientSecret()), body); status != 204 {
		t.Errorf("revoking: %d, want 204", status)
	}
	if status, _ := do(t, "GET", s.URL+"/api/v3/user", "Bearer "+first, ""); status != 401 {
		t.Errorf("the revoked token: %d, want 401", status)
	}
	if status, _ := do(t, "GET", s.URL+"/api/v3/user", "Bearer "+second, ""); status != 200 {
		t.Errorf("the other token of the same person: %d, want 200", status)
	}
	if status, _ := do(t, "DELETE", path, basic(s.OAuthClientID(), s.OAuthClientSecret()), body); status != 404 {
		t.Errorf("revoking again: %d, want 404", status)
	}
}

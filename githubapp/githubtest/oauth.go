package githubtest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The fake App's user-to-server OAuth flow (sign-in with GitHub), as GitHub runs it for a
// GitHub App: the browser is sent to URL+"/login/oauth/authorize", GitHub redirects it back to
// the callback with a one-time code and the state, and the App exchanges the code (with its
// client id and secret) at URL+"/login/oauth/access_token" for a user token ("ghu_…", expiring
// after 8 hours) that acts for that person on GET /user and GET /repos/{owner}/{repo}.
//
// The person signed in at the fake GitHub is the one SignInAs names; a test changes it to sign
// in as someone else. What a person may read is their role set with SetPermission, or any
// repository that is not private (SetPrivate).

// userTokenLifetime is how long a user token lasts (GitHub's default for expiring tokens).
const userTokenLifetime = 8 * time.Hour

// oauthCodeLifetime is how long GitHub accepts an authorization code.
const oauthCodeLifetime = 10 * time.Minute

// oauthState is the OAuth side of the fake. Guarded by Server.mu.
type oauthState struct {
	secret     string // the client secret, made on first use
	signedIn   string // the person the authorize page acts for
	deny       bool   // the person declines the authorization
	codes      map[string]*oauthCode
	userTokens map[string]*userToken
	private    map[int64]bool // by repository id: a rename keeps it
	callback   string         // the App's registered callback URL; "" accepts any
	exchanges  []string       // logins a code was exchanged for, in order
}

type oauthCode struct {
	login, redirectURI string
	expires            time.Time
}

type userToken struct {
	login   string
	expires time.Time
}

func (s *Server) oauthRoutes() {
	s.web.HandleFunc("GET /login/oauth/authorize", s.handleAuthorize)
	s.web.HandleFunc("POST /login/oauth/access_token", s.handleOAuthToken)
	s.api.HandleFunc("GET "+apiPrefix+"/user", s.handleGetUser)
	s.api.HandleFunc("DELETE "+apiPrefix+"/applications/{client_id}/token", s.handleRevokeUserToken)
}

// OAuthClientID is the fake App's OAuth client id (what GET /app reports as client_id).
func (s *Server) OAuthClientID() string { return "Iv1.fake" + AppSlug }

// OAuthClientSecret is the fake App's OAuth client secret.
func (s *Server) OAuthClientSecret() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oauthSecretLocked()
}

func (s *Server) oauthSecretLocked() string {
	if s.oauth.secret == "" {
		s.oauth.secret = randomHex(20)
	}
	return s.oauth.secret
}

// SignInAs makes login the person signed in at the fake GitHub: the next authorization is
// theirs. An empty login signs nobody in, and an authorization then fails the test.
func (s *Server) SignInAs(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.signedIn = login
}

// DenyAuthorization makes the signed-in person decline (true) or accept (false) the App's
// authorization request; declined, GitHub redirects back with error=access_denied.
func (s *Server) DenyAuthorization(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.deny = deny
}

// SetOAuthCallback registers the App's callback URL: an authorization whose redirect_uri is not
// under it gets GitHub's error page instead of a code.
func (s *Server) SetOAuthCallback(callback string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.callback = callback
}

// SetPrivate makes repo private (only people with a role may read it) or public.
func (s *Server) SetPrivate(repo *Repo, private bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.oauth.private == nil {
		s.oauth.private = map[int64]bool{}
	}
	s.oauth.private[repo.ID] = private
}

// UserTokens returns the user tokens the fake issued, to assert none leaked.
func (s *Server) UserTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for v := range s.oauth.userTokens {
		out = append(out, v)
	}
	return out
}

// OAuthExchanges returns the logins for which a code was exchanged for a token, in order.
func (s *Server) OAuthExchanges() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.oauth.exchanges...)
}

// RevokeUserTokens makes every user token of login invalid (the person revoked the App's
// authorization, or the token expired).
func (s *Server) RevokeUserTokens(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for v, tk := range s.oauth.userTokens {
		if tk.login == login {
			delete(s.oauth.userTokens, v)
		}
	}
}

// handleRevokeUserToken is DELETE /applications/{client_id}/token: the App revokes one user
// token, authenticating with its client id and secret (basic authentication) and naming the
// token in a JSON body ({"access_token": …}). 204 when revoked; 404 for other credentials or a
// token the fake does not know (GitHub does not say which), 422 without a token.
func (s *Server) handleRevokeUserToken(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok || id != s.OAuthClientID() || r.PathValue("client_id") != id ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(s.oauthSecretLocked())) != 1 {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if body.AccessToken == "" {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	if _, known := s.oauth.userTokens[body.AccessToken]; !known {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	delete(s.oauth.userTokens, body.AccessToken)
	w.WriteHeader(http.StatusNoContent)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand does not fail on Linux
	return hex.EncodeToString(b)
}

// handleAuthorize is the authorization page. GitHub shows it to the signed-in person and
// redirects to redirect_uri with code and state once they authorize; the fake authorizes at
// once. An unknown client id gets GitHub's 404 page.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != s.OAuthClientID() {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme == "" || redirect.Host == "" {
		// A GitHub App without redirect_uri goes to its first registered callback; frognano
		// always names its own, so a missing one is a bug in the client.
		s.t.Errorf("fake GitHub: authorize without an absolute redirect_uri: %q", q.Get("redirect_uri"))
		http.Error(w, "redirect_uri mismatch", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	login, deny, registered := s.oauth.signedIn, s.oauth.deny, s.oauth.callback
	s.mu.Unlock()
	if registered != "" && !strings.HasPrefix(q.Get("redirect_uri"), registered) {
		http.Error(w, "The redirect_uri is not associated with this application.", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	code := ""
	if login != "" && !deny {
		code = randomHex(10)
		if s.oauth.codes == nil {
			s.oauth.codes = map[string]*oauthCode{}
		}
		s.oauth.codes[code] = &oauthCode{login: login, redirectURI: redirect.String(), expires: time.Now().Add(oauthCodeLifetime)}
	}
	s.mu.Unlock()
	if login == "" {
		s.t.Errorf("fake GitHub: authorize with nobody signed in (call SignInAs)")
		http.Error(w, "sign in to GitHub first", http.StatusUnauthorized)
		return
	}
	back := redirect.Query()
	if deny {
		back.Set("error", "access_denied")
		back.Set("error_description", "The user has denied your application access.")
		back.Set("error_uri", "https://docs.github.com/apps/troubleshooting-authorization-request-errors/#access-denied")
	} else {
		back.Set("code", code)
	}
	if st := q.Get("state"); st != "" {
		back.Set("state", st)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// handleOAuthToken is POST /login/oauth/access_token. Like GitHub it takes the parameters from
// the query or a form body, answers errors with status 200 and an "error" field, and answers
// JSON only when asked (Accept: application/json), form encoding otherwise.
func (s *Server) handleOAuthToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/json" {
		var body map[string]string
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeError(w, http.StatusBadRequest, "Problems parsing JSON")
			return
		}
		for k, v := range body {
			r.Form.Set(k, v)
		}
	}
	clientID, secret, code := r.Form.Get("client_id"), r.Form.Get("client_secret"), r.Form.Get("code")
	s.mu.Lock()
	defer s.mu.Unlock()
	answer := func(v map[string]any) { writeOAuth(w, r, v) }
	if clientID != s.OAuthClientID() || subtle.ConstantTimeCompare([]byte(secret), []byte(s.oauthSecretLocked())) != 1 {
		answer(oauthError("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect."))
		return
	}
	c, ok := s.oauth.codes[code]
	if !ok || time.Now().After(c.expires) {
		answer(oauthError("bad_verification_code", "The code passed is incorrect or expired."))
		return
	}
	if ru := r.Form.Get("redirect_uri"); ru != "" && ru != c.redirectURI {
		answer(oauthError("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application."))
		return
	}
	delete(s.oauth.codes, code) // a code works once
	value := "ghu_" + strings.TrimPrefix(newTokenValue(), "ghs_")
	if s.oauth.userTokens == nil {
		s.oauth.userTokens = map[string]*userToken{}
	}
	s.oauth.userTokens[value] = &userToken{login: c.login, expires: time.Now().Add(userTokenLifetime)}
	s.oauth.exchanges = append(s.oauth.exchanges, c.login)
	answer(map[string]any{
		"access_token": value, "expires_in": int(userTokenLifetime.Seconds()),
		"refresh_token": "ghr_" + randomHex(38), "refresh_token_expires_in": 15811200,
		"token_type": "bearer", "scope": "",
	})
}

func oauthError(code, description string) map[string]any {
	return map[string]any{
		"error": code, "error_description": description,
		"error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#" + strings.ReplaceAll(code, "_", "-"),
	}
}

func writeOAuth(w http.ResponseWriter, r *http.Request, v map[string]any) {
	accept, _, _ := mime.ParseMediaType(r.Header.Get("Accept"))
	if accept == "application/json" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(v)
		return
	}
	form := url.Values{}
	for k, x := range v {
		b, _ := json.Marshal(x)
		form.Set(k, strings.Trim(string(b), `"`))
	}
	w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	_, _ = w.Write([]byte(form.Encode()))
}

// lookupUserToken returns the login a request's user token acts for ("token X" or "Bearer X"),
// and whether the request carries a user token at all (a "ghu_" one, valid or not).
func (s *Server) lookupUserToken(r *http.Request) (login string, isUser bool) {
	auth := r.Header.Get("Authorization")
	value, ok := strings.CutPrefix(auth, "token ")
	if !ok {
		value, _ = strings.CutPrefix(auth, "Bearer ")
	}
	if !strings.HasPrefix(value, "ghu_") {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tk, ok := s.oauth.userTokens[value]
	if !ok || time.Now().After(tk.expires) {
		return "", true
	}
	return tk.login, true
}

// handleGetUser is GET /user: the person a user token acts for. An installation token is
// refused as GitHub refuses it.
func (s *Server) handleGetUser(w http.ResponseWriter, r *http.Request) {
	login, isUser := s.lookupUserToken(r)
	switch {
	case isUser && login == "":
		writeError(w, http.StatusUnauthorized, "Bad credentials")
	case isUser:
		u := s.userJSON(login, 7, "User")
		u["name"], u["email"] = nil, nil
		writeJSON(w, http.StatusOK, u)
	case s.lookupToken(r) != nil:
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
	default:
		writeError(w, http.StatusUnauthorized, "Requires authentication")
	}
}

// serveUserRepo answers GET /repos/{owner}/{repo} when the request carries a user token, and
// reports whether it did.
func (s *Server) serveUserRepo(w http.ResponseWriter, r *http.Request) bool {
	login, isUser := s.lookupUserToken(r)
	if !isUser {
		return false
	}
	s.writeUserRepo(w, login, s.Repo(r.PathValue("owner"), r.PathValue("repo")))
	return true
}

// writeUserRepo answers a request for repo (nil: none by that name or id) made with login's
// user token ("" : a token GitHub does not know). The answer carries the person's permissions;
// a private repository they have no role on, or one the App is not installed on (a user token
// reaches no further than the App), is 404 as GitHub answers it.
func (s *Server) writeUserRepo(w http.ResponseWriter, login string, repo *Repo) {
	if login == "" {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if repo == nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.mu.Lock()
	role := repo.permissions[login]
	private := s.oauth.private[repo.ID]
	installed := repo.installationID != 0
	s.mu.Unlock()
	if role == "none" {
		role = ""
	}
	if role == "" && !private {
		role = "read" // anyone may read a public repository
	}
	if role == "" || (private && !installed) {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	rank := map[string]int{"read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
	out := s.repoJSON(repo)
	if private {
		out["private"], out["visibility"] = true, "private"
	}
	out["permissions"] = map[string]bool{
		"pull": rank >= 1, "triage": rank >= 2, "push": rank >= 3, "maintain": rank >= 4, "admin": rank >= 5,
	}
	writeJSON(w, http.StatusOK, out)
}

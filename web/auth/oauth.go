package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
)

// stateLifetime is how long a sign-in may take between /login and the callback.
const stateLifetime = 10 * time.Minute

// maxGitHubAnswer bounds what auth reads of one GitHub answer.
const maxGitHubAnswer = 1 << 20

// OAuth signs people in with the GitHub App's user-to-server flow and checks read access with
// their own token. Build it with New.
type OAuth struct {
	cfg      Config
	jar      *jar
	web, api string // GitHub web origin; API base with a trailing slash
	callback string // PublicURL + "/oauth/callback"
	log      *slog.Logger

	reads   *expiring[bool]     // sha256(token) + repo -> may read
	used    *expiring[struct{}] // states already used: a callback works once
	revoked *expiring[struct{}] // sha256(token) of tokens GitHub refused
}

var _ Authenticator = (*OAuth)(nil)

func newOAuth(cfg Config, j *jar) (*OAuth, error) {
	web, api, err := cfg.githubEndpoints()
	if err != nil {
		return nil, err
	}
	pub, err := parsePublicURL(cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	return &OAuth{
		cfg: cfg, jar: j, web: web, api: api, callback: pub.String() + "/oauth/callback", log: cfg.Logger,
		reads: newExpiring[bool](cfg.ReadCacheSize), used: newExpiring[struct{}](cfg.ReadCacheSize),
		revoked: newExpiring[struct{}](cfg.ReadCacheSize),
	}, nil
}

// Routes mounts GET /login, GET /oauth/callback, and GET and POST /logout.
func (o *OAuth) Routes(r chi.Router) {
	r.Get("/login", o.handleLogin)
	r.Get("/oauth/callback", o.handleCallback)
	mountLogout(r, o.jar)
}

// Viewer returns the person of a valid session whose token GitHub has not refused.
func (o *OAuth) Viewer(r *http.Request) (Viewer, bool) {
	s, ok := o.jar.session(r)
	if !ok || s.Mode != "oauth" || s.Login == "" || s.Token == "" {
		return Viewer{}, false
	}
	if _, gone := o.revoked.get(tokenKey(s.Token), o.cfg.Now()); gone {
		return Viewer{}, false
	}
	return Viewer{Login: s.Login, Token: s.Token}, true
}

// tokenKey identifies a token in memory without keeping it.
func tokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// oauthState is the state cookie: the one-time value GitHub must bring back, and where to go.
type oauthState struct {
	State string `json:"s"`
	Next  string `json:"n"`
}

// handleLogin starts a sign-in: a fresh state bound to this browser by a short-lived cookie,
// then GitHub's authorize page.
func (o *OAuth) handleLogin(w http.ResponseWriter, r *http.Request) {
	next, ok := startSignIn(w, r, o.Viewer)
	if !ok {
		return
	}
	st := oauthState{State: randomToken(), Next: next}
	if err := o.jar.set(w, stateCookie, st, o.cfg.Now().Add(stateLifetime)); err != nil {
		errorPage(w, http.StatusInternalServerError, "Cannot sign in", "The sign-in could not be started.")
		return
	}
	q := url.Values{"client_id": {o.cfg.ClientID}, "redirect_uri": {o.callback}, "state": {st.State}, "allow_signup": {"false"}}
	redirect(w, r, o.web+"/login/oauth/authorize?"+q.Encode(), http.StatusFound)
}

// handleCallback finishes a sign-in: the state must match this browser's cookie and be unused;
// the code is exchanged for the person's token, and the session is set.
func (o *OAuth) handleCallback(w http.ResponseWriter, r *http.Request) {
	now := o.cfg.Now()
	q := r.URL.Query()
	var st oauthState
	if err := o.jar.get(r, stateCookie, &st); err != nil || st.State == "" {
		errorPage(w, http.StatusBadRequest, "Sign-in expired",
			"This sign-in was not started in this browser, or took too long. Start it again.")
		return
	}
	o.jar.clear(w, stateCookie)
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(st.State)) != 1 {
		errorPage(w, http.StatusBadRequest, "Sign-in refused", "The answer from GitHub does not belong to the sign-in this browser started.")
		return
	}
	if _, seen := o.used.get(st.State, now); seen {
		errorPage(w, http.StatusBadRequest, "Sign-in refused", "This sign-in was already used.")
		return
	}
	o.used.put(st.State, struct{}{}, now.Add(stateLifetime), now)
	if e := q.Get("error"); e != "" {
		msg := "GitHub did not authorize the sign-in."
		if e == "access_denied" {
			msg = "The authorization was declined on GitHub."
		}
		errorPage(w, http.StatusForbidden, "Not signed in", msg)
		return
	}
	code := q.Get("code")
	if code == "" || len(code) > 256 {
		errorPage(w, http.StatusBadRequest, "Sign-in refused", "GitHub's answer carries no code.")
		return
	}
	token, lifetime, err := o.exchange(r.Context(), code)
	if err != nil {
		o.log.ErrorContext(r.Context(), "signing in with GitHub: exchanging the code", "error", err)
		errorPage(w, http.StatusBadGateway, "Sign-in failed", "GitHub did not confirm the sign-in. Try again; if it keeps failing, the operator's log says why.")
		return
	}
	login, err := o.user(r.Context(), token)
	if err != nil {
		o.log.ErrorContext(r.Context(), "signing in with GitHub: reading the user", "error", err)
		errorPage(w, http.StatusBadGateway, "Sign-in failed", "GitHub did not say who signed in. Try again.")
		return
	}
	exp := now.Add(o.cfg.SessionTTL)
	if lifetime > 0 && now.Add(lifetime).Before(exp) {
		exp = now.Add(lifetime)
	}
	if err := o.jar.startSession(w, session{Mode: "oauth", Login: login, Token: token}, exp); err != nil {
		errorPage(w, http.StatusInternalServerError, "Sign-in failed", "The session could not be stored.")
		return
	}
	o.log.InfoContext(r.Context(), "signed in to the run pages", "login", login)
	redirect(w, r, st.Next, http.StatusSeeOther)
}

// exchange trades the code for a user token at GitHub's access_token endpoint. GitHub answers
// errors with status 200 and an "error" field.
func (o *OAuth) exchange(ctx context.Context, code string) (string, time.Duration, error) {
	form := url.Values{"client_id": {o.cfg.ClientID}, "client_secret": {o.cfg.ClientSecret}, "code": {code}, "redirect_uri": {o.callback}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.web+"/login/oauth/access_token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("asking GitHub for the token: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("GitHub answered %d", resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxGitHubAnswer)).Decode(&out); err != nil {
		return "", 0, fmt.Errorf("reading GitHub's answer: %w", err)
	}
	switch {
	case out.Error == "incorrect_client_credentials":
		return "", 0, fmt.Errorf("GitHub refused the App's client id or secret (%s, %s): %s", EnvClientID, EnvClientSecret, out.Error)
	case out.Error != "":
		// Error codes are GitHub's own short words; the description is GitHub's text.
		return "", 0, fmt.Errorf("GitHub refused the code: %s", out.Error)
	case out.AccessToken == "":
		return "", 0, errors.New("GitHub's answer holds no token")
	}
	return out.AccessToken, time.Duration(out.ExpiresIn) * time.Second, nil
}

// apiGet asks GitHub's API for path with the person's token.
func (o *OAuth) apiGet(ctx context.Context, token, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.api+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("Authorization", "Bearer "+token)
	return o.cfg.HTTPClient.Do(req)
}

// user returns the login the token acts for (GET /user).
func (o *OAuth) user(ctx context.Context, token string) (string, error) {
	resp, err := o.apiGet(ctx, token, "user")
	if err != nil {
		return "", fmt.Errorf("asking GitHub who signed in: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /user: GitHub answered %d", resp.StatusCode)
	}
	var u struct {
		Login string `json:"login"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxGitHubAnswer)).Decode(&u); err != nil {
		return "", fmt.Errorf("reading GET /user: %w", err)
	}
	if !validOwner.MatchString(u.Login) {
		return "", errors.New("GET /user: the answer holds no valid login")
	}
	return u.Login, nil
}

// GitHub's names: a login or organization (letters, digits, hyphens; GHES also allows "_"),
// and a repository (letters, digits, ".", "-", "_", not "." or "..").
var (
	validOwner = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,38})$`)
	validRepo  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// CanRead asks GitHub, with v's own token, whether v may read owner/repo (permissions.pull of
// GET /repos/{owner}/{repo}); 404 or 403 mean no. Answers are remembered for ReadCacheTTL.
// A token GitHub refuses (401) ends v's session: ErrSignedOut. Any other failure is an error,
// never a yes, and is not remembered.
func (o *OAuth) CanRead(ctx context.Context, v Viewer, owner, repo string) (bool, error) {
	if !validOwner.MatchString(owner) || !validRepo.MatchString(repo) || repo == "." || repo == ".." {
		return false, fmt.Errorf("checking read access: %q/%q is not a repository name", owner, repo)
	}
	if v.Token == "" {
		return false, ErrSignedOut
	}
	now := o.cfg.Now()
	tk := tokenKey(v.Token)
	if _, gone := o.revoked.get(tk, now); gone {
		return false, ErrSignedOut
	}
	key := tk + " " + strings.ToLower(owner+"/"+repo)
	if ok, hit := o.reads.get(key, now); hit {
		return ok, nil
	}
	resp, err := o.apiGet(ctx, v.Token, "repos/"+url.PathEscape(owner)+"/"+url.PathEscape(repo))
	if err != nil {
		return false, fmt.Errorf("checking read access to %s/%s: %w", owner, repo, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		o.reads.put(key, false, now.Add(o.cfg.ReadCacheTTL), now)
		return false, nil
	case http.StatusForbidden:
		// Not remembered: a 403 may also be a rate limit that passes.
		return false, nil
	case http.StatusUnauthorized:
		o.revoked.put(tk, struct{}{}, now.Add(o.cfg.SessionTTL), now)
		o.log.InfoContext(ctx, "a run-page session ended: GitHub no longer accepts its token", "login", v.Login)
		return false, ErrSignedOut
	default:
		return false, fmt.Errorf("checking read access to %s/%s: GitHub answered %d", owner, repo, resp.StatusCode)
	}
	var out struct {
		Permissions struct {
			Pull bool `json:"pull"`
		} `json:"permissions"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxGitHubAnswer)).Decode(&out); err != nil {
		return false, fmt.Errorf("checking read access to %s/%s: reading GitHub's answer: %w", owner, repo, err)
	}
	o.reads.put(key, out.Permissions.Pull, now.Add(o.cfg.ReadCacheTTL), now)
	return out.Permissions.Pull, nil
}

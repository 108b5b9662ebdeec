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
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/frognano/frognano/internal/logging"
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
	mountLogout(r, o.jar, o.revokeToken)
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
		o.log.ErrorContext(r.Context(), "signing in with GitHub: exchanging the code", logging.Err(err))
		errorPage(w, http.StatusBadGateway, "Sign-in failed", "GitHub did not confirm the sign-in. Try again; if it keeps failing, the operator's log says why.")
		return
	}
	login, err := o.user(r.Context(), token)
	if err != nil {
		o.log.ErrorContext(r.Context(), "signing in with GitHub: reading the user", logging.Err(err))
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

// CanRead asks GitHub, with v's own token, whether v may read the repository whose id is
// repoID: permissions.pull of GET /repositories/{id}, which follows the repository through
// renames and transfers, is 404 once it is deleted, and never answers for another repository
// that took its name. 404 or 403 mean no. Answers are remembered for ReadCacheTTL, by token and
// id. A token GitHub refuses (401) ends v's session: ErrSignedOut. Any other failure is an
// error, never a yes, and is not remembered.
func (o *OAuth) CanRead(ctx context.Context, v Viewer, repoID int64) (bool, error) {
	if repoID <= 0 {
		return false, fmt.Errorf("checking read access: %d is not a repository id", repoID)
	}
	now := o.cfg.Now()
	tk, err := o.liveToken(v, now)
	if err != nil {
		return false, err
	}
	key := readKey(tk, repoID)
	if ok, hit := o.reads.get(key, now); hit {
		return ok, nil
	}
	ans, err := o.askRepo(ctx, v, tk, "repositories/"+strconv.FormatInt(repoID, 10))
	if err != nil {
		return false, fmt.Errorf("checking read access to repository %d: %w", repoID, err)
	}
	if ans.found && ans.id != repoID {
		return false, fmt.Errorf("checking read access to repository %d: GitHub answered for repository %d", repoID, ans.id)
	}
	if ans.final {
		o.reads.put(key, ans.pull, now.Add(o.cfg.ReadCacheTTL), now)
	}
	return ans.pull, nil
}

// FindRepo asks GitHub, with v's own token, which repository is named owner/repo now
// (GET /repos/{owner}/{repo}; a name a repository had before a rename, and nobody took since,
// redirects to it) and whether v may read it. What v may read of it is remembered by id, as
// CanRead's answers are; the name's meaning is not remembered, since a name can change hands.
func (o *OAuth) FindRepo(ctx context.Context, v Viewer, owner, repo string) (int64, bool, error) {
	if !validOwner.MatchString(owner) || !validRepo.MatchString(repo) || repo == "." || repo == ".." {
		return 0, false, fmt.Errorf("finding a repository: %q/%q is not a repository name", owner, repo)
	}
	now := o.cfg.Now()
	tk, err := o.liveToken(v, now)
	if err != nil {
		return 0, false, err
	}
	ans, err := o.askRepo(ctx, v, tk, "repos/"+url.PathEscape(owner)+"/"+url.PathEscape(repo))
	if err != nil {
		return 0, false, fmt.Errorf("finding the repository %s/%s: %w", owner, repo, err)
	}
	if !ans.found {
		return 0, false, nil
	}
	o.reads.put(readKey(tk, ans.id), ans.pull, now.Add(o.cfg.ReadCacheTTL), now)
	return ans.id, ans.pull, nil
}

// liveToken returns the key of v's token, or ErrSignedOut when v holds none or GitHub
// refused it.
func (o *OAuth) liveToken(v Viewer, now time.Time) (string, error) {
	if v.Token == "" {
		return "", ErrSignedOut
	}
	tk := tokenKey(v.Token)
	if _, gone := o.revoked.get(tk, now); gone {
		return "", ErrSignedOut
	}
	return tk, nil
}

// readKey is a read cache entry's key: the token's key and the repository's id, never a name.
func readKey(tk string, repoID int64) string { return tk + " " + strconv.FormatInt(repoID, 10) }

// repoAnswer is what GitHub said of one repository to a person.
type repoAnswer struct {
	found bool  // 200: the repository, which the person can see
	id    int64 // its id, when found
	pull  bool  // the person may read it
	final bool  // found, or 404: an answer to remember (a 403 may be a rate limit that passes)
}

// askRepo asks GitHub's API for a repository (path: repos/{owner}/{repo} or
// repositories/{id}) with v's token. 404 and 403 are a no; 401 ends v's session
// (ErrSignedOut); anything else is an error.
func (o *OAuth) askRepo(ctx context.Context, v Viewer, tk, path string) (repoAnswer, error) {
	resp, err := o.apiGet(ctx, v.Token, path)
	if err != nil {
		return repoAnswer{}, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return repoAnswer{final: true}, nil
	case http.StatusForbidden:
		return repoAnswer{}, nil
	case http.StatusUnauthorized:
		now := o.cfg.Now()
		o.revoked.put(tk, struct{}{}, now.Add(o.cfg.SessionTTL), now)
		o.log.InfoContext(ctx, "a run-page session ended: GitHub no longer accepts its token", "login", v.Login)
		return repoAnswer{}, ErrSignedOut
	default:
		return repoAnswer{}, fmt.Errorf("GitHub answered %d", resp.StatusCode)
	}
	var out struct {
		ID          int64 `json:"id"`
		Permissions struct {
			Pull bool `json:"pull"`
		} `json:"permissions"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxGitHubAnswer)).Decode(&out); err != nil {
		return repoAnswer{}, fmt.Errorf("reading GitHub's answer: %w", err)
	}
	if out.ID <= 0 {
		return repoAnswer{}, errors.New("GitHub's answer holds no repository id")
	}
	return repoAnswer{found: true, id: out.ID, pull: out.Permissions.Pull, final: true}, nil
}

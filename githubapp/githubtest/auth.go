package githubtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// appPermissions are the permissions the fake App was granted at installation.
var appPermissions = map[string]string{
	"contents": "write", "pull_requests": "write", "issues": "write", "metadata": "read", "checks": "write",
	"actions": "read", // job logs for CI follow-ups; frognano asks for it in a token of its own
}

var levels = map[string]int{"none": 0, "read": 1, "write": 2, "admin": 3}

type token struct {
	value          string
	installationID int64
	repos          []int64 // repository ids, as GitHub scopes a token: a rename keeps them
	permissions    map[string]string
	expires        time.Time
}

func (tk *token) allows(repo *Repo, perm, level string) bool {
	// A repository that left the token's installation (transferred, removed from its
	// repository access) is out of reach at once, as on GitHub: the token names it by id only.
	if time.Now().After(tk.expires) || !slices.Contains(tk.repos, repo.ID) || repo.installationID != tk.installationID {
		return false
	}
	have := tk.permissions[perm]
	if perm == "metadata" && have == "" {
		have = "read" // every installation token can read metadata
	}
	return levels[have] >= levels[level]
}

// TokenRequest is one POST /app/installations/{id}/access_tokens the fake answered.
type TokenRequest struct {
	InstallationID int64
	Repositories   []string          // names asked for; empty means all of the installation's
	Permissions    map[string]string // asked for; empty means all of the App's
	Token          string            // issued
}

// AddInstallation installs the App on repos under installation id.
func (s *Server) AddInstallation(id int64, repos ...*Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.installations[id] = append(s.installations[id], repos...)
	for _, r := range repos {
		r.installationID = id
	}
}

// IssuedTokens returns every installation token the fake issued, to assert none leaked.
func (s *Server) IssuedTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// TokenRequests returns the access-token requests answered, with their restrictions.
func (s *Server) TokenRequests() []TokenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TokenRequest(nil), s.tokenRequests...)
}

// RevokeTokens makes every token issued so far invalid, as an expiry would.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
}

const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newTokenValue makes a token shaped like GitHub's: "ghs_" and 36 alphanumerics.
func newTokenValue() string {
	b := make([]byte, 36)
	n := big.NewInt(int64(len(tokenAlphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic(err) // crypto/rand does not fail on Linux
		}
		b[i] = tokenAlphabet[k.Int64()]
	}
	return "ghs_" + string(b)
}

// verifyJWT checks what GitHub checks of an App JWT: RS256 signed by the App key, iss the App
// id, not expired, issued at most 60 s in the future, and valid for at most 10 minutes.
func (s *Server) verifyJWT(r *http.Request) error {
	auth := r.Header.Get("Authorization")
	raw, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		return errors.New("a JSON web token must be sent as Bearer")
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return errors.New("malformed JWT")
	}
	var header struct{ Alg, Typ string }
	if err := decodeSegment(parts[0], &header); err != nil || header.Alg != "RS256" {
		return errors.New("JWT must be RS256")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return errors.New("malformed JWT signature")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	s.mu.Lock()
	key := s.key // RotateAppKey replaces it
	s.mu.Unlock()
	if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return errors.New(badJWTMessage) // GitHub's words for a JWT it cannot verify
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Iat int64           `json:"iat"`
		Exp int64           `json:"exp"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return errors.New("malformed JWT claims")
	}
	iss := strings.Trim(string(claims.Iss), `"`)
	if iss != strconv.FormatInt(s.AppID, 10) {
		return fmt.Errorf("JWT issuer %q is not this App", iss)
	}
	now := time.Now().Unix()
	switch {
	case claims.Exp <= now:
		return errors.New("'Expiration time' claim ('exp') must be a numeric value representing the future time")
	case claims.Iat > now+60:
		return errors.New("'Issued at' claim ('iat') must be an Integer representing a time in the past")
	case claims.Exp-claims.Iat > 600:
		return errors.New("'Expiration time' claim ('exp') is too far in the future")
	}
	return nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// handleAccessToken is POST /app/installations/{installation_id}/access_tokens.
func (s *Server) handleAccessToken(w http.ResponseWriter, r *http.Request) {
	if err := s.verifyJWT(r); err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	id, err := strconv.ParseInt(r.PathValue("installation_id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	var req struct {
		Repositories  []string          `json:"repositories"`
		RepositoryIDs []int64           `json:"repository_ids"`
		Permissions   map[string]string `json:"permissions"`
	}
	if r.ContentLength != 0 {
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, "Problems parsing JSON")
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	installed, ok := s.installations[id]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if st := s.inst[id]; st != nil && st.suspended {
		writeError(w, http.StatusForbidden, "This installation has been suspended")
		return
	}
	granted := s.installPerms(id)
	var repos []*Repo
	if len(req.Repositories) == 0 && len(req.RepositoryIDs) == 0 {
		repos = installed
	}
	for _, name := range req.Repositories {
		i := slices.IndexFunc(installed, func(r *Repo) bool { return r.Name == name })
		if i < 0 {
			writeTokenRefusal(w, "There is at least one repository that does not exist or is not accessible to the parent installation.")
			return
		}
		repos = append(repos, installed[i])
	}
	for _, rid := range req.RepositoryIDs {
		i := slices.IndexFunc(installed, func(r *Repo) bool { return r.ID == rid })
		if i < 0 {
			writeTokenRefusal(w, "There is at least one repository that does not exist or is not accessible to the parent installation.")
			return
		}
		repos = append(repos, installed[i])
	}
	perms := map[string]string{}
	for k, v := range granted {
		perms[k] = v
	}
	if len(req.Permissions) > 0 {
		perms = map[string]string{}
		for k, v := range req.Permissions {
			have, ok := granted[k]
			if !ok || levels[v] > levels[have] || (v != "read" && v != "write" && v != "admin") {
				writeTokenRefusal(w, "The permissions requested are not granted to this installation.")
				return
			}
			perms[k] = v
		}
	}
	tk := &token{value: newTokenValue(), installationID: id, permissions: perms, expires: time.Now().Add(time.Hour)}
	reposJSON := []any{}
	for _, rp := range repos {
		tk.repos = append(tk.repos, rp.ID)
		reposJSON = append(reposJSON, s.repoJSON(rp))
	}
	s.tokens[tk.value] = tk
	s.issued = append(s.issued, tk.value)
	s.tokenRequests = append(s.tokenRequests, TokenRequest{
		InstallationID: id, Repositories: req.Repositories, Permissions: req.Permissions, Token: tk.value,
	})
	selection := "all"
	if len(req.Repositories)+len(req.RepositoryIDs) > 0 {
		selection = "selected"
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"token": tk.value, "expires_at": timestamp(tk.expires), "permissions": perms,
		"repository_selection": selection, "repositories": reposJSON,
	})
}

// lookupToken returns the installation token a request carries ("token X" or "Bearer X").
func (s *Server) lookupToken(r *http.Request) *token {
	auth := r.Header.Get("Authorization")
	value, ok := strings.CutPrefix(auth, "token ")
	if !ok {
		value, ok = strings.CutPrefix(auth, "Bearer ")
	}
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[value]
}

// authRepo resolves {owner}/{repo} and checks the request's token may use perm at level on it.
// It writes GitHub's answer and returns nil when it may not.
func (s *Server) authRepo(w http.ResponseWriter, r *http.Request, perm, level string) *Repo {
	tk := s.lookupToken(r)
	if tk == nil || time.Now().After(tk.expires) {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return nil
	}
	repo := s.Repo(r.PathValue("owner"), r.PathValue("repo"))
	if repo == nil || !tk.allows(repo, "metadata", "read") {
		writeError(w, http.StatusNotFound, "Not Found")
		return nil
	}
	if s.refuseRepo(w, r, repo) {
		return nil
	}
	if !tk.allows(repo, perm, level) {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return nil
	}
	return repo
}

// writeTokenRefusal answers a token request GitHub cannot grant as GitHub does: 422 with the
// reason as the message itself, not in a validation error's list.
func writeTokenRefusal(w http.ResponseWriter, message string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": message,
		"documentation_url": "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app", "status": "422"})
}

package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

func (s *Server) routes() {
	m := s.api
	p := apiPrefix + "/repos/{owner}/{repo}"
	m.HandleFunc("POST "+apiPrefix+"/app/installations/{installation_id}/access_tokens", s.handleAccessToken)
	m.HandleFunc("GET "+p+"/installation", s.handleRepoInstallation)
	m.HandleFunc("GET "+p, s.handleGetRepo)
	m.HandleFunc("GET "+p+"/issues/{issue_number}", s.handleGetIssue)
	m.HandleFunc("GET "+p+"/issues/{issue_number}/comments", s.handleListComments)
	m.HandleFunc("GET "+p+"/issues/{issue_number}/timeline", s.handleTimeline)
	m.HandleFunc("POST "+p+"/issues/{issue_number}/comments", s.handleCreateComment)
	m.HandleFunc("PATCH "+p+"/issues/comments/{comment_id}", s.handleEditComment)
	m.HandleFunc("POST "+p+"/issues/{issue_number}/reactions", s.handleCreateReaction)
	m.HandleFunc("DELETE "+p+"/issues/{issue_number}/labels/{name}", s.handleRemoveLabel)
	m.HandleFunc("GET "+p+"/collaborators/{username}/permission", s.handlePermission)
	m.HandleFunc("GET "+p+"/pulls", s.handleListPulls)
	m.HandleFunc("POST "+p+"/pulls", s.handleCreatePull)
	m.HandleFunc("GET "+p+"/pulls/{pull_number}", s.handleGetPull)
	m.HandleFunc("PATCH "+p+"/pulls/{pull_number}", s.handleEditPull)
	m.HandleFunc("POST "+p+"/check-runs", s.handleCreateCheckRun)
	m.HandleFunc("PATCH "+p+"/check-runs/{check_run_id}", s.handleUpdateCheckRun)
	m.HandleFunc("GET "+p+"/git/ref/{ref...}", s.handleGetRef)
	m.HandleFunc("GET "+apiPrefix+"/rate_limit", s.handleRateLimit)
	s.appRoutes()
	s.reviewerRoutes()
	s.oauthRoutes()
	s.renameRoutes()
	s.gitDBRoutes()
	s.contentsRoutes()
	m.HandleFunc(apiPrefix+"/", s.unexpected)
}

// decode reads a JSON request body; on failure it answers 400 like GitHub and returns false.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return false
	}
	return true
}

func (s *Server) apiURL(format string, args ...any) string {
	return s.URL + apiPrefix + fmt.Sprintf(format, args...)
}

func (s *Server) userJSON(login string, id int64, typ string) map[string]any {
	return map[string]any{
		"login": login, "id": id, "node_id": fmt.Sprintf("U_%d", id), "type": typ, "site_admin": false,
		"avatar_url": s.URL + "/avatars/" + login, "gravatar_id": "", "url": s.apiURL("/users/%s", login),
		"html_url": s.URL + "/" + login, "events_url": s.apiURL("/users/%s/events{/privacy}", login),
		"followers_url": s.apiURL("/users/%s/followers", login), "following_url": s.apiURL("/users/%s/following{/other_user}", login),
		"gists_url": s.apiURL("/users/%s/gists{/gist_id}", login), "organizations_url": s.apiURL("/users/%s/orgs", login),
		"received_events_url": s.apiURL("/users/%s/received_events", login), "repos_url": s.apiURL("/users/%s/repos", login),
		"starred_url": s.apiURL("/users/%s/starred{/owner}{/repo}", login), "subscriptions_url": s.apiURL("/users/%s/subscriptions", login),
	}
}

// botUserID is the user id of the App's bot: its commits' no-reply address starts with it.
const botUserID = 41898282

func (s *Server) botJSON() map[string]any { return s.userJSON(AppSlug+"[bot]", botUserID, "Bot") }

func (s *Server) repoJSON(r *Repo) map[string]any {
	base := s.apiURL("/repos/%s", r.FullName())
	return map[string]any{
		"id": r.ID, "node_id": fmt.Sprintf("R_%d", r.ID), "name": r.Name, "full_name": r.FullName(),
		"owner": s.userJSON(r.Owner, 1, "Organization"), "private": false, "fork": false, "description": nil,
		"html_url": s.URL + "/" + r.FullName(), "url": base, "clone_url": s.URL + "/" + r.FullName() + ".git",
		"git_url": "git://" + strings.TrimPrefix(s.URL, "http://") + "/" + r.FullName() + ".git",
		"ssh_url": "git@" + strings.TrimPrefix(s.URL, "http://") + ":" + r.FullName() + ".git",
		"svn_url": s.URL + "/" + r.FullName(), "default_branch": r.DefaultBranch, "archived": false, "disabled": false,
		"visibility": "public", "has_issues": true, "pulls_url": base + "/pulls{/number}", "issues_url": base + "/issues{/number}",
		"created_at": timestamp(epoch), "updated_at": timestamp(epoch), "pushed_at": timestamp(epoch),
	}
}

// handleRepoInstallation is GET /repos/{owner}/{repo}/installation, authenticated as the App.
func (s *Server) handleRepoInstallation(w http.ResponseWriter, r *http.Request) {
	if err := s.verifyJWT(r); err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	repo := s.Repo(r.PathValue("owner"), r.PathValue("repo"))
	if repo == nil || repo.installationID == 0 {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	id := repo.installationID
	writeJSON(w, http.StatusOK, s.installationJSON(id, repo.Owner))
}

func (s *Server) handleGetRepo(w http.ResponseWriter, r *http.Request) {
	if s.serveUserRepo(w, r) {
		return
	}
	if repo := s.authRepo(w, r, "metadata", "read"); repo != nil {
		writeJSON(w, http.StatusOK, s.repoJSON(repo))
	}
}

func (s *Server) handleGetRef(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "contents", "read")
	if repo == nil {
		return
	}
	ref := "refs/" + r.PathValue("ref")
	sha := s.revParse(repo, ref)
	if sha == "" {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"ref": ref, "node_id": "REF_" + sha[:8], "url": s.apiURL("/repos/%s/git/%s", repo.FullName(), ref),
		"object": map[string]any{"type": "commit", "sha": sha, "url": s.apiURL("/repos/%s/git/commits/%s", repo.FullName(), sha)},
	})
}

// legacyPermission is the older "permission" field, which folds maintain and triage away.
func legacyPermission(role string) string {
	switch role {
	case "maintain":
		return "write"
	case "triage":
		return "read"
	}
	return role
}

func (s *Server) handlePermission(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "metadata", "read")
	if repo == nil {
		return
	}
	user := r.PathValue("username")
	s.mu.Lock()
	role, ok := repo.permissions[user]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	u := s.userJSON(user, 7, "User")
	u["role_name"] = role
	writeJSON(w, http.StatusOK, map[string]any{"permission": legacyPermission(role), "role_name": role, "user": u})
}

func (s *Server) handleRateLimit(w http.ResponseWriter, r *http.Request) {
	if s.lookupToken(r) == nil {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	rate := map[string]any{"limit": 5000, "remaining": 4999, "reset": time.Now().Add(time.Hour).Unix(), "used": 1}
	writeJSON(w, http.StatusOK, map[string]any{"rate": rate, "resources": map[string]any{"core": rate}})
}

func (s *Server) handleCreateCheckRun(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "checks", "write")
	if repo == nil {
		return
	}
	var body map[string]any
	if !decode(w, r, &body) {
		return
	}
	name, _ := body["name"].(string)
	sha, _ := body["head_sha"].(string)
	if name == "" || sha == "" {
		writeValidation(w, "CheckRun", "name", "missing_field", "")
		return
	}
	anns, ok := checkOutput(w, body, true)
	if !ok {
		return
	}
	id := s.id()
	body["id"] = id
	body["node_id"] = fmt.Sprintf("CR_%d", id)
	body["url"] = s.apiURL("/repos/%s/check-runs/%d", repo.FullName(), id)
	body["html_url"] = fmt.Sprintf("%s/%s/runs/%d", s.URL, repo.FullName(), id)
	if body["status"] == nil {
		body["status"] = "queued"
	}
	s.mu.Lock()
	repo.checkRuns[id] = body
	s.recordOutput(repo, id, body, anns)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, body)
}

// CheckRuns returns the check runs created on repo.
func (s *Server) CheckRuns(repo *Repo) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, run := range repo.checkRuns {
		out = append(out, run)
	}
	slices.SortFunc(out, func(a, b map[string]any) int { return int(a["id"].(int64) - b["id"].(int64)) })
	return out
}

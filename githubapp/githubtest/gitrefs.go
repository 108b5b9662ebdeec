package githubtest

import (
	"net/http"
	"path"
	"slices"
	"strings"
)

// The Git database API's references (git/refs), the rules that refuse their updates, review
// requests and GET /users/{username}: the rest of gitdb.go.

func (s *Server) refJSON(repo *Repo, ref, sha string) map[string]any {
	return map[string]any{
		"ref": ref, "node_id": "REF_" + sha[:8], "url": s.apiURL("/repos/%s/git/%s", repo.FullName(), ref),
		"object": map[string]any{"type": "commit", "sha": sha, "url": s.apiURL("/repos/%s/git/commits/%s", repo.FullName(), sha)},
	}
}

// handleListRefs is the older GET git/refs/{ref}: the reference itself, or the list of those
// it is a prefix of, or 404.
func (s *Server) handleListRefs(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "contents", "read")
	if repo == nil {
		return
	}
	ref := "refs/" + r.PathValue("ref")
	if sha := s.revParse(repo, ref); sha != "" {
		writeJSON(w, http.StatusOK, s.refJSON(repo, ref, sha))
		return
	}
	out, _ := s.git(repo.Dir, nil, "for-each-ref", "--format=%(refname) %(objectname)", strings.TrimSuffix(ref, "/")+"/")
	list := []any{}
	for _, line := range strings.Split(out, "\n") {
		if name, sha, ok := strings.Cut(line, " "); ok {
			list = append(list, s.refJSON(repo, name, sha))
		}
	}
	if len(list) == 0 {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// refuseRefUpdate answers, as GitHub does, an update of ref to sha that a rule refuses: the
// rule of RefusePushes (a ruleset restricting creations, branch protection), or a "Require
// signed commits" rule (RequireSignedCommits, or RefusePushes' signed-commits rule) when the
// update brings in a commit GitHub did not sign. It reports whether it answered.
func (s *Server) refuseRefUpdate(w http.ResponseWriter, repo *Repo, ref, sha, doc string) bool {
	branch := strings.TrimPrefix(ref, "refs/heads/")
	s.mu.Lock()
	st := repo.db()
	rule, pattern := st.pushRule, st.signedRefs
	s.mu.Unlock()
	signed := rule == RefuseSignedCommits
	if ok, _ := path.Match(pattern, branch); pattern != "" && ok {
		signed = true
	}
	switch rule {
	case RefuseRuleset:
		writeGitDBError(w, http.StatusUnprocessableEntity, "Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n", doc)
		return true
	case RefuseProtection:
		writeGitDBError(w, http.StatusUnprocessableEntity, "Protected branch update failed for "+ref+".\n\nCannot create this branch: it matches a protected branch pattern.", doc)
		return true
	}
	if !signed {
		return false
	}
	// Every commit the update brings onto the branch must be verified.
	out, err := s.git(repo.Dir, nil, "rev-list", sha, "--not", "--all")
	if err != nil {
		s.t.Errorf("fake GitHub: %v", err)
	}
	for _, c := range strings.Fields(out) {
		if !s.Verified(repo, c) {
			writeGitDBError(w, http.StatusConflict, "Repository rule violations found\n\nCommits must have verified signatures.\n\n", doc)
			return true
		}
	}
	return false
}

func (s *Server) handleCreateRef(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "contents", "write")
	if repo == nil {
		return
	}
	var req struct{ Ref, SHA string }
	if !decode(w, r, &req) {
		return
	}
	const doc = "refs#create-a-reference"
	if !strings.HasPrefix(req.Ref, "refs/") || strings.Count(req.Ref, "/") < 2 {
		writeGitDBError(w, http.StatusUnprocessableEntity, "Reference name must start with 'refs/' and have at least two slashes.", doc)
		return
	}
	if _, err := s.git(repo.Dir, nil, "check-ref-format", req.Ref); err != nil {
		writeGitDBError(w, http.StatusUnprocessableEntity, "Reference name is not valid", doc)
		return
	}
	if s.objectType(repo, req.SHA) != "commit" {
		writeGitDBError(w, http.StatusUnprocessableEntity, "Object does not exist", doc)
		return
	}
	if s.revParse(repo, req.Ref) != "" {
		writeGitDBError(w, http.StatusUnprocessableEntity, "Reference already exists", doc)
		return
	}
	if s.refuseRefUpdate(w, repo, req.Ref, req.SHA, doc) {
		return
	}
	// The empty old value makes git refuse if the reference came into being meanwhile.
	if _, err := s.git(repo.Dir, nil, "update-ref", req.Ref, req.SHA, ""); err != nil {
		writeGitDBError(w, http.StatusUnprocessableEntity, "Reference already exists", doc)
		return
	}
	u := s.apiURL("/repos/%s/git/%s", repo.FullName(), req.Ref)
	w.Header().Set("Location", u)
	writeJSON(w, http.StatusCreated, s.refJSON(repo, req.Ref, req.SHA))
}

func (s *Server) handleUpdateRef(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "contents", "write")
	if repo == nil {
		return
	}
	var req struct {
		SHA   string `json:"sha"`
		Force bool   `json:"force"`
	}
	if !decode(w, r, &req) {
		return
	}
	const doc = "refs#update-a-reference"
	ref := "refs/" + r.PathValue("ref")
	old := s.revParse(repo, ref)
	switch {
	case old == "":
		writeGitDBError(w, http.StatusUnprocessableEntity, "Reference does not exist", doc)
		return
	case s.objectType(repo, req.SHA) != "commit":
		writeGitDBError(w, http.StatusUnprocessableEntity, "Object does not exist", doc)
		return
	}
	if !req.Force {
		if _, err := s.git(repo.Dir, nil, "merge-base", "--is-ancestor", old, req.SHA); err != nil {
			writeGitDBError(w, http.StatusUnprocessableEntity, "Update is not a fast forward", doc)
			return
		}
	}
	if s.refuseRefUpdate(w, repo, ref, req.SHA, doc) {
		return
	}
	if _, err := s.git(repo.Dir, nil, "update-ref", ref, req.SHA, old); err != nil {
		writeGitDBError(w, http.StatusUnprocessableEntity, "Reference cannot be updated", doc)
		return
	}
	writeJSON(w, http.StatusOK, s.refJSON(repo, ref, req.SHA))
}

// handleRequestReviewers is POST pulls/{n}/requested_reviewers. GitHub answers 422 when a
// reviewer is the pull request's author ("Review cannot be requested from pull request
// author.") or is not a collaborator of the repository.
func (s *Server) handleRequestReviewers(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "pull_requests", "write")
	if repo == nil {
		return
	}
	pr := s.pullFor(w, r, repo)
	if pr == nil {
		return
	}
	var req struct {
		Reviewers     []string `json:"reviewers"`
		TeamReviewers []string `json:"team_reviewers"`
	}
	if !decode(w, r, &req) {
		return
	}
	s.mu.Lock()
	for _, u := range req.Reviewers {
		if strings.EqualFold(u, AppSlug+"[bot]") {
			s.mu.Unlock()
			writeValidation(w, "PullRequest", "", "custom", "Review cannot be requested from pull request author.")
			return
		}
		if role := repo.permissions[u]; role == "" || role == "none" {
			s.mu.Unlock()
			writeValidation(w, "PullRequest", "", "custom", "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the "+repo.FullName()+" repository.")
			return
		}
	}
	st := repo.db()
	for _, u := range req.Reviewers {
		if !slices.Contains(st.requestedFor[pr.Number], u) { // asking twice is asking once
			st.requestedFor[pr.Number] = append(st.requestedFor[pr.Number], u)
		}
	}
	cp := *pr
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, s.pullJSON(repo, &cp))
}

// handleGetUserByLogin is GET /users/{username}, for the logins the fake knows (SetPermission, UserID).
func (s *Server) handleGetUserByLogin(w http.ResponseWriter, r *http.Request) {
	if s.lookupToken(r) == nil {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	login := r.PathValue("username")
	s.mu.Lock()
	id, ok := s.users[strings.ToLower(login)]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, s.userJSON(login, id, "User"))
}

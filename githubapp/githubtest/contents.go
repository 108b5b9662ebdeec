package githubtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// contentsRoutes serves the two reads of a repository's settings, a file at the default
// branch's head (the contents API) and a team's membership, and what its pull_request asks
// (labels on the pull request).
func (s *Server) contentsRoutes() {
	s.api.HandleFunc("GET "+apiPrefix+"/repos/{owner}/{repo}/contents/{path...}", s.handleGetContents)
	s.api.HandleFunc("GET "+apiPrefix+"/orgs/{org}/teams/{team_slug}/memberships/{username}", s.handleTeamMembership)
	s.api.HandleFunc("POST "+apiPrefix+"/repos/{owner}/{repo}/issues/{issue_number}/labels", s.handleAddLabels)
}

// SetTeamMembers makes logins the active members of org's team slug (none: the team has no
// members).
func (s *Server) SetTeamMembers(org, slug string, logins ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.teams == nil {
		s.teams = map[string][]string{}
	}
	s.teams[strings.ToLower(org)+"/"+slug] = logins
}

// handleGetContents is GET /repos/{owner}/{repo}/contents/{path}: the file at the head of the
// default branch (a ref query is refused as unexpected: frognano reads settings only there),
// base64 with a line break every 60 characters, as GitHub answers; 404 when there is none.
func (s *Server) handleGetContents(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("ref") {
		s.unexpected(w, r)
		return
	}
	repo := s.authRepo(w, r, "contents", "read")
	if repo == nil {
		return
	}
	path := r.PathValue("path")
	head := s.revParse(repo, "refs/heads/"+repo.DefaultBranch)
	spec := head + ":" + path
	t, err := s.git(repo.Dir, nil, "cat-file", "-t", spec)
	if head == "" || err != nil || (t != "blob" && t != "tree") {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if t == "tree" {
		s.writeDirectory(w, repo, spec, path)
		return
	}
	sha, err := s.git(repo.Dir, nil, "rev-parse", spec)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	data, err := s.gitRaw(repo.Dir, nil, "cat-file", "blob", sha)
	if err != nil {
		s.t.Errorf("fake GitHub: %v", err)
		writeError(w, http.StatusInternalServerError, "Server Error")
		return
	}
	self := s.apiURL("/repos/%s/contents/%s?ref=%s", repo.FullName(), path, repo.DefaultBranch)
	git := s.apiURL("/repos/%s/git/blobs/%s", repo.FullName(), sha)
	html := s.URL + "/" + repo.FullName() + "/blob/" + repo.DefaultBranch + "/" + path
	name := path[strings.LastIndex(path, "/")+1:]
	writeJSON(w, http.StatusOK, map[string]any{
		"type": "file", "encoding": "base64", "size": len(data), "name": name, "path": path, "content": githubBase64(data),
		"sha": sha, "url": self, "git_url": git, "html_url": html,
		"download_url": s.URL + "/raw/" + repo.FullName() + "/" + repo.DefaultBranch + "/" + path,
		"_links":       map[string]any{"self": self, "git": git, "html": html},
	})
}

// handleTeamMembership is GET /orgs/{org}/teams/{team_slug}/memberships/{username}, for a token
// with the organisation permission members: read; 404 for a login that is not a member.
func (s *Server) handleTeamMembership(w http.ResponseWriter, r *http.Request) {
	tk := s.lookupToken(r)
	if tk == nil || time.Now().After(tk.expires) {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if levels[tk.permissions["members"]] < levels["read"] {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	org, slug, user := r.PathValue("org"), r.PathValue("team_slug"), r.PathValue("username")
	s.mu.Lock()
	members := s.teams[strings.ToLower(org)+"/"+slug]
	s.mu.Unlock()
	if !slices.ContainsFunc(members, func(m string) bool { return strings.EqualFold(m, user) }) {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"url": s.apiURL("/orgs/%s/teams/%s/memberships/%s", org, slug, user), "role": "member", "state": "active",
	})
}

// writeDirectory answers the contents API for a directory as GitHub does: an array of its
// entries.
func (s *Server) writeDirectory(w http.ResponseWriter, repo *Repo, spec, path string) {
	out, err := s.git(repo.Dir, nil, "ls-tree", spec)
	if err != nil {
		s.t.Errorf("fake GitHub: %v", err)
		writeError(w, http.StatusInternalServerError, "Server Error")
		return
	}
	entries := []any{}
	for _, line := range strings.Split(out, "\n") {
		meta, name, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			continue
		}
		typ := map[string]string{"blob": "file", "tree": "dir", "commit": "submodule"}[f[1]]
		p := strings.TrimSuffix(path, "/") + "/" + name
		self := s.apiURL("/repos/%s/contents/%s?ref=%s", repo.FullName(), p, repo.DefaultBranch)
		git := s.apiURL("/repos/%s/git/%ss/%s", repo.FullName(), f[1], f[2])
		html := s.URL + "/" + repo.FullName() + "/blob/" + repo.DefaultBranch + "/" + p
		entries = append(entries, map[string]any{"type": typ, "size": 0, "name": name, "path": p, "sha": f[2],
			"url": self, "git_url": git, "html_url": html, "download_url": nil,
			"_links": map[string]any{"self": self, "git": git, "html": html}})
	}
	writeJSON(w, http.StatusOK, entries)
}

// handleAddLabels is POST /repos/{owner}/{repo}/issues/{issue_number}/labels on an issue or
// a pull request: the labels are added (one the repository lacks is created, as GitHub does),
// and its labels answered.
func (s *Server) handleAddLabels(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "issues", "write")
	if repo == nil {
		return
	}
	// GitHub takes {"labels": [...]} or the bare array (go-github sends the array).
	var raw json.RawMessage
	if !decode(w, r, &raw) {
		return
	}
	var req struct {
		Labels []string `json:"labels"`
	}
	if json.Unmarshal(raw, &req.Labels) != nil && json.Unmarshal(raw, &req) != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	n, _ := strconv.Atoi(r.PathValue("issue_number"))
	s.mu.Lock()
	defer s.mu.Unlock()
	var have []string
	isPR := slices.ContainsFunc(repo.pulls, func(pr *PR) bool { return pr.Number == n })
	is, isIssue := repo.issues[n]
	switch {
	case isIssue:
		have = is.labels
	case isPR:
		have = repo.prLabels[n]
	default:
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	for _, l := range req.Labels {
		if !slices.Contains(have, l) {
			have = append(have, l)
		}
	}
	if isIssue {
		is.labels = have
	} else {
		if repo.prLabels == nil {
			repo.prLabels = map[int][]string{}
		}
		repo.prLabels[n] = have
	}
	out := []any{}
	for _, l := range have {
		out = append(out, s.labelJSON(repo, l))
	}
	writeJSON(w, http.StatusOK, out)
}

// PRLabels returns the labels added to pull request number.
func (s *Server) PRLabels(repo *Repo, number int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(repo.prLabels[number])
}

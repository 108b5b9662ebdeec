package githubtest

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Names change on GitHub; ids do not. A repository can be renamed or transferred, its owner
// (a user or an organization) renamed, or the repository deleted; each frees the old name,
// which anyone may then register and use for a repository of their own, with a new id. Until
// someone does, GitHub answers the old name's API paths with a redirect to the repository by
// id (/repositories/{id}); once a repository of that name exists again, the name is simply
// that repository's. These methods let a test do the same to the fake, and
// GET /repositories/{repository_id} reads a repository by its id.

func (s *Server) renameRoutes() {
	s.api.HandleFunc("GET "+apiPrefix+"/repositories/{repository_id}", s.handleGetRepoByID)
	s.api.HandleFunc(apiPrefix+"/repositories/{repository_id}/{rest...}", s.handleByID)
}

// handleByID answers a request under /repositories/{id}/ (where GitHub redirects the paths of
// a moved repository's old name) as the same request under the repository's current name
// does: the same routes, authorization and refusals. No repository with that id: 404.
func (s *Server) handleByID(w http.ResponseWriter, r *http.Request) {
	var repo *Repo
	if id, err := strconv.ParseInt(r.PathValue("repository_id"), 10, 64); err == nil {
		repo = s.repoByID(id)
	}
	if repo == nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.mu.Lock()
	full := repo.FullName()
	s.mu.Unlock()
	r2 := r.Clone(r.Context())
	r2.URL.Path = apiPrefix + "/repos/" + full + "/" + r.PathValue("rest")
	r2.URL.RawPath = ""
	s.api.ServeHTTP(w, r2)
}

// RenameRepo renames repo to owner/name (a rename, or a transfer to another owner), keeping its
// id, git data, issues, roles and installation. The old name redirects to the repository until
// a repository of that name is added again. Call it while no request to repo is in flight.
func (s *Server) RenameRepo(repo *Repo, owner, name string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renameLocked(repo, owner, name)
}

// RenameOwner renames a user or organization: each of its repositories moves to newOwner, and
// the old names redirect until they are taken.
func (s *Server) RenameOwner(oldOwner, newOwner string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.repos {
		if r.Owner == oldOwner {
			s.renameLocked(r, newOwner, r.Name)
		}
	}
}

func (s *Server) renameLocked(repo *Repo, owner, name string) {
	full := owner + "/" + name
	if s.repos[full] != nil {
		s.t.Fatalf("fake GitHub: cannot rename %s to %s: that name is taken", repo.FullName(), full)
	}
	dir := filepath.Join(s.root, owner, name+".git")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		s.t.Fatalf("fake GitHub: %v", err)
	}
	if err := os.Rename(repo.Dir, dir); err != nil {
		s.t.Fatalf("fake GitHub: renaming %s: %v", repo.FullName(), err)
	}
	old := repo.FullName()
	delete(s.repos, old)
	if s.moved == nil {
		s.moved = map[string]int64{}
	}
	s.moved[old] = repo.ID
	repo.Owner, repo.Name, repo.Dir = owner, name, dir
	s.repos[full] = repo
}

// DeleteRepo deletes repo: its id and every name it had answer 404 from now on, and its name
// is free for a new repository (AddRepo).
func (s *Server) DeleteRepo(repo *Repo) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.repos, repo.FullName())
	for name, id := range s.moved {
		if id == repo.ID {
			delete(s.moved, name)
		}
	}
	if id := repo.installationID; id != 0 {
		kept := s.installations[id][:0]
		for _, r := range s.installations[id] {
			if r != repo {
				kept = append(kept, r)
			}
		}
		s.installations[id] = kept
	}
	if err := os.RemoveAll(repo.Dir); err != nil {
		s.t.Fatalf("fake GitHub: deleting %s: %v", repo.FullName(), err)
	}
}

// repoByID returns the repository with this id, or nil (none, or deleted).
func (s *Server) repoByID(id int64) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.repos {
		if r.ID == id {
			return r
		}
	}
	return nil
}

// redirectMoved answers an API request under /repos/{owner}/{repo} for a name a repository
// had before a rename, and not taken since, as GitHub does: 301 for GET and HEAD, 307 for the
// other methods, to the same path under /repositories/{id}, with the basic-error body. It
// reports whether it answered.
func (s *Server) redirectMoved(w http.ResponseWriter, r *http.Request, route string) bool {
	rest, ok := strings.CutPrefix(route, "/repos/")
	if !ok {
		return false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 {
		return false
	}
	full := parts[0] + "/" + parts[1]
	s.mu.Lock()
	id, moved := s.moved[full]
	_, taken := s.repos[full]
	s.mu.Unlock()
	if !moved || taken {
		return false
	}
	target := s.apiURL("/repositories/%d", id)
	if len(parts) == 3 {
		target += "/" + parts[2]
	}
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	status := http.StatusMovedPermanently
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		status = http.StatusTemporaryRedirect
	}
	w.Header().Set("Location", target)
	writeJSON(w, status, map[string]any{
		"message": "Moved Permanently", "url": target,
		"documentation_url": "https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api#follow-redirects",
	})
	return true
}

// handleGetRepoByID is GET /repositories/{repository_id}: the repository as
// GET /repos/{owner}/{repo} answers it, found by its id, whatever its name is now. With a user
// token it carries the person's permissions, and a repository they may not see is 404.
func (s *Server) handleGetRepoByID(w http.ResponseWriter, r *http.Request) {
	var repo *Repo
	if id, err := strconv.ParseInt(r.PathValue("repository_id"), 10, 64); err == nil {
		repo = s.repoByID(id)
	}
	if login, isUser := s.lookupUserToken(r); isUser {
		s.writeUserRepo(w, login, repo)
		return
	}
	tk := s.lookupToken(r)
	if tk == nil {
		writeError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if repo == nil || !tk.allows(repo, "metadata", "read") {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if s.refuseRepo(w, r, repo) {
		return
	}
	writeJSON(w, http.StatusOK, s.repoJSON(repo))
}

package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// What GitHub answers when it refuses, as these methods make the fake refuse. Each answer is
// GitHub's own, from its documentation, the OpenAPI description (410 gone, 301 moved) or
// answers quoted in public bug reports (see each constant).
const (
	// Archived repositories refuse every write through the API...
	archivedMessage = "Repository was archived so is read-only."
	archivedDocs    = "https://docs.github.com/repositories/archiving-a-github-repository/archiving-repositories"
	// ...and every push, with this line (git prints it as "remote: ...").
	archivedPush = "This repository was archived so it is read-only."
	// A repository GitHub disabled (terms of service) answers every request so.
	blockedMessage = "Repository access blocked"
	// A deleted issue is gone (410).
	deletedIssueMessage = "This issue was deleted"
	// A locked conversation refuses the App's comments (probot/stale#25, renovate#6215).
	lockedMessage = "Unable to create comment because issue is locked."
	lockedDocs    = "https://docs.github.com/articles/locking-conversations/"
	// The App's JWT signed by a key GitHub no longer knows.
	badJWTMessage = "A JSON web token could not be decoded"
)

// PushRefusal is a rule that refuses pushes, as GitHub's git server words it.
type PushRefusal string

// The rules RefusePushes can put on a repository.
const (
	// RefuseRuleset is a repository ruleset on the pushed branch (GH013).
	RefuseRuleset PushRefusal = "ruleset"
	// RefuseProtection is a branch protection rule matching the pushed branch (GH006).
	RefuseProtection PushRefusal = "protection"
	// RefuseSignedCommits is a ruleset's "Require signed commits" rule (GH013, its rule line).
	RefuseSignedCommits PushRefusal = "signed_commits"
)

// RefusePushes makes every push to repo fail as GitHub fails it under rule: a pre-receive hook
// in the bare repository prints GitHub's lines on stderr (git shows them as "remote: ...") and
// exits 1, so git reports the ref as remote-rejected. An empty rule removes the hook.
//
// The Git database API refuses as GitHub does under the same rule: creating or updating a
// reference answers 422 "Repository rule violations found" (a ruleset) or "Protected branch
// update failed" (protection); under RefuseSignedCommits it answers 409 only when the update
// brings in a commit GitHub did not sign (API-made commits without an author are signed).
func (s *Server) RefusePushes(repo *Repo, rule PushRefusal) {
	s.t.Helper()
	s.mu.Lock()
	repo.db().pushRule = rule
	s.mu.Unlock()
	hook := filepath.Join(repo.Dir, "hooks", "pre-receive")
	if rule == "" {
		if err := os.Remove(hook); err != nil && !os.IsNotExist(err) {
			s.t.Fatalf("fake GitHub: %v", err)
		}
		return
	}
	rules := s.URL + "/" + repo.FullName() + "/rules?ref=" // GitHub links the ruleset page
	var lines string
	switch rule {
	case RefuseRuleset:
		lines = `echo "error: GH013: Repository rule violations found for $ref."
echo "Review all repository rules at ` + rules + `$enc"
echo ""
echo "- Cannot create ref due to creations being restricted."
echo ""`
	case RefuseSignedCommits:
		lines = `echo "error: GH013: Repository rule violations found for $ref."
echo "Review all repository rules at ` + rules + `$enc"
echo ""
echo "- Commits must have verified signatures."
echo "  Found 1 violation:"
echo ""
echo "  $new"
echo ""`
	case RefuseProtection:
		lines = `echo "error: GH006: Protected branch update failed for $ref."
echo "error: Cannot create this branch: it matches a protected branch pattern."`
	default:
		s.t.Fatalf("fake GitHub: unknown push refusal %q", rule)
	}
	script := "#!/bin/sh\n# The fake's GitHub: refuses every push (" + string(rule) + ").\n" +
		"while read old new ref; do\n" +
		"enc=$(printf %s \"$ref\" | sed 's|/|%2F|g')\n{\n" + lines + "\n} >&2\ndone\nexit 1\n"
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		s.t.Fatalf("fake GitHub: %v", err)
	}
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		s.t.Fatalf("fake GitHub: %v", err)
	}
}

// ArchiveRepo archives repo: reads still work, every API write under it answers 403
// "Repository was archived so is read-only." and every push is refused with GitHub's line.
func (s *Server) ArchiveRepo(repo *Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo.archived = true
}

// DisableRepo disables repo as GitHub disables a repository for its terms of service: every
// API request for it answers 403 "Repository access blocked" with the block's reason, and git
// answers 403 with the same words.
func (s *Server) DisableRepo(repo *Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo.disabled = true
}

// DeleteIssue deletes issue number: every request for it answers 410 "This issue was deleted".
func (s *Server) DeleteIssue(repo *Repo, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := repo.issues[number]; is != nil {
		is.deleted = true
	}
}

// TransferIssue moves issue number to issue newNumber of repository to, as GitHub's transfer
// does: requests for the old number are redirected there (301 for GET, 307 otherwise), where
// a token for the old repository alone finds nothing (404).
func (s *Server) TransferIssue(repo *Repo, number int, to *Repo, newNumber int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := repo.issues[number]
	if is == nil {
		s.t.Fatalf("fake GitHub: no issue %d on %s", number, repo.FullName())
	}
	moved := *is
	moved.number = newNumber
	to.issues[newNumber] = &moved
	is.movedTo = s.apiURL("/repos/%s/issues/%d", to.FullName(), newNumber)
}

// LockIssue locks the conversation of issue number: the App's comments on it answer 403
// "Unable to create comment because issue is locked.", and the issue reads "locked": true.
func (s *Server) LockIssue(repo *Repo, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := repo.issues[number]; is != nil {
		is.locked = true
	}
}

// RenameBranch renames branch to newName, as GitHub's branch rename does: the repository's
// default branch follows, and so do the bases of open pull requests.
func (s *Server) RenameBranch(repo *Repo, branch, newName string) {
	s.t.Helper()
	s.mustGit(repo.Dir, "branch", "-m", branch, newName)
	s.mu.Lock()
	defer s.mu.Unlock()
	if repo.DefaultBranch == branch {
		repo.DefaultBranch = newName
		if _, err := s.git(repo.Dir, nil, "symbolic-ref", "HEAD", "refs/heads/"+newName); err != nil {
			s.t.Errorf("fake GitHub: %v", err)
		}
	}
	for _, pr := range repo.pulls {
		if pr.Base == branch {
			pr.Base = newName
		}
	}
}

// RotateAppKey replaces the App's key on the fake, as deleting the key frognano uses and
// generating another does on GitHub: JWTs signed with the old key answer 401 "A JSON web token
// could not be decoded". PrivateKey is not changed: it is the key the service was given.
func (s *Server) RotateAppKey() {
	s.t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		s.t.Fatalf("fake GitHub: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// Uninstall removes the App's installation id: the installation and its token requests answer
// 404, as after "Uninstall" in the account's settings.
func (s *Server) Uninstall(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.installations[id] {
		r.installationID = 0
	}
	delete(s.installations, id)
}

// RemoveFromInstallation takes repo out of installation id's repository access: token requests
// that name it answer 422, as GitHub answers them.
func (s *Server) RemoveFromInstallation(id int64, repo *Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.installations[id][:0]
	for _, r := range s.installations[id] {
		if r != repo {
			kept = append(kept, r)
		}
	}
	s.installations[id] = kept
	repo.installationID = 0
}

// refuseRepo answers a request for repo as GitHub does when it is disabled (any request) or
// archived (a write), and reports whether it answered.
func (s *Server) refuseRepo(w http.ResponseWriter, r *http.Request, repo *Repo) bool {
	s.mu.Lock()
	archived, disabled := repo.archived, repo.disabled
	s.mu.Unlock()
	switch {
	case disabled:
		writeJSON(w, http.StatusForbidden, map[string]any{
			"message": blockedMessage, "block": map[string]any{"reason": "tos", "created_at": timestamp(epoch),
				"html_url": s.URL + "/" + repo.FullName()},
			"documentation_url": "https://docs.github.com/rest", "status": "403",
		})
		return true
	case archived && r.Method != http.MethodGet && r.Method != http.MethodHead:
		writeJSON(w, http.StatusForbidden, map[string]any{"message": archivedMessage, "documentation_url": archivedDocs, "status": "403"})
		return true
	}
	return false
}

// refuseIssue answers a request for an issue that was deleted, transferred or is locked (a
// comment) as GitHub does, and reports whether it answered.
func (s *Server) refuseIssue(w http.ResponseWriter, r *http.Request, is *issue) bool {
	s.mu.Lock()
	deleted, movedTo, locked := is.deleted, is.movedTo, is.locked
	s.mu.Unlock()
	switch {
	case deleted:
		writeJSON(w, http.StatusGone, map[string]any{"message": deletedIssueMessage,
			"documentation_url": "https://docs.github.com/rest/issues/issues#get-an-issue", "status": "410"})
		return true
	case movedTo != "":
		target := movedTo + suffixAfterIssue(r.URL.Path)
		status := http.StatusMovedPermanently
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			status = http.StatusTemporaryRedirect
		}
		w.Header().Set("Location", target)
		writeJSON(w, status, map[string]any{"message": "Moved Permanently", "url": target,
			"documentation_url": "https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api#follow-redirects"})
		return true
	case locked && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/comments"):
		writeJSON(w, http.StatusForbidden, map[string]any{"message": lockedMessage, "documentation_url": lockedDocs, "status": "403"})
		return true
	}
	return false
}

// suffixAfterIssue is what follows /issues/{n} in path ("/comments", "/labels/x", or "").
func suffixAfterIssue(path string) string {
	i := strings.Index(path, "/issues/")
	if i < 0 {
		return ""
	}
	rest := path[i+len("/issues/"):]
	if j := strings.Index(rest, "/"); j >= 0 {
		return rest[j:]
	}
	return ""
}

// refusePush answers a git request for an archived or disabled repository as GitHub does: 403
// with its line as text, which git prints as "remote: ...". It reports whether it answered.
func (s *Server) refusePush(w http.ResponseWriter, repo *Repo, push bool) bool {
	s.mu.Lock()
	archived, disabled := repo.archived, repo.disabled
	s.mu.Unlock()
	switch {
	case disabled:
		http.Error(w, fmt.Sprintf("Repository `%s` is disabled.\nPlease ask the owner to check their account.", repo.FullName()), http.StatusForbidden)
		return true
	case archived && push:
		http.Error(w, archivedPush, http.StatusForbidden)
		return true
	}
	return false
}

package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What people do with a pull request on GitHub once it is open, as these methods do it to the
// fake, and the events GitHub sends about it (package outcome follows them): a merge (a merge
// commit on the base branch, refs/pull/N/head kept), a close, a reopen, ready for review, and
// the issue timeline's cross-references.

func (s *Server) pullAuthor(pr *PR) map[string]any {
	if pr.author == "" {
		return s.botJSON()
	}
	return s.userJSON(pr.author, s.UserID(pr.author), "User")
}

// pullCommits is GitHub's count of the pull request's commits: those of its head not on its
// base (kept as they were at the merge once merged).
func (s *Server) pullCommits(repo *Repo, pr *PR) int {
	if pr.merged {
		return pr.mergedCommits
	}
	head := s.revParse(repo, "refs/heads/"+pr.Head)
	if head == "" {
		head = pr.headSHA
	}
	out, err := s.git(repo.Dir, nil, "rev-list", "--count", "refs/heads/"+pr.Base+".."+head)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(out))
	return n
}

// pullOutcomeJSON fills the fields of a closed or merged pull request as GitHub answers them.
func (s *Server) pullOutcomeJSON(pr *PR, out map[string]any) {
	if pr.State == "closed" && !pr.closedAt.IsZero() {
		out["closed_at"] = timestamp(pr.closedAt)
		out["updated_at"] = timestamp(pr.closedAt)
	}
	if pr.merged {
		out["merged_at"] = timestamp(pr.closedAt)
		out["merged_by"] = s.userJSON(pr.mergedBy, s.UserID(pr.mergedBy), "User")
		out["merge_commit_sha"] = pr.mergeSHA
		out["head"].(map[string]any)["sha"] = pr.headSHA
	}
}

// updatePullRef points refs/pull/N/head at the pull request's head, as GitHub does.
func (s *Server) updatePullRef(repo *Repo, pr *PR) {
	if head := s.revParse(repo, "refs/heads/"+pr.Head); head != "" {
		s.mustGit(repo.Dir, "update-ref", fmt.Sprintf("refs/pull/%d/head", pr.Number), head)
	}
}

func (s *Server) pull(repo *Repo, number int, what string) *PR {
	s.t.Helper()
	for _, pr := range repo.pulls {
		if pr.Number == number {
			return pr
		}
	}
	s.t.Fatalf("fake GitHub: %s: no pull request #%d in %s", what, number, repo.FullName())
	return nil
}

// MergePR merges open pull request number as login does with the merge button: a merge
// commit of its head into its base branch (whose tree is the head's: the test's base does not
// move meanwhile), the pull request closed and merged, refs/pull/N/head kept at the head that
// was merged. It returns the merge commit.
func (s *Server) MergePR(repo *Repo, number int, login string) string {
	s.t.Helper()
	s.mu.Lock()
	pr := s.pull(repo, number, "MergePR")
	cp := *pr
	s.mu.Unlock()
	if cp.State != "open" {
		s.t.Fatalf("fake GitHub: MergePR: #%d is %s", number, cp.State)
	}
	s.updatePullRef(repo, &cp)
	commits := s.pullCommits(repo, &cp)
	head := s.revParse(repo, "refs/heads/"+cp.Head)
	base := s.revParse(repo, "refs/heads/"+cp.Base)
	msg := fmt.Sprintf("Merge pull request #%d from %s/%s", number, repo.Owner, cp.Head)
	merge := s.mustGit(repo.Dir, "-c", "user.name=GitHub", "-c", "user.email=noreply@github.com",
		"commit-tree", head+"^{tree}", "-p", base, "-p", head, "-m", msg)
	s.mustGit(repo.Dir, "update-ref", "refs/heads/"+cp.Base, merge, base)
	s.mu.Lock()
	defer s.mu.Unlock()
	pr.State, pr.merged, pr.mergedBy, pr.mergeSHA, pr.headSHA = "closed", true, login, merge, head
	pr.closedAt, pr.mergedCommits = time.Now().UTC().Truncate(time.Second), commits
	return merge
}

// ReopenPR reopens closed pull request number, as a person does.
func (s *Server) ReopenPR(repo *Repo, number int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.pull(repo, number, "ReopenPR")
	if pr.merged {
		s.t.Fatalf("fake GitHub: ReopenPR: #%d is merged; GitHub cannot reopen it", number)
	}
	pr.State, pr.closedAt = "open", time.Time{}
}

// ClosePRAt closes pull request number as ClosePR does, remembering when (closed_at).
func (s *Server) ClosePRAt(repo *Repo, number int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.pull(repo, number, "ClosePRAt")
	pr.State, pr.closedAt = "closed", time.Now().UTC().Truncate(time.Second)
}

// MarkReady marks draft pull request number ready for review (draft false).
func (s *Server) MarkReady(repo *Repo, number int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pull(repo, number, "MarkReady").Draft = false
}

// OpenPersonPR opens a pull request by login from branch (which must exist) into the default
// branch, and returns its number.
func (s *Server) OpenPersonPR(repo *Repo, branch, login, title string) int {
	s.t.Helper()
	if s.revParse(repo, "refs/heads/"+branch) == "" {
		s.t.Fatalf("fake GitHub: OpenPersonPR: no branch %s", branch)
	}
	s.mu.Lock()
	n := repo.nextNumber()
	pr := &PR{Number: n, Head: branch, Base: repo.DefaultBranch, Title: title, State: "open", author: login,
		HTMLURL: fmt.Sprintf("%s/%s/pull/%d", s.URL, repo.FullName(), n)}
	repo.pulls = append(repo.pulls, pr)
	cp := *pr
	s.mu.Unlock()
	s.updatePullRef(repo, &cp)
	return n
}

// CrossReference makes pull request pr show in the timeline of issue (a cross-referenced
// event), as GitHub does when the pull request's body or a commit names the issue.
func (s *Server) CrossReference(repo *Repo, issue, pr int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repo, pr, "CrossReference")
	if !slices.Contains(p.crossRefs, issue) {
		p.crossRefs = append(p.crossRefs, issue)
	}
}

// PullRequestEvent is the payload of the pull_request event GitHub sends for action on pull
// request number, caused by sender: the pull request as GET /pulls/{number} answers it now,
// the repository, the sender and the installation; synchronize carries before and after.
func (s *Server) PullRequestEvent(repo *Repo, number int, action, sender, before string) map[string]any {
	s.t.Helper()
	s.mu.Lock()
	cp := *s.pull(repo, number, "PullRequestEvent")
	inst := repo.installationID
	s.mu.Unlock()
	pr := s.pullJSON(repo, &cp)
	typ := "User"
	if strings.HasSuffix(sender, "[bot]") {
		typ = "Bot"
	}
	ev := map[string]any{
		"action": action, "number": number, "pull_request": pr, "repository": s.repoJSON(repo),
		"sender":       s.userJSON(sender, s.UserID(sender), typ),
		"installation": map[string]any{"id": inst, "node_id": fmt.Sprintf("MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u%d", inst)},
	}
	if action == "synchronize" {
		ev["before"], ev["after"] = before, pr["head"].(map[string]any)["sha"]
	}
	return ev
}

// handleTimeline answers GET /repos/{owner}/{repo}/issues/{issue_number}/timeline with the
// cross-referenced events of the pull requests that reference the issue (CrossReference), in
// the shape GitHub gives them (source.issue is the pull request as an issue).
func (s *Server) handleTimeline(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "issues", "read")
	if repo == nil {
		return
	}
	n, err := strconv.Atoi(r.PathValue("issue_number"))
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.mu.Lock()
	var refs []PR
	for _, pr := range repo.pulls {
		if slices.Contains(pr.crossRefs, n) {
			refs = append(refs, *pr)
		}
	}
	s.mu.Unlock()
	out := []any{}
	for _, pr := range refs {
		links := map[string]any{"url": s.apiURL("/repos/%s/pulls/%d", repo.FullName(), pr.Number), "html_url": pr.HTMLURL,
			"diff_url": pr.HTMLURL + ".diff", "patch_url": pr.HTMLURL + ".patch", "merged_at": nil}
		if pr.merged {
			links["merged_at"] = timestamp(pr.closedAt)
		}
		actor := s.pullAuthor(&pr)
		out = append(out, map[string]any{
			"event": "cross-referenced", "actor": actor, "created_at": timestamp(epoch), "updated_at": timestamp(epoch),
			"source": map[string]any{"type": "issue", "issue": map[string]any{
				"id": int64(pr.Number) + 9000, "node_id": fmt.Sprintf("PR_%d", pr.Number), "number": pr.Number,
				"title": pr.Title, "state": pr.State, "user": actor, "pull_request": links,
				"repository": s.repoJSON(repo), "html_url": pr.HTMLURL,
				"url": s.apiURL("/repos/%s/issues/%d", repo.FullName(), pr.Number),
			}},
		})
	}
	writeJSON(w, http.StatusOK, out)
}

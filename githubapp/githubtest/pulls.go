package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PR is a pull request as the fake stored it.
type PR struct {
	Number              int
	Head, Base          string // branch names
	Draft               bool
	Title, Body         string
	State               string // "open" or "closed"
	HTMLURL             string
	MaintainerCanModify bool
	Edits               int // successful PATCH requests

	headSHA string // the head's commit when its branch was deleted (DeleteBranch)

	// What became of it (outcomes.go): merged by a login into mergeSHA, when it closed, the
	// commits it had when merged, its author (a person's pull request; "": the App's).
	merged        bool
	mergedBy      string
	mergeSHA      string
	closedAt      time.Time
	mergedCommits int
	author        string
	crossRefs     []int // issues whose timeline shows this pull request (CrossReference)
}

// PRs returns the pull requests of repo, in creation order.
func (s *Server) PRs(repo *Repo) []PR {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PR, 0, len(repo.pulls))
	for _, pr := range repo.pulls {
		out = append(out, *pr)
	}
	return out
}

// ClosePR closes pull request number of repo, as a person does on GitHub.
func (s *Server) ClosePR(repo *Repo, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pr := range repo.pulls {
		if pr.Number == number {
			pr.State = "closed"
			return
		}
	}
	s.t.Errorf("fake GitHub: ClosePR: no pull request #%d in %s", number, repo.FullName())
}

// nextNumber is the next issue/PR number of repo: they share one sequence on GitHub.
func (repo *Repo) nextNumber() int {
	n := 0
	for k := range repo.issues {
		n = max(n, k)
	}
	for _, pr := range repo.pulls {
		n = max(n, pr.Number)
	}
	return n + 1
}

func (s *Server) pullJSON(repo *Repo, pr *PR) map[string]any {
	base := s.apiURL("/repos/%s/pulls/%d", repo.FullName(), pr.Number)
	issue := s.apiURL("/repos/%s/issues/%d", repo.FullName(), pr.Number)
	ref := func(branch string) map[string]any {
		sha := s.revParse(repo, "refs/heads/"+branch)
		if sha == "" && branch == pr.Head {
			sha = pr.headSHA // GitHub keeps the last head of a pull request whose branch is gone
		}
		return map[string]any{
			"label": repo.Owner + ":" + branch, "ref": branch, "sha": sha,
			"repo": s.repoJSON(repo), "user": s.userJSON(repo.Owner, 1, "Organization"),
		}
	}
	reviewers := []any{}
	for _, u := range s.RequestedReviewers(repo, pr.Number) {
		reviewers = append(reviewers, s.userJSON(u, s.UserID(u), "User"))
	}
	out := map[string]any{
		"requested_reviewers": reviewers, "requested_teams": []any{},
		"id": int64(pr.Number) + 9000, "node_id": fmt.Sprintf("PR_%d", pr.Number), "number": pr.Number,
		"state": pr.State, "locked": false, "title": pr.Title, "body": pr.Body, "draft": pr.Draft,
		"user": s.pullAuthor(pr), "head": ref(pr.Head), "base": ref(pr.Base), "labels": []any{}, "assignee": nil,
		"milestone": nil, "auto_merge": nil, "merged": pr.merged, "merged_at": nil, "merged_by": nil, "closed_at": nil,
		"merge_commit_sha": nil, "mergeable": nil, "mergeable_state": "unknown", "maintainer_can_modify": pr.MaintainerCanModify,
		"author_association": "NONE", "comments": 0, "review_comments": 0, "commits": s.pullCommits(repo, pr), "additions": 0, "deletions": 0,
		"changed_files": 0, "url": base, "html_url": pr.HTMLURL, "issue_url": issue,
		"diff_url": pr.HTMLURL + ".diff", "patch_url": pr.HTMLURL + ".patch",
		"commits_url": base + "/commits", "review_comments_url": base + "/comments",
		"review_comment_url": s.apiURL("/repos/%s/pulls/comments{/number}", repo.FullName()),
		"comments_url":       issue + "/comments", "statuses_url": s.apiURL("/repos/%s/statuses/%s", repo.FullName(), s.revParse(repo, "refs/heads/"+pr.Head)),
		"_links":     map[string]any{"self": map[string]string{"href": base}, "html": map[string]string{"href": pr.HTMLURL}},
		"created_at": timestamp(epoch), "updated_at": timestamp(time.Now()),
	}
	s.pullOutcomeJSON(pr, out)
	return out
}

func (s *Server) handleListPulls(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "pull_requests", "read")
	if repo == nil {
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	if state != "open" && state != "closed" && state != "all" {
		writeValidation(w, "PullRequest", "state", "invalid", "")
		return
	}
	var headOwner, headRef string
	if h := q.Get("head"); h != "" {
		var ok bool
		if headOwner, headRef, ok = strings.Cut(h, ":"); !ok {
			// GitHub ignores a head filter without "user:": it would list every PR.
			headOwner, headRef = "", ""
		}
	}
	out := []any{}
	for _, pr := range s.PRs(repo) {
		if state != "all" && pr.State != state {
			continue
		}
		if headRef != "" && (headOwner != repo.Owner || pr.Head != headRef) {
			continue
		}
		if b := q.Get("base"); b != "" && pr.Base != b {
			continue
		}
		out = append(out, s.pullJSON(repo, &pr))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleCreatePull(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "pull_requests", "write")
	if repo == nil {
		return
	}
	var req struct {
		Title, Head, Base, Body string
		Draft                   bool
		MaintainerCanModify     *bool `json:"maintainer_can_modify"`
	}
	if !decode(w, r, &req) {
		return
	}
	head := req.Head
	if owner, ref, ok := strings.Cut(head, ":"); ok {
		if owner != repo.Owner {
			writeValidation(w, "PullRequest", "head", "invalid", "")
			return
		}
		head = ref
	}
	switch {
	case req.Title == "":
		writeValidation(w, "PullRequest", "title", "missing_field", "")
		return
	case s.revParse(repo, "refs/heads/"+head) == "":
		writeValidation(w, "PullRequest", "head", "invalid", "")
		return
	case s.revParse(repo, "refs/heads/"+req.Base) == "":
		writeValidation(w, "PullRequest", "base", "invalid", "")
		return
	case s.revParse(repo, "refs/heads/"+head) == s.revParse(repo, "refs/heads/"+req.Base):
		writeValidation(w, "PullRequest", "", "custom", "No commits between "+req.Base+" and "+head)
		return
	}
	s.mu.Lock()
	for _, pr := range repo.pulls {
		if pr.State == "open" && pr.Head == head && pr.Base == req.Base {
			s.mu.Unlock()
			writeValidation(w, "PullRequest", "", "custom", "A pull request already exists for "+repo.Owner+":"+head+".")
			return
		}
	}
	n := repo.nextNumber()
	pr := &PR{Number: n, Head: head, Base: req.Base, Draft: req.Draft, Title: req.Title, Body: req.Body, State: "open",
		HTMLURL: fmt.Sprintf("%s/%s/pull/%d", s.URL, repo.FullName(), n), MaintainerCanModify: req.MaintainerCanModify == nil || *req.MaintainerCanModify}
	repo.pulls = append(repo.pulls, pr)
	cp := *pr
	s.mu.Unlock()
	s.updatePullRef(repo, &cp) // GitHub keeps refs/pull/N/head
	writeJSON(w, http.StatusCreated, s.pullJSON(repo, &cp))
}

// pullFor resolves {pull_number}; it writes 404 and returns nil when there is none.
func (s *Server) pullFor(w http.ResponseWriter, r *http.Request, repo *Repo) *PR {
	n, err := strconv.Atoi(r.PathValue("pull_number"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(repo.pulls, func(pr *PR) bool { return pr.Number == n }); err == nil && i >= 0 {
		return repo.pulls[i]
	}
	writeError(w, http.StatusNotFound, "Not Found")
	return nil
}

func (s *Server) handleGetPull(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "pull_requests", "read")
	if repo == nil {
		return
	}
	if pr := s.pullFor(w, r, repo); pr != nil {
		s.mu.Lock()
		cp := *pr
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, s.pullJSON(repo, &cp))
	}
}

func (s *Server) handleEditPull(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "pull_requests", "write")
	if repo == nil {
		return
	}
	pr := s.pullFor(w, r, repo)
	if pr == nil {
		return
	}
	var req struct {
		Title, Body, State, Base *string
		MaintainerCanModify      *bool `json:"maintainer_can_modify"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.State != nil && *req.State != "open" && *req.State != "closed" {
		writeValidation(w, "PullRequest", "state", "invalid", "")
		return
	}
	if req.Base != nil && s.revParse(repo, "refs/heads/"+*req.Base) == "" {
		writeValidation(w, "PullRequest", "base", "invalid", "")
		return
	}
	s.mu.Lock()
	if req.Title != nil {
		pr.Title = *req.Title
	}
	if req.Body != nil {
		pr.Body = *req.Body
	}
	if req.State != nil {
		pr.State = *req.State
	}
	if req.Base != nil {
		pr.Base = *req.Base
	}
	if req.MaintainerCanModify != nil {
		pr.MaintainerCanModify = *req.MaintainerCanModify
	}
	// Like GitHub, "draft" cannot be changed through this endpoint; it is ignored.
	pr.Edits++
	cp := *pr
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.pullJSON(repo, &cp))
}

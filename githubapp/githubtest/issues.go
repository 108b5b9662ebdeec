package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

type issue struct {
	number      int
	title, body string
	state       string
	labels      []string
	author      string
	deleted     bool   // refuse.go: 410
	movedTo     string // refuse.go: the API URL it was transferred to
	locked      bool   // refuse.go: the App's comments are refused
}

// Comment is a comment as the fake stored it.
type Comment struct {
	ID      int64
	Issue   int
	Body    string
	History []string // earlier bodies, oldest first
	User    string
}

// Reaction is a reaction as the fake stored it.
type Reaction struct {
	Issue   int
	Content string
	User    string
}

// AddIssue creates an open issue written by "octocat".
func (s *Server) AddIssue(repo *Repo, number int, title, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo.issues[number] = &issue{number: number, title: title, body: body, state: "open", author: "octocat"}
}

// AddLabel puts a label on an issue.
func (s *Server) AddLabel(repo *Repo, number int, label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is, ok := repo.issues[number]; ok && !slices.Contains(is.labels, label) {
		is.labels = append(is.labels, label)
	}
}

// AddComment records a comment by user (a person's login, or an App's "slug[bot]") on an issue
// or PR and returns its id.
func (s *Server) AddComment(repo *Repo, number int, user, body string) int64 {
	c := &Comment{ID: s.id(), Issue: number, Body: body, User: user}
	s.mu.Lock()
	defer s.mu.Unlock()
	repo.comments = append(repo.comments, c)
	return c.ID
}

// Labels returns the labels on an issue.
func (s *Server) Labels(repo *Repo, number int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is, ok := repo.issues[number]; ok {
		return append([]string(nil), is.labels...)
	}
	return nil
}

// SetPermission gives user a role on repo: "admin", "maintain", "write", "triage", "read" or
// "none".
func (s *Server) SetPermission(repo *Repo, user, perm string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo.permissions[user] = perm
	s.userIDLocked(user)
}

// Comments returns the comments on an issue or PR, with their edit history.
func (s *Server) Comments(repo *Repo, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range repo.comments {
		if c.Issue == number {
			cc := *c
			cc.History = append([]string(nil), c.History...)
			out = append(out, cc)
		}
	}
	return out
}

// Reactions returns the reactions on an issue.
func (s *Server) Reactions(repo *Repo, number int) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Reaction
	for _, r := range repo.reactions {
		if r.Issue == number {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) labelJSON(repo *Repo, name string) map[string]any {
	return map[string]any{"id": len(name), "node_id": "LA_" + name, "url": s.apiURL("/repos/%s/labels/%s", repo.FullName(), name),
		"name": name, "description": nil, "color": "0e8a16", "default": false}
}

// issueFor resolves {issue_number}; it writes 404 and returns nil when there is no such issue or PR.
func (s *Server) issueFor(w http.ResponseWriter, r *http.Request, repo *Repo) *issue {
	n, err := strconv.Atoi(r.PathValue("issue_number"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		if is, ok := repo.issues[n]; ok {
			return is
		}
		for _, pr := range repo.pulls {
			if pr.Number == n { // comments on a PR go through the issues API too
				return &issue{number: n, title: pr.Title, body: pr.Body, state: pr.State, author: AppSlug + "[bot]"}
			}
		}
	}
	writeError(w, http.StatusNotFound, "Not Found")
	return nil
}

// authIssue is authRepo with the "issues" permission perm, then issueFor; it has answered the
// request (401, 403, 404) when the issue is nil.
func (s *Server) authIssue(w http.ResponseWriter, r *http.Request, perm string) (*Repo, *issue) {
	repo := s.authRepo(w, r, "issues", perm)
	if repo == nil {
		return nil, nil
	}
	is := s.issueFor(w, r, repo)
	if is != nil && s.refuseIssue(w, r, is) {
		return nil, nil
	}
	return repo, is
}

func (s *Server) handleGetIssue(w http.ResponseWriter, r *http.Request) {
	repo, is := s.authIssue(w, r, "read")
	if is == nil {
		return
	}
	s.mu.Lock()
	labels := []any{}
	for _, l := range is.labels {
		labels = append(labels, s.labelJSON(repo, l))
	}
	s.mu.Unlock()
	base := s.apiURL("/repos/%s/issues/%d", repo.FullName(), is.number)
	writeJSON(w, http.StatusOK, map[string]any{
		"id": int64(is.number) + 5000, "node_id": fmt.Sprintf("I_%d", is.number), "number": is.number,
		"title": is.title, "body": is.body, "state": is.state, "locked": is.locked, "labels": labels,
		"user": s.userJSON(is.author, 1, "User"), "assignee": nil, "milestone": nil, "comments": 0, "closed_at": nil,
		"url": base, "comments_url": base + "/comments", "events_url": base + "/events", "labels_url": base + "/labels{/name}",
		"html_url":       fmt.Sprintf("%s/%s/issues/%d", s.URL, repo.FullName(), is.number),
		"repository_url": s.apiURL("/repos/%s", repo.FullName()), "author_association": "OWNER",
		"created_at": timestamp(epoch), "updated_at": timestamp(epoch),
	})
}

func (s *Server) commentJSON(repo *Repo, c *Comment) map[string]any {
	return map[string]any{
		"id": c.ID, "node_id": fmt.Sprintf("IC_%d", c.ID), "body": c.Body, "user": s.userJSON(c.User, 41898282, "Bot"),
		"url":       s.apiURL("/repos/%s/issues/comments/%d", repo.FullName(), c.ID),
		"html_url":  fmt.Sprintf("%s/%s/issues/%d#issuecomment-%d", s.URL, repo.FullName(), c.Issue, c.ID),
		"issue_url": s.apiURL("/repos/%s/issues/%d", repo.FullName(), c.Issue), "author_association": "NONE",
		"created_at": timestamp(epoch), "updated_at": timestamp(time.Now()),
	}
}

func (s *Server) handleListComments(w http.ResponseWriter, r *http.Request) {
	repo, is := s.authIssue(w, r, "read")
	if is == nil {
		return
	}
	out := []any{}
	for _, c := range s.Comments(repo, is.number) {
		out = append(out, s.commentJSON(repo, &c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleCreateComment(w http.ResponseWriter, r *http.Request) {
	repo, is := s.authIssue(w, r, "write")
	if is == nil {
		return
	}
	body, ok := decodeCommentBody(w, r)
	if !ok {
		return
	}
	c := &Comment{ID: s.id(), Issue: is.number, Body: body, User: AppSlug + "[bot]"}
	s.mu.Lock()
	repo.comments = append(repo.comments, c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, s.commentJSON(repo, c))
}

func (s *Server) handleEditComment(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "issues", "write")
	if repo == nil {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("comment_id"), 10, 64)
	body, ok := decodeCommentBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	i := slices.IndexFunc(repo.comments, func(c *Comment) bool { return c.ID == id })
	if i < 0 {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	c := repo.comments[i]
	c.History = append(c.History, c.Body)
	c.Body = body
	cc := *c
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.commentJSON(repo, &cc))
}

// decodeCommentBody reads a comment's {"body": ...}; it has answered 400 or 422 when not ok.
func decodeCommentBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var req struct {
		Body *string `json:"body"`
	}
	if !decode(w, r, &req) {
		return "", false
	}
	if req.Body == nil {
		writeValidation(w, "IssueComment", "body", "missing_field", "")
		return "", false
	}
	return *req.Body, true
}

var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

func (s *Server) handleCreateReaction(w http.ResponseWriter, r *http.Request) {
	repo, is := s.authIssue(w, r, "write")
	if is == nil {
		return
	}
	var req struct {
		Content string `json:"content"`
	}
	if !decode(w, r, &req) {
		return
	}
	if !slices.Contains(reactionContents, req.Content) {
		writeValidation(w, "Reaction", "content", "invalid", "")
		return
	}
	user := AppSlug + "[bot]"
	s.mu.Lock()
	status := http.StatusCreated
	rx := Reaction{Issue: is.number, Content: req.Content, User: user}
	if slices.Contains(repo.reactions, rx) {
		status = http.StatusOK // GitHub answers 200 when the same user already reacted so
	} else {
		repo.reactions = append(repo.reactions, rx)
	}
	s.mu.Unlock()
	writeJSON(w, status, map[string]any{"id": len(req.Content), "node_id": "REA_" + req.Content, "content": req.Content,
		"user": s.botJSON(), "created_at": timestamp(epoch)})
}

func (s *Server) handleRemoveLabel(w http.ResponseWriter, r *http.Request) {
	repo, is := s.authIssue(w, r, "write")
	if is == nil {
		return
	}
	name := r.PathValue("name")
	s.mu.Lock()
	stored := repo.issues[is.number]
	i := -1
	if stored != nil {
		i = slices.Index(stored.labels, name)
	}
	if i < 0 {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Label does not exist")
		return
	}
	stored.labels = slices.Delete(stored.labels, i, i+1)
	out := []any{}
	for _, l := range stored.labels {
		out = append(out, s.labelJSON(repo, l))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

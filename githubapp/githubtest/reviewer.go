package githubtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"sync"
)

// This file fakes what a CI or review follow-up reads on the host: the line comments of a pull
// request review, the check runs of a check suite with their annotations, and GitHub Actions job
// logs, whose request answers 302 with a download address, on another host by default (as
// github.com does) or on the fake's own host (SetLogsOnSameHost).

// reviewerState is the fake's state for this file.
type reviewerState struct {
	mu           sync.Mutex
	reviews      map[int64]*fakeReview
	suites       map[int64]*fakeSuite
	runs         map[int64]*fakeCheck // by check run id (== Actions job id)
	logsSameHost bool
	logHost      *httptest.Server
	downloads    []LogDownload
}

type fakeReview struct {
	repo     string
	pr       int
	author   string
	comments []map[string]any
}

type fakeSuite struct {
	repo string
	runs []int64
}

type fakeCheck struct {
	repo      string
	json      map[string]any
	spec      CheckRunSpec
	signature string
}

// ReviewCommentSpec is a line comment of a review added with AddReview.
type ReviewCommentSpec struct {
	Path                          string
	Line, StartLine, OriginalLine int // Line 0: outdated
	Side                          string
	DiffHunk, Body                string
}

// CheckRunSpec is a check run of a check suite added with AddCheckSuite.
type CheckRunSpec struct {
	Name, Conclusion           string
	Title, Summary, Text       string
	Annotations                []AnnotationSpec
	Log                        string // a GitHub Actions job's whole log; "" answers 404 (expired)
	HideFromList, NotCompleted bool
}

// AnnotationSpec is an annotation of a check run.
type AnnotationSpec struct {
	Path                       string
	StartLine, EndLine         int
	Level, Title, Message, Raw string
}

// LogDownload is one download of a job log the fake served: on which host, and with which
// Authorization header ("" none).
type LogDownload struct {
	SameHost      bool
	Authorization string
}

func (s *Server) reviewerRoutes() {
	s.rv = &reviewerState{reviews: map[int64]*fakeReview{}, suites: map[int64]*fakeSuite{}, runs: map[int64]*fakeCheck{}}
	p := apiPrefix + "/repos/{owner}/{repo}"
	s.api.HandleFunc("GET "+p+"/pulls/{pull_number}/reviews/{review_id}/comments", s.handleReviewComments)
	s.api.HandleFunc("GET "+p+"/check-suites/{check_suite_id}/check-runs", s.handleSuiteCheckRuns)
	s.api.HandleFunc("GET "+p+"/check-runs/{check_run_id}/annotations", s.handleAnnotations)
	s.api.HandleFunc("GET "+p+"/actions/jobs/{job_id}/logs", s.handleJobLogs)
	if s.web == nil {
		s.web = http.NewServeMux()
	}
	s.web.HandleFunc("GET /_services/pipelines/logs/{job_id}", func(w http.ResponseWriter, r *http.Request) { s.serveLog(w, r, true) })
}

// SetLogsOnSameHost makes job-log requests redirect to the fake's own host (as GitHub
// Enterprise Server may) instead of another one.
func (s *Server) SetLogsOnSameHost(same bool) {
	s.rv.mu.Lock()
	defer s.rv.mu.Unlock()
	s.rv.logsSameHost = same
}

// LogDownloads returns the job-log downloads served so far.
func (s *Server) LogDownloads() []LogDownload {
	s.rv.mu.Lock()
	defer s.rv.mu.Unlock()
	return slices.Clone(s.rv.downloads)
}

// AddReview records a submitted review by author on pull request pr with its line comments,
// and returns the review's id and the comments' ids.
func (s *Server) AddReview(repo *Repo, pr int, author string, comments ...ReviewCommentSpec) (int64, []int64) {
	reviewID := s.id()
	rv := &fakeReview{repo: repo.FullName(), pr: pr, author: author}
	var ids []int64
	for _, c := range comments {
		id := s.id()
		ids = append(ids, id)
		rv.comments = append(rv.comments, s.reviewCommentJSON(repo, pr, reviewID, id, author, c))
	}
	s.rv.mu.Lock()
	defer s.rv.mu.Unlock()
	s.rv.reviews[reviewID] = rv
	return reviewID, ids
}

// reviewCommentJSON is the review-comment schema of the REST API.
func (s *Server) reviewCommentJSON(repo *Repo, pr int, reviewID, id int64, author string, c ReviewCommentSpec) map[string]any {
	nullable := func(n int) any {
		if n == 0 {
			return nil
		}
		return n
	}
	side, startSide := any(nil), any(nil)
	if c.Side != "" {
		side = c.Side
		if c.StartLine != 0 {
			startSide = c.Side
		}
	}
	html := fmt.Sprintf("%s/%s/pull/%d#discussion_r%d", s.URL, repo.FullName(), pr, id)
	self := s.apiURL("/repos/%s/pulls/comments/%d", repo.FullName(), id)
	prURL := s.apiURL("/repos/%s/pulls/%d", repo.FullName(), pr)
	return map[string]any{
		"url": self, "pull_request_review_id": reviewID, "id": id, "node_id": fmt.Sprintf("PRRC_%d", id),
		"diff_hunk": c.DiffHunk, "path": c.Path, "position": nullable(c.Line), "original_position": max(c.OriginalLine, 1),
		"commit_id": "0000000000000000000000000000000000000001", "original_commit_id": "0000000000000000000000000000000000000001",
		"user": s.userJSON(author, 7, "User"), "body": c.Body, "created_at": timestamp(epoch), "updated_at": timestamp(epoch),
		"html_url": html, "pull_request_url": prURL, "author_association": "COLLABORATOR",
		"_links": map[string]any{"self": map[string]string{"href": self}, "html": map[string]string{"href": html},
			"pull_request": map[string]string{"href": prURL}},
		"start_line": nullable(c.StartLine), "original_start_line": nullable(c.StartLine), "start_side": startSide,
		"line": nullable(c.Line), "original_line": max(c.OriginalLine, c.Line), "side": side, "subject_type": "line",
	}
}

// AddCheckSuite records a completed check suite of the App appSlug on headSHA with its check
// runs, and returns the suite's id and the runs' ids (for GitHub Actions, the jobs' ids).
func (s *Server) AddCheckSuite(repo *Repo, headSHA, appSlug string, runs ...CheckRunSpec) (int64, []int64) {
	suiteID := s.id()
	suite := &fakeSuite{repo: repo.FullName()}
	checks := map[int64]*fakeCheck{}
	for _, spec := range runs {
		id := s.id()
		status, conclusion, completed := "completed", any(spec.Conclusion), any(timestamp(epoch))
		if spec.NotCompleted {
			status, conclusion, completed = "in_progress", nil, nil
		}
		title, summary, text := any(nil), any(nil), any(nil)
		if spec.Title != "" || spec.Summary != "" {
			title, summary = spec.Title, spec.Summary
		}
		if spec.Text != "" {
			text = spec.Text
		}
		app := s.userJSON(appSlug, 15368, "Bot")
		j := map[string]any{
			"id": id, "node_id": fmt.Sprintf("CR_%d", id), "head_sha": headSHA, "name": spec.Name, "external_id": "",
			"url":      s.apiURL("/repos/%s/check-runs/%d", repo.FullName(), id),
			"html_url": fmt.Sprintf("%s/%s/actions/runs/1/job/%d", s.URL, repo.FullName(), id), "details_url": nil,
			"status": status, "conclusion": conclusion, "started_at": timestamp(epoch), "completed_at": completed,
			"output": map[string]any{"title": title, "summary": summary, "text": text, "annotations_count": len(spec.Annotations),
				"annotations_url": s.apiURL("/repos/%s/check-runs/%d/annotations", repo.FullName(), id)},
			"check_suite": map[string]any{"id": suiteID},
			"app": map[string]any{"id": 15368, "slug": appSlug, "node_id": "MDM6QXBwMTUzNjg=", "owner": app, "name": appSlug,
				"description": nil, "external_url": s.URL, "html_url": s.URL + "/apps/" + appSlug, "created_at": timestamp(epoch),
				"updated_at": timestamp(epoch), "permissions": map[string]string{}, "events": []string{}},
			"pull_requests": []any{}, "deployment": nil,
		}
		sig := make([]byte, 12)
		_, _ = rand.Read(sig)
		checks[id] = &fakeCheck{repo: repo.FullName(), json: j, spec: spec, signature: hex.EncodeToString(sig)}
		if !spec.HideFromList {
			suite.runs = append(suite.runs, id)
		}
	}
	s.rv.mu.Lock()
	defer s.rv.mu.Unlock()
	s.rv.suites[suiteID] = suite
	ids := make([]int64, 0, len(checks))
	for id, c := range checks {
		s.rv.runs[id] = c
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return suiteID, ids
}

// paginate answers one page of items the way GitHub does: per_page (default 30, at most 100)
// and page (from 1), with a Link header naming the next and last pages.
func paginate(w http.ResponseWriter, r *http.Request, items []any) []any {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	last := max(1, (len(items)+per-1)/per)
	link := func(n int) string {
		u := *r.URL
		u.Scheme, u.Host = "http", r.Host
		v := u.Query()
		v.Set("page", strconv.Itoa(n))
		v.Set("per_page", strconv.Itoa(per))
		u.RawQuery = v.Encode()
		return u.String()
	}
	if page < last {
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, link(page+1), link(last)))
	}
	from := min((page-1)*per, len(items))
	if out := items[from:min(from+per, len(items))]; out != nil {
		return out
	}
	return []any{} // never nil: an empty page encodes as [] as GitHub's does
}

func (s *Server) handleReviewComments(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "pull_requests", "read")
	if repo == nil {
		return
	}
	pr := s.pullFor(w, r, repo)
	if pr == nil {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("review_id"), 10, 64)
	s.rv.mu.Lock()
	rv, ok := s.rv.reviews[id]
	var items []any
	if ok {
		for _, c := range rv.comments {
			items = append(items, c)
		}
	}
	s.rv.mu.Unlock()
	if !ok || rv.repo != repo.FullName() || rv.pr != pr.Number {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, paginate(w, r, items))
}

func (s *Server) handleSuiteCheckRuns(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "checks", "read")
	if repo == nil {
		return
	}
	q := r.URL.Query()
	if f := q.Get("filter"); f != "" && f != "latest" && f != "all" {
		writeValidation(w, "CheckRun", "filter", "invalid", "")
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("check_suite_id"), 10, 64)
	s.rv.mu.Lock()
	suite, ok := s.rv.suites[id]
	var items []any
	if ok {
		for _, rid := range suite.runs {
			c := s.rv.runs[rid]
			if st := q.Get("status"); st != "" && c.json["status"] != st {
				continue
			}
			items = append(items, c.json)
		}
	}
	s.rv.mu.Unlock()
	if !ok || suite.repo != repo.FullName() {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(items), "check_runs": paginate(w, r, items)})
}

func (s *Server) handleAnnotations(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "checks", "read")
	if repo == nil {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("check_run_id"), 10, 64)
	s.rv.mu.Lock()
	c, ok := s.rv.runs[id]
	s.rv.mu.Unlock()
	if !ok || c.repo != repo.FullName() {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	items := []any{}
	for _, a := range c.spec.Annotations {
		items = append(items, map[string]any{
			"path": a.Path, "start_line": a.StartLine, "end_line": a.EndLine, "start_column": nil, "end_column": nil,
			"annotation_level": a.Level, "title": a.Title, "message": a.Message, "raw_details": a.Raw,
			"blob_href": fmt.Sprintf("%s/%s/blob/%s/%s", s.URL, repo.FullName(), c.json["head_sha"], a.Path),
		})
	}
	writeJSON(w, http.StatusOK, paginate(w, r, items))
}

// handleJobLogs answers like GitHub: 302 to a short-lived download address.
func (s *Server) handleJobLogs(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "actions", "read")
	if repo == nil {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("job_id"), 10, 64)
	s.rv.mu.Lock()
	defer s.rv.mu.Unlock()
	c, ok := s.rv.runs[id]
	if !ok || c.repo != repo.FullName() || c.spec.Log == "" {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	where := s.URL
	if !s.rv.logsSameHost {
		if s.rv.logHost == nil {
			s.rv.logHost = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveLog(w, r, false) }))
			s.t.Cleanup(s.rv.logHost.Close)
		}
		where = s.rv.logHost.URL
	}
	loc := fmt.Sprintf("%s/_services/pipelines/logs/%d?sig=%s", where, id, url.QueryEscape(c.signature))
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusFound)
}

// serveLog serves a job's log to whoever has the signed address, and records whether a
// credential came with it.
func (s *Server) serveLog(w http.ResponseWriter, r *http.Request, sameHost bool) {
	id, _ := strconv.ParseInt(r.PathValue("job_id"), 10, 64)
	if !sameHost {
		var err error
		if id, err = strconv.ParseInt(path1(r.URL.Path), 10, 64); err != nil {
			http.NotFound(w, r)
			return
		}
	}
	s.rv.mu.Lock()
	c, ok := s.rv.runs[id]
	s.rv.downloads = append(s.rv.downloads, LogDownload{SameHost: sameHost, Authorization: r.Header.Get("Authorization")})
	s.rv.mu.Unlock()
	if !ok || r.URL.Query().Get("sig") != c.signature {
		http.Error(w, "AuthenticationFailed", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(c.spec.Log))
}

// path1 is the last element of a path.
func path1(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

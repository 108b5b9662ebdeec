// Package githubtest is an in-process fake of the parts of GitHub frognano uses: App
// authentication (JWT-signed installation-token requests, repository- and permission-scoped
// installation tokens), the 18 REST endpoints of the OpenAPI subset in the shapes GitHub answers
// with (plus GET /repositories/{id}, which the subset leaves out, answered like
// /repos/{owner}/{repo}), and real git repositories served over smart HTTP by `git http-backend`,
// which demand an installation token for clone and push. It also serves GitHub's Git database
// API (blobs, trees, commits, references: gitdb.go), writing real objects into those
// repositories, with the verification GitHub reports for API-made commits, review requests and
// GET /users/{username}. Repositories can be renamed and deleted
// as on GitHub: ids stay, names move (rename.go). It records what it was asked so tests can
// inspect it, and can inject faults (5xx, rate limits, writes whose answer is lost or never
// comes).
//
// It serves the GitHub Enterprise Server layout: the API lives under URL+"/api/v3", so a client
// that accidentally calls api.github.com fails loudly. Any request it does not recognise fails
// the test. It is for tests only and must never be linked into the service.
package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DefaultAppID is the App id the fake answers as.
const DefaultAppID = 424242

// AppSlug is the fake App's slug; its bot user is AppSlug+"[bot]".
const AppSlug = "frognano"

const apiPrefix = "/api/v3"

// Key generation is the slowest part of New; every Server shares one key.
var (
	keyOnce sync.Once
	appKey  *rsa.PrivateKey
	appPEM  []byte
	keyErr  error
)

func sharedKey() (*rsa.PrivateKey, []byte, error) {
	keyOnce.Do(func() {
		appKey, keyErr = rsa.GenerateKey(rand.Reader, 2048)
		if keyErr == nil {
			appPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(appKey)})
		}
	})
	return appKey, appPEM, keyErr
}

// Server is a fake GitHub. Its methods are safe for concurrent use.
type Server struct {
	URL        string // GITHUB_URL to configure; the API is at URL+"/api/v3"
	AppID      int64
	PrivateKey []byte // PKCS#1 PEM of the App key

	t    testing.TB
	srv  *httptest.Server
	key  *rsa.PrivateKey
	root string // GIT_PROJECT_ROOT
	api  *http.ServeMux
	web  *http.ServeMux // the few web pages a test drives (the App manifest flow)

	reqSeq atomic.Int64 // X-GitHub-Request-Id
	// rateRemaining, when rateSet, is the X-RateLimit-Remaining every API answer carries
	// (SetRateRemaining), each answer one lower, as GitHub counts them down.
	rateRemaining atomic.Int64
	rateSet       atomic.Bool

	mu            sync.Mutex
	nextID        int64
	repos         map[string]*Repo // "owner/name"
	moved         map[string]int64 // a name a repository had before a rename -> its id (rename.go)
	installations map[int64][]*Repo
	inst          map[int64]*installState // installation.go
	tokens        map[string]*token
	issued        []string
	tokenRequests []TokenRequest
	faults        []*fault
	requests      []Request
	app           appState
	rv            *reviewerState             // reviews, check suites, job logs (reviewer.go)
	ann           map[int64][]map[string]any // annotations of the check runs created (checkruns.go)
	oauth         oauthState                 // oauth.go
	users         map[string]int64           // lower-case login -> user id (gitdb.go)
	teams         map[string][]string        // "org/slug" (org in lower case) -> active members (contents.go)
}

// Request is one request the fake received.
type Request struct {
	Method, Path, Query string
	Status              int
	// RequestID is the X-GitHub-Request-Id the fake answered an API request with, as GitHub
	// does with every answer ("" for git).
	RequestID string
}

// New starts a fake GitHub; t.Cleanup stops it.
func New(t testing.TB) *Server {
	t.Helper()
	key, pemBytes, err := sharedKey()
	if err != nil {
		t.Fatalf("generating fake App key: %v", err)
	}
	s := &Server{
		AppID: DefaultAppID, PrivateKey: pemBytes, t: t, key: key, root: t.TempDir(),
		nextID: 1000, repos: map[string]*Repo{}, installations: map[int64][]*Repo{}, tokens: map[string]*token{},
	}
	s.api = http.NewServeMux()
	s.routes()
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

func (s *Server) id() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return s.nextID
}

// statusRecorder remembers the status a handler wrote, for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush lets git http-backend stream through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w}
	route := r.URL.Path
	isAPI := strings.HasPrefix(route, apiPrefix+"/")
	requestID := ""
	if isAPI {
		route = strings.TrimPrefix(route, apiPrefix)
		requestID = fmt.Sprintf("F00D:%X:%X", s.AppID, s.reqSeq.Add(1)) // its own sequence: ids stay as they were
		rec.Header().Set("X-GitHub-Request-Id", requestID)
		if s.rateSet.Load() {
			left := max(s.rateRemaining.Add(-1), 1) // never 0: that is a rate limit, answered as one
			rec.Header().Set("X-RateLimit-Limit", "5000")
			rec.Header().Set("X-RateLimit-Remaining", strconv.FormatInt(left, 10))
			rec.Header().Set("X-RateLimit-Used", strconv.FormatInt(5000-left, 10))
			rec.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		}
	}
	// The request is on record before it is answered: a client may have read the whole answer
	// (a JSON decoder stops at the value's end) before this handler returns, so a test that
	// counts requests right after a call must not race the recording. Its status is filled in
	// once answered.
	s.mu.Lock()
	i := len(s.requests)
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, RequestID: requestID})
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.requests[i].Status = rec.status
		s.mu.Unlock()
	}()
	if f := s.takeFault(r.Method, route); f != nil && f.before != nil {
		f.before()
	} else if f != nil {
		if f.afterApplying {
			// The request takes effect, but its answer is lost: what a client sees when a
			// proxy times out after GitHub committed the write.
			s.dispatch(httptest.NewRecorder(), r, isAPI)
		}
		switch {
		case f.drop:
			// No answer at all: the connection ends, and the client sees a network error.
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
					return
				}
			}
			s.t.Errorf("fake GitHub: cannot drop the connection of %s %s", r.Method, r.URL.Path)
			return
		case f.hold:
			// No answer until the client gives up (its timeout, its cancelled context).
			if f.held != nil {
				f.held()
			}
			<-r.Context().Done()
			return
		}
		for k, v := range f.headers {
			rec.Header().Set(k, v)
		}
		if f.body != "" {
			rec.Header().Set("Content-Type", "application/json; charset=utf-8")
			rec.WriteHeader(f.status)
			_, _ = rec.Write([]byte(f.body))
			return
		}
		writeError(rec, f.status, f.message())
		return
	}
	s.dispatch(rec, r, isAPI)
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, isAPI bool) {
	switch {
	case isAPI:
		if s.redirectMoved(w, r, strings.TrimPrefix(r.URL.Path, apiPrefix)) {
			return
		}
		s.api.ServeHTTP(w, r)
	case strings.Contains(r.URL.Path, ".git/"):
		s.serveGit(w, r)
	case s.web != nil && s.isWebRoute(r):
		s.web.ServeHTTP(w, r)
	default:
		s.unexpected(w, r)
	}
}

func (s *Server) unexpected(w http.ResponseWriter, r *http.Request) {
	s.t.Errorf("fake GitHub: unexpected request %s %s", r.Method, r.URL.String())
	writeError(w, http.StatusNotFound, "Not Found")
}

// SetRateRemaining makes every API answer from now on say that n-1, n-2, ... calls remain in
// the rate limit (X-RateLimit-Remaining, never below 1).
func (s *Server) SetRateRemaining(n int64) {
	s.rateRemaining.Store(n)
	s.rateSet.Store(true)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// CountRequests counts received requests with this method whose API path (without /api/v3)
// or git path matches pattern (path.Match syntax, e.g. "/repos/*/*/pulls").
func (s *Server) CountRequests(method, pattern string) int {
	n := 0
	for _, r := range s.Requests() {
		p := strings.TrimPrefix(r.Path, apiPrefix)
		if ok, _ := path.Match(pattern, p); ok && (method == "*" || method == r.Method) {
			n++
		}
	}
	return n
}

// fault is an injected failure.
type fault struct {
	method, pattern string
	status          int
	headers         map[string]string
	times           int
	afterApplying   bool
	drop, hold      bool   // after applying: close the connection, or answer nothing (DropNextResponse, HoldNextResponse)
	held            func() // HoldNextResponse: called once the request was applied
	body            string // raw JSON answer instead of an error, when set
	before          func() // BeforeNext: run this, then answer the request as usual
}

func (f *fault) message() string {
	switch {
	case f.status == http.StatusForbidden || f.status == http.StatusTooManyRequests:
		return "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
	case f.status >= 500:
		return "Server Error"
	default:
		return http.StatusText(f.status)
	}
}

// FailNext makes the next `times` requests matching method ("*" for any) and pathPattern
// (path.Match syntax over the API path without /api/v3, e.g. "/repos/*/*/pulls", or a git path)
// fail with status and headers, without being executed. A 403 or 429 carries GitHub's
// secondary-rate-limit message.
func (s *Server) FailNext(method, pathPattern string, status int, headers map[string]string, times int) {
	s.addFault(&fault{method: method, pattern: pathPattern, status: status, headers: headers, times: times})
}

// LoseNextResponse is FailNext for a request that does take effect: the fake executes it, then
// answers with status instead of the real answer (a write committed behind a failing proxy).
func (s *Server) LoseNextResponse(method, pathPattern string, status int, times int) {
	s.addFault(&fault{method: method, pattern: pathPattern, status: status, times: times, afterApplying: true})
}

// DropNextResponse is LoseNextResponse with no answer at all: the fake executes the next
// `times` matching requests, then closes their connections, so the client sees a network
// error for a write that happened.
func (s *Server) DropNextResponse(method, pathPattern string, times int) {
	s.addFault(&fault{method: method, pattern: pathPattern, times: times, afterApplying: true, drop: true})
}

// HoldNextResponse executes the next `times` matching requests, calls held (when not nil),
// and then answers nothing until the client gives up: its timeout ends, or its context is
// cancelled (held may cancel it). The write happened; the client never learns it.
func (s *Server) HoldNextResponse(method, pathPattern string, times int, held func()) {
	s.addFault(&fault{method: method, pattern: pathPattern, times: times, afterApplying: true, hold: true, held: held})
}

// RespondNext answers the next `times` matching requests with status and the raw JSON body,
// without executing them: a stale read, such as a PR list that misses a PR created a moment ago.
func (s *Server) RespondNext(method, pathPattern string, status int, body string, times int) {
	s.addFault(&fault{method: method, pattern: pathPattern, status: status, body: body, times: times})
}

func (s *Server) addFault(f *fault) {
	if _, err := path.Match(f.pattern, "/"); err != nil {
		s.t.Fatalf("fake GitHub: bad path pattern %q: %v", f.pattern, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
}

func (s *Server) takeFault(method, route string) *fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.faults {
		if f.times <= 0 || (f.method != "*" && f.method != method) {
			continue
		}
		if ok, _ := path.Match(f.pattern, route); ok {
			f.times--
			return f
		}
	}
	return nil
}

// writeJSON answers like GitHub: JSON with its media type.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with GitHub's basic-error shape.
func writeError(w http.ResponseWriter, status int, message string) {
	doc := "https://docs.github.com/rest"
	if status == http.StatusForbidden || status == http.StatusTooManyRequests {
		if strings.Contains(message, "rate limit") {
			doc = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
		}
	}
	writeJSON(w, status, map[string]any{"message": message, "documentation_url": doc, "status": strconv.Itoa(status)})
}

// writeValidation answers 422 with GitHub's validation-error shape.
func writeValidation(w http.ResponseWriter, resource, field, code, message string) {
	e := map[string]any{"resource": resource, "code": code}
	if field != "" {
		e["field"] = field
	}
	if message != "" {
		e["message"] = message
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"message": "Validation Failed", "errors": []any{e},
		"documentation_url": "https://docs.github.com/rest", "status": "422",
	})
}

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

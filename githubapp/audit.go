package githubapp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/frognano/frognano/internal/logging"
)

// The audit trail (issues 22 and 28): every write frognano attempts on GitHub on behalf of a
// run is recorded once, by the installation client's transport (auditTransport, the outermost
// layer, so a write retried by retryTransport is one entry with its final answer), whatever
// GitHub answered and also when no answer came. A write is on behalf of a run when its
// context carries the run's id (WithAuditRun; WithAuditRuns for a write on behalf of several,
// such as the reply to `@APP stop`, which gets one entry per run). An entry names the object
// made or changed (from the request's path, from the two fields of a request body it may read:
// a review request's `reviewers` and a ref write's `ref` and `sha`, and from GitHub's answer),
// its outcome and GitHub's request id; it never holds a token, a header but
// X-GitHub-Request-Id, a query, or any other text of a body.

// Outcomes of a write (AuditEntry.Outcome).
const (
	// OutcomeDone: GitHub answered with a 2xx; the write happened.
	OutcomeDone = "done"
	// OutcomeRefused: GitHub answered with a 3xx or 4xx (Status); the write did not happen
	// there.
	OutcomeRefused = "refused"
	// OutcomeUnknown: the request reached GitHub and no answer says what became of it: a 5xx
	// (a proxy's 502 or GitHub's 500 can follow a write GitHub committed), or no answer at all
	// (the connection ended, the time ran out, the run's context was cancelled). The write may
	// have happened; look at the object on GitHub.
	OutcomeUnknown = "unknown"
	// OutcomeNotSent: the request failed before any of it reached GitHub (no token, the
	// context ended while waiting for the rate limit); nothing happened.
	OutcomeNotSent = "not sent"
)

// AuditEntry is one write frognano attempted on GitHub on behalf of a run.
type AuditEntry struct {
	RunID  int64
	At     time.Time
	Action string // "comment.created", "pull_request.updated", "branch.created", … (auditAction)
	Method string // the HTTP method
	Path   string // the API path (no host, no query)
	Status int    // GitHub's HTTP status; 0 when no answer came
	// Outcome is OutcomeDone, OutcomeRefused, OutcomeUnknown or OutcomeNotSent; Detail says in
	// frognano's own words why, when it is not done ("" when it is).
	Outcome, Detail string
	// ObjectType, ObjectID, ObjectSHA and ObjectURL name what was made or changed: a comment's
	// id, a pull request's or issue's number (with the logins asked to review it, or the label
	// removed from it), a branch's name, a commit's SHA, and its page on GitHub.
	ObjectType, ObjectID, ObjectSHA, ObjectURL string
	RequestID                                  string // X-GitHub-Request-Id; "" when no answer came
}

// AuditSink records audit entries (run.Store.RecordAudit). It must not block for long; an error
// is logged, never returned to the write, which happened (or not) whatever the trail says.
type AuditSink func(ctx context.Context, e AuditEntry) error

type auditRunKey struct{}

// WithAuditRun returns ctx whose GitHub writes are recorded as run id's.
func WithAuditRun(ctx context.Context, id int64) context.Context {
	return WithAuditRuns(ctx, id)
}

// WithAuditRuns returns ctx whose GitHub writes are recorded once for each of the runs ids
// (a write on behalf of several: the reply to a stop request that stopped them). Ids <= 0 are
// left out.
func WithAuditRuns(ctx context.Context, ids ...int64) context.Context {
	var keep []int64
	for _, id := range ids {
		if id > 0 && !slices.Contains(keep, id) {
			keep = append(keep, id)
		}
	}
	return context.WithValue(ctx, auditRunKey{}, keep)
}

// AuditRun is the (first) run whose writes ctx's requests are (0: none).
func AuditRun(ctx context.Context) int64 {
	if ids := AuditRuns(ctx); len(ids) > 0 {
		return ids[0]
	}
	return 0
}

// AuditRuns are the runs whose writes ctx's requests are.
func AuditRuns(ctx context.Context) []int64 {
	ids, _ := ctx.Value(auditRunKey{}).([]int64)
	return ids
}

// auditTransport records every write (POST, PATCH, PUT, DELETE) made on behalf of a run, with
// its outcome.
type auditTransport struct {
	next http.RoundTripper
	sink AuditSink
	log  *slog.Logger
	now  func() time.Time
}

// maxAuditBody is the most of an answer read to name the object a write made.
const maxAuditBody = 1 << 20

// maxAuditRequestBody is the most of a request's body read for the fields that name its
// object; a larger body is not read.
const maxAuditRequestBody = 64 << 10

func (t *auditTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	runs := AuditRuns(ctx)
	if len(runs) == 0 || !isWrite(req.Method) {
		return t.next.RoundTrip(req)
	}
	e := AuditEntry{Method: req.Method, Path: apiPath(req.URL)}
	e.Action, e.ObjectType = auditAction(req.Method, e.Path)
	requestObject(&e, req)
	sent := &sentMark{method: req.Method, url: req.URL.String()}
	resp, err := t.next.RoundTrip(req.WithContext(context.WithValue(ctx, sentKey{}, sent)))
	e.At = t.now().UTC()
	switch {
	case err != nil:
		e.Outcome, e.Detail = OutcomeUnknown, lostAnswer(ctx, err, "while waiting for GitHub's answer")
		if !sent.sent.Load() {
			e.Outcome, e.Detail = OutcomeNotSent, lostAnswer(ctx, err, "before it was sent")
		}
	default:
		e.Status, e.RequestID = resp.StatusCode, resp.Header.Get("X-GitHub-Request-Id")
		switch c := resp.StatusCode; {
		case c >= 200 && c <= 299:
			e.Outcome = OutcomeDone
			if resp.Body != nil && resp.Body != http.NoBody {
				head, rerr := io.ReadAll(io.LimitReader(resp.Body, maxAuditBody))
				resp.Body = readCloser{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
				if rerr == nil {
					objectOf(&e, head)
				}
			}
		case c >= 300 && c <= 499:
			e.Outcome, e.Detail = OutcomeRefused, fmt.Sprintf("GitHub answered %d", c)
		default:
			e.Outcome, e.Detail = OutcomeUnknown, fmt.Sprintf("GitHub answered %d, which can follow a write it made", c)
		}
	}
	for _, id := range runs {
		e.RunID = id
		if rerr := t.sink(ctx, e); rerr != nil {
			t.log.ErrorContext(ctx, "recording a GitHub write in the audit trail", logging.RunID(id),
				"action", e.Action, "outcome", e.Outcome, "request_id", e.RequestID, logging.Err(rerr))
		}
	}
	return resp, err
}

// lostAnswer says in fixed words why a write got no answer (never the error's own text,
// which may quote a URL or an answer).
func lostAnswer(ctx context.Context, err error, when string) string {
	var ne net.Error
	switch {
	case ctx.Err() == context.Canceled || errors.Is(err, context.Canceled):
		return "cancelled " + when
	case ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "timed out " + when
	}
	return "failed " + when + " (no answer)"
}

// sentKey carries a write's sentMark from auditTransport down to sentTransport.
type sentKey struct{}

// sentMark records whether the audited request was written to GitHub's connection.
type sentMark struct {
	method, url string
	sent        atomic.Bool
}

// sentTransport is the App's base transport, under ghinstallation: the only layer that sees
// a request being written. For the write an auditTransport watches (the same method and URL,
// not the installation token request made on its context), it marks the write as sent once
// net/http has written it whole (httptrace's WroteRequest), so that a write that got no answer
// is told from one that never left.
type sentTransport struct{ next http.RoundTripper }

func (t *sentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if m, ok := req.Context().Value(sentKey{}).(*sentMark); ok && req.Method == m.method && req.URL.String() == m.url {
		trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				m.sent.Store(true)
			}
		}}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	}
	return t.next.RoundTrip(req)
}

type readCloser struct {
	io.Reader
	io.Closer
}

// apiPath is u's path from /repos/ (or the path as is), without the host's API prefix.
func apiPath(u *url.URL) string {
	p := u.EscapedPath()
	if i := strings.Index(p, "/repos/"); i >= 0 {
		return p[i:]
	}
	if i := strings.Index(p, "/api/v3/"); i >= 0 {
		return p[i+len("/api/v3"):]
	}
	return p
}

// auditAction names a write by its method and path (/repos/{owner}/{repo}/…).
func auditAction(method, path string) (action, objectType string) {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	tail := ""
	if len(parts) > 3 && parts[0] == "repos" {
		tail = strings.Join(parts[3:], "/")
	}
	seg := strings.Split(tail, "/")
	switch {
	case method == http.MethodPost && len(seg) == 3 && seg[0] == "issues" && seg[2] == "comments":
		return "comment.created", "comment"
	case method == http.MethodPatch && len(seg) == 3 && seg[0] == "issues" && seg[1] == "comments":
		return "comment.edited", "comment"
	case method == http.MethodPost && len(seg) == 3 && seg[0] == "issues" && seg[2] == "reactions":
		return "reaction.created", "reaction"
	case method == http.MethodDelete && len(seg) == 4 && seg[0] == "issues" && seg[2] == "labels":
		return "label.removed", "label"
	case method == http.MethodPost && tail == "pulls":
		return "pull_request.created", "pull_request"
	case method == http.MethodPatch && len(seg) == 2 && seg[0] == "pulls":
		return "pull_request.updated", "pull_request"
	case method == http.MethodPost && len(seg) == 3 && seg[0] == "pulls" && seg[2] == "requested_reviewers":
		return "review.requested", "pull_request"
	case method == http.MethodPost && tail == "check-runs":
		return "check_run.created", "check_run"
	case method == http.MethodPatch && len(seg) == 2 && seg[0] == "check-runs":
		return "check_run.updated", "check_run"
	case len(seg) >= 2 && seg[0] == "git" && seg[1] == "refs":
		// The branch frognano's commit is published on (Publish: the Git database API).
		verb := map[string]string{http.MethodPost: "created", http.MethodPatch: "updated", http.MethodDelete: "deleted"}[method]
		return "branch." + cmp.Or(verb, strings.ToLower(method)), "branch"
	case len(seg) >= 2 && seg[0] == "git":
		kind := strings.TrimSuffix(seg[1], "s") // blobs, trees, commits, refs
		if method == http.MethodPost {
			return "git_" + kind + ".created", "git_" + kind
		}
		return "git_" + kind + "." + strings.ToLower(method), "git_" + kind
	}
	return strings.ToLower(method), "other"
}

// requestObject names what a write is about from the request alone, so that a write whose
// answer was lost is named too: the object its path names (pathObject), and two fields of a
// JSON body go-github built, read bounded through GetBody and nothing else of it: a review
// request's `reviewers` (as logins) and a ref write's `ref` and `sha`.
func requestObject(e *AuditEntry, req *http.Request) {
	e.ObjectID = pathObject(e.Path)
	if e.Action != "review.requested" && e.ObjectType != "branch" || req.GetBody == nil {
		return
	}
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxAuditRequestBody+1))
	if err != nil || len(b) > maxAuditRequestBody {
		return
	}
	var f struct {
		Reviewers []string `json:"reviewers"`
		Ref       string   `json:"ref"`
		SHA       string   `json:"sha"`
	}
	if json.Unmarshal(b, &f) != nil {
		return
	}
	if e.Action == "review.requested" {
		for _, login := range f.Reviewers {
			if personLogin.MatchString(login) {
				e.ObjectID += " @" + login
			} else {
				e.ObjectID += " (not a login)"
			}
		}
		e.ObjectID = strings.TrimSpace(e.ObjectID)
		return
	}
	if ref, ok := strings.CutPrefix(f.Ref, "refs/heads/"); ok && e.ObjectID == "" && validRef(ref) {
		e.ObjectID = ref
	}
	if shaRe.MatchString(f.SHA) {
		e.ObjectSHA = f.SHA
	}
}

// pathObject is the object a request's path names (/repos/{owner}/{repo}/…): an issue's or
// pull request's number with a label removed from it, a comment's, check run's or branch's
// name; "" for a write whose object only the answer names (a new comment, pull request,
// check run, reaction or Git object).
func pathObject(path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) < 5 || parts[0] != "repos" {
		return ""
	}
	seg := parts[3:]
	switch {
	case len(seg) == 4 && seg[0] == "issues" && seg[2] == "labels":
		name, _ := url.PathUnescape(seg[3])
		return "#" + seg[1] + " " + name
	case len(seg) == 3 && seg[0] == "issues" && seg[1] == "comments":
		return seg[2]
	case len(seg) >= 2 && seg[0] == "pulls" && isNumber(seg[1]):
		return "#" + seg[1]
	case len(seg) == 2 && seg[0] == "check-runs":
		return seg[1]
	case len(seg) >= 4 && seg[0] == "git" && seg[1] == "refs" && seg[2] == "heads":
		var ref []string
		for _, p := range seg[3:] {
			u, err := url.PathUnescape(p)
			if err != nil {
				return ""
			}
			ref = append(ref, u)
		}
		return strings.Join(ref, "/")
	}
	return ""
}

var shaRe = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// validRef is a branch name as frognano writes them; anything else is not recorded.
func validRef(s string) bool {
	return s != "" && len(s) <= 255 && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '~' || r == '^' || r == ':' || r == '\\' })
}

// objectOf reads what a write made from its JSON answer: its id (or number), SHA and page.
func objectOf(e *AuditEntry, body []byte) {
	var o struct {
		ID      *int64 `json:"id"`
		Number  int    `json:"number"`
		SHA     string `json:"sha"`
		HeadSHA string `json:"head_sha"`
		Ref     string `json:"ref"`
		HTMLURL string `json:"html_url"`
		Object  struct {
			SHA string `json:"sha"`
		} `json:"object"`
		Head struct {
			SHA string `json:"sha"`
		} `json:"head"`
	}
	if json.Unmarshal(body, &o) != nil {
		return
	}
	switch {
	case e.ObjectID != "": // named by the request already (pathObject, requestObject)
	case o.Number != 0:
		e.ObjectID = fmt.Sprintf("#%d", o.Number)
	case o.Ref != "":
		e.ObjectID = strings.TrimPrefix(o.Ref, "refs/heads/")
	case o.ID != nil:
		e.ObjectID = fmt.Sprint(*o.ID)
	}
	e.ObjectSHA = firstOf(o.SHA, o.HeadSHA, o.Object.SHA, o.Head.SHA, e.ObjectSHA)
	e.ObjectURL = o.HTMLURL
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

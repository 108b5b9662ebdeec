package githubapp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/logging"
)

// The audit trail (issue 22 §3): every write frognano makes on GitHub on behalf of a run is
// recorded once, by the installation client's transport (auditTransport, the outermost layer,
// so a write retried by retryTransport is one entry with its final answer), and by Publish for
// the git push, which is no API call. A write is on behalf of a run when its context carries
// the run's id (WithAuditRun). An entry names the object made or changed and GitHub's request
// id; it never holds a token, a header but X-GitHub-Request-Id, a query, or any body text.

// AuditEntry is one write on GitHub on behalf of a run.
type AuditEntry struct {
	RunID  int64
	At     time.Time
	Action string // "comment.created", "pull_request.updated", "branch.created", … (auditAction)
	Method string // the HTTP method; "GIT" for a push
	Path   string // the API path (no host, no query), or the pushed ref
	Status int    // GitHub's HTTP status; 0 for a push
	// ObjectType, ObjectID, ObjectSHA and ObjectURL name what was made or changed: a comment's
	// id, a pull request's or issue's number, a commit's SHA, and its page on GitHub.
	ObjectType, ObjectID, ObjectSHA, ObjectURL string
	RequestID                                  string // X-GitHub-Request-Id; "" for a push
}

// AuditSink records audit entries (run.Store.RecordAudit). It must not block for long; an error
// is logged, never returned to the write, which happened.
type AuditSink func(ctx context.Context, e AuditEntry) error

type auditRunKey struct{}

// WithAuditRun returns ctx whose GitHub writes are recorded as run id's.
func WithAuditRun(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, auditRunKey{}, id)
}

// AuditRun is the run whose writes ctx's requests are (0: none).
func AuditRun(ctx context.Context) int64 {
	id, _ := ctx.Value(auditRunKey{}).(int64)
	return id
}

// auditTransport records the writes (POST, PATCH, PUT, DELETE) GitHub answered with a 2xx,
// for requests on behalf of a run.
type auditTransport struct {
	next http.RoundTripper
	sink AuditSink
	log  *slog.Logger
	now  func() time.Time
}

// maxAuditBody is the most of an answer read to name the object a write made.
const maxAuditBody = 1 << 20

func (t *auditTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	runID := AuditRun(req.Context())
	if err != nil || runID == 0 || !isWrite(req.Method) || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	e := AuditEntry{RunID: runID, At: t.now().UTC(), Method: req.Method, Path: apiPath(req.URL), Status: resp.StatusCode,
		RequestID: resp.Header.Get("X-GitHub-Request-Id")}
	e.Action, e.ObjectType = auditAction(req.Method, e.Path)
	if resp.Body != nil && resp.Body != http.NoBody {
		head, rerr := io.ReadAll(io.LimitReader(resp.Body, maxAuditBody))
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		if rerr == nil {
			objectOf(&e, head)
		}
	}
	if e.ObjectID == "" {
		e.ObjectID = pathObject(e.Path)
	}
	if err := t.sink(req.Context(), e); err != nil {
		t.log.ErrorContext(req.Context(), "recording a GitHub write in the audit trail", logging.RunID(runID),
			"action", e.Action, "request_id", e.RequestID, logging.Err(err))
	}
	return resp, nil
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

// pathObject is the object a path names when the answer did not: a label's issue and name.
func pathObject(path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) == 7 && parts[3] == "issues" && parts[5] == "labels" {
		name, _ := url.PathUnescape(parts[6])
		return "#" + parts[4] + " " + name
	}
	return ""
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
	case o.Number != 0:
		e.ObjectID = fmt.Sprintf("#%d", o.Number)
	case o.Ref != "":
		e.ObjectID = strings.TrimPrefix(o.Ref, "refs/heads/")
	case o.ID != nil:
		e.ObjectID = fmt.Sprint(*o.ID)
	}
	e.ObjectSHA = firstOf(o.SHA, o.HeadSHA, o.Object.SHA, o.Head.SHA)
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

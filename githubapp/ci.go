package githubapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/logging"
)

// Limits of what FailedChecks reads of a failed check suite: enough for the model to see why CI
// failed, never enough to fill its context.
const (
	MaxFailedChecks      = 10      // failed check runs read in detail
	maxAnnotations       = 50      // annotations read per check run
	maxCheckTextBytes    = 4 << 10 // of each check run's summary and text
	maxLogLines          = 50      // lines of a failed Actions step's log
	maxLogChars          = 8 << 10 // of those lines
	maxLogDownload       = 64 << 20
	keepLogTail          = 1 << 20
	actionsApp           = "github-actions"
	failedStepErrorToken = "##[error]"
)

// FailedCheck is one check run of a failed check suite that failed, as a CI follow-up's task
// shows it. Every text field is the CI's output (the repository's code wrote it): untrusted,
// redacted and cut to the limits above.
type FailedCheck struct {
	ID                  int64
	Name, App           string // the check's name and the slug of the App that ran it
	Conclusion          string
	Title, Summary      string
	Text                string
	HTMLURL             string
	Annotations         []Annotation
	MoreAnnotations     bool
	Log                 string // GitHub Actions jobs: the last lines of the failed step's log
	LogNote             string // GitHub Actions jobs without Log: why
	SummaryCut, TextCut bool
}

// Annotation is one annotation of a check run (a file, lines and a message).
type Annotation struct {
	Path               string
	StartLine, EndLine int
	Level              string // "notice", "warning" or "failure"
	Title, Message     string
	RawDetails         string
}

// failedConclusion is what counts as a failed check run.
func failedConclusion(c string) bool { return c == "failure" || c == "timed_out" }

// FailedChecks reads the check runs of check suite suiteID that failed (their latest runs):
// name, output, annotations and, for GitHub Actions jobs, the end of the failed step's log. A
// part that cannot be read (logs expired, the App lacks actions: read) is noted, not an error;
// only the list of check runs itself must be readable. total is how many failed; at most
// MaxFailedChecks are returned.
func (c *Client) FailedChecks(ctx context.Context, suiteID int64) (checks []FailedCheck, total int, err error) {
	opts := &github.ListCheckRunsOptions{Filter: github.String("latest"), ListOptions: github.ListOptions{PerPage: 100}}
	logs := &logReader{c: c} // one Actions token for all the logs
	for {
		res, resp, err := c.gh.Checks.ListCheckRunsCheckSuite(ctx, c.owner, c.repo, suiteID, opts)
		if err != nil {
			return nil, 0, mark(fmt.Errorf("listing check runs of check suite %d on %s/%s: %w", suiteID, c.owner, c.repo, err))
		}
		for _, run := range res.CheckRuns {
			if !failedConclusion(run.GetConclusion()) {
				continue
			}
			total++
			if len(checks) < MaxFailedChecks {
				checks = append(checks, c.failedCheck(ctx, run, logs))
			}
		}
		if resp.NextPage == 0 || total > 10*MaxFailedChecks {
			return checks, total, nil
		}
		opts.Page = resp.NextPage
	}
}

func (c *Client) failedCheck(ctx context.Context, run *github.CheckRun, logs *logReader) FailedCheck {
	fc := FailedCheck{
		ID: run.GetID(), Name: run.GetName(), App: run.GetApp().GetSlug(), Conclusion: run.GetConclusion(),
		HTMLURL: run.GetHTMLURL(),
	}
	if out := run.GetOutput(); out != nil {
		fc.Title = Redact(clip.Bytes(out.GetTitle(), 200))
		fc.Summary, fc.SummaryCut = cut(out.GetSummary(), maxCheckTextBytes)
		fc.Text, fc.TextCut = cut(out.GetText(), maxCheckTextBytes)
	}
	fc.Annotations, fc.MoreAnnotations = c.annotations(ctx, fc.ID)
	if fc.App == actionsApp {
		// A GitHub Actions check run is a job, with the same id.
		log, err := logs.jobLog(ctx, fc.ID)
		switch {
		case err != nil:
			fc.LogNote = "its log could not be read (" + clip.Bytes(Redact(err.Error()), 300) + ")"
		case log == "":
			fc.LogNote = "its log is empty"
		default:
			fc.Log = log
		}
	}
	return fc
}

func cut(s string, max int) (string, bool) {
	s = Redact(s)
	return clip.Bytes(s, max), len(s) > max
}

// annotations reads up to maxAnnotations annotations of a check run; one that cannot be read
// gives none (the check's summary still says why it failed).
func (c *Client) annotations(ctx context.Context, id int64) (list []Annotation, more bool) {
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.gh.Checks.ListCheckRunAnnotations(ctx, c.owner, c.repo, id, opts)
		if err != nil {
			c.log.WarnContext(ctx, "reading a check run's annotations", "check_run", id, logging.Err(err))
			return list, false
		}
		for _, a := range page {
			if len(list) == maxAnnotations {
				return list, true
			}
			msg, _ := cut(a.GetMessage(), 1000)
			details, _ := cut(a.GetRawDetails(), 1000)
			list = append(list, Annotation{
				Path: clip.Bytes(a.GetPath(), 300), StartLine: a.GetStartLine(), EndLine: a.GetEndLine(),
				Level: clip.Bytes(a.GetAnnotationLevel(), 20), Title: Redact(clip.Bytes(a.GetTitle(), 200)),
				Message: msg, RawDetails: details,
			})
		}
		if resp.NextPage == 0 {
			return list, false
		}
		opts.Page = resp.NextPage
	}
}

// logReader reads the logs of one check suite's Actions jobs with one token.
type logReader struct {
	c   *Client
	gh  *github.Client // nil until the first log is read
	err error          // why there is no token
}

// jobLog returns the last lines of the failed step of GitHub Actions job id, redacted. GitHub
// answers the logs request with a redirect to a download address: it is followed with the
// installation token only when it is on the API's own host; anywhere else (github.com hands out
// signed addresses on another host) it is fetched with no credential at all. The token for this
// call carries actions: read only, so an App without that permission loses the logs and
// nothing else.
func (l *logReader) jobLog(ctx context.Context, id int64) (string, error) {
	if l.gh == nil && l.err == nil {
		l.gh, l.err = l.c.actionsClient(ctx)
	}
	if l.err != nil {
		return "", l.err
	}
	c, gh := l.c, l.gh
	loc, _, err := gh.Actions.GetWorkflowJobLogs(ctx, c.owner, c.repo, id, 0)
	if err != nil {
		return "", fmt.Errorf("asking for the log of job %d: %w", id, err)
	}
	api := gh.BaseURL
	client := &http.Client{Transport: c.app.cfg.Transport, Timeout: 4 * c.app.cfg.HTTPTimeout, CheckRedirect: logRedirect}
	if loc.Scheme == api.Scheme && loc.Host == api.Host {
		client = gh.Client() // the same host: the token goes with it
	} else if err := logAddress(loc); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return "", fmt.Errorf("downloading the log of job %d: %w", id, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("downloading the log of job %d: %w", id, urlFree(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("downloading the log of job %d: %s", id, resp.Status)
	}
	tail, err := readTail(io.LimitReader(resp.Body, maxLogDownload), keepLogTail)
	if err != nil {
		return "", fmt.Errorf("downloading the log of job %d: %w", id, urlFree(err))
	}
	return failedStepTail(Redact(strings.ToValidUTF8(string(tail), "\uFFFD")), maxLogLines, maxLogChars), nil
}

// urlFree drops the address from a url.Error: a signed download address is a credential too.
func urlFree(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// logAddress refuses a log download address (or a redirect's) that is not https, plain http
// being allowed on loopback alone (a GitHub Enterprise Server test set-up).
func logAddress(u *url.URL) error {
	if u.Scheme == "https" || u.Scheme == "http" && loopback(u.Hostname()) {
		return nil
	}
	// The path and query of a signed address are a credential: name the scheme and host only.
	return fmt.Errorf("the log's address is not https: %s://%s", clip.Bytes(u.Scheme, 20), clip.Bytes(u.Host, 200))
}

// logRedirect holds every redirect of a log download (sent without a credential) to the rule
// the first address met: a download host cannot send frognano on to plain http elsewhere (a
// metadata address, an internal service) and have its answer handed to the model.
func logRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	return logAddress(req.URL)
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// actionsClient is a client whose token can only read Actions (job logs) of this repository.
func (c *Client) actionsClient(ctx context.Context) (*github.Client, error) {
	if !c.grants.Has("actions", "read") {
		// Asking would only get a 422: say why there is no log, and what would give one.
		return nil, ErrNoActionsRead
	}
	tokens := ghinstallation.NewFromAppsTransport(c.app.apps, c.installationID)
	tokens.BaseURL = c.app.endpoints.AppsAPI
	tokens.InstallationTokenOptions = &github.InstallationTokenOptions{
		Repositories: []string{c.repo},
		Permissions:  &github.InstallationPermissions{Actions: github.String("read")},
	}
	tctx, cancel := context.WithTimeout(ctx, c.app.cfg.HTTPTimeout)
	defer cancel()
	tok, err := tokens.Token(tctx)
	if err != nil {
		return nil, mark(fmt.Errorf("getting a token to read Actions logs (does the App have actions: read?): %w", err))
	}
	RegisterSecret(tok)
	rt := &retryTransport{next: tokens, cfg: c.app.cfg, writes: c.app.bucket(c.installationID)}
	gh := github.NewClient(&http.Client{Transport: rt, CheckRedirect: sameHostRedirect})
	gh.BaseURL, gh.UploadURL = c.gh.BaseURL, c.gh.UploadURL
	return gh, nil
}

// readTail reads r to its end and returns its last keep bytes (or fewer).
func readTail(r io.Reader, keep int) ([]byte, error) {
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > 2*keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
		if err == io.EOF {
			if len(buf) > keep {
				buf = buf[len(buf)-keep:]
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// failedStepTail returns the last lines of the step that failed in a GitHub Actions job log:
// the maxLines lines that end with the first "##[error]" line (and the error lines right after
// it), the timestamps GitHub puts before each line removed; without an error line, the log's last
// lines. The result is at most maxChars characters long, cut at its start.
func failedStepTail(log string, maxLines, maxChars int) string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(log, "\r\n", "\n"), "\n"), "\n")
	for i, l := range lines {
		lines[i] = stripTimestamp(l)
	}
	end := len(lines) - 1
	for i, l := range lines {
		if strings.HasPrefix(l, failedStepErrorToken) {
			end = i
			for end+1 < len(lines) && strings.HasPrefix(lines[end+1], failedStepErrorToken) {
				end++
			}
			break
		}
	}
	start := max(0, end+1-maxLines)
	out := strings.Join(lines[start:end+1], "\n")
	out, _ = clip.Tail(out, maxChars)
	return strings.TrimSpace(out)
}

// stripTimestamp removes the RFC 3339 timestamp and space GitHub writes before each log line.
func stripTimestamp(l string) string {
	if len(l) > 20 && l[4] == '-' && l[7] == '-' && l[10] == 'T' {
		if sp := strings.IndexByte(l, ' '); sp > 0 && sp < 40 && l[sp-1] == 'Z' {
			return l[sp+1:]
		}
	}
	return l
}

// ErrNoActionsRead is why a CI follow-up has no Actions logs when the installation has not
// granted actions: read: it uses the checks' output and annotations alone.
var ErrNoActionsRead = errors.New("the App's installation has not granted actions: read, so the jobs' logs were not read (the checks' output and annotations are used); approving that permission adds the failed step's log")

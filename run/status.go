package run

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/report"
)

// statusReserve is the most that the status comment adds around the runner's summary
// (state line, note or headline, progress, exit line); the runner renders the summary
// within GitHub's limit minus this, so the comment never needs cutting.
const statusReserve = 8000

// maxProgressCalls is the most tool calls of one step the status comment shows.
const maxProgressCalls = 10

// Status is everything the status comment can show (RenderStatus).
type Status struct {
	RunID         int64
	State         string // queued, running, succeeded, failed, cancelled, skipped
	Note          string // one factual line (why it failed, what happens next)
	Progress      *Progress
	PRURL         string
	PRNumber      int
	ExitReason    string
	Steps         int
	Elapsed       time.Duration
	Summary       string // markdown from the runner (no PR case)
	ExtraRequests int
	FollowUp      bool   // a follow-up on a pull request: the comment is a reply there
	Page          string // the run's page (RunPageURL); "": no link
	// Abandoned: a failed run frognano stopped working on (EndAbandoned), said so; it may
	// have published before it stopped.
	Abandoned bool `json:",omitempty"`
	// Notices say what the run skips and why (check runs off for want of a permission).
	Notices []string
}

// RenderStatus renders the status comment (or a follow-up's reply), redacted, within
// GitHub's comment limit. It never cuts markdown: should the comment be over the limit, the summary is left out (it
// is kept with the run) and the comment says so.
func RenderStatus(v Status) string {
	if s := githubapp.Redact(composeStatus(v)); utf8.RuneCountInString(s) <= report.GitHubBodyLimit || v.Summary == "" {
		return s
	}
	v.Summary = fmt.Sprintf("_The summary of this run is too long for a comment; `frognano runs show %d --report` prints it._", v.RunID)
	return githubapp.Redact(composeStatus(v))
}

func composeStatus(v Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- frognano:run:%d -->\n", v.RunID)
	switch v.State {
	case StateQueued:
		fmt.Fprintf(&b, "⏳ frognano run %d is queued.", v.RunID)
	case StateRunning:
		fmt.Fprintf(&b, "🔧 frognano run %d is working on this %s.", v.RunID, pick(v.FollowUp, "request", "issue"))
		if p := v.Progress; p != nil {
			if text := renderProgress(*p); text != "" {
				b.WriteString("\n\n" + text)
			}
		}
	case StateSucceeded:
		if v.FollowUp {
			fmt.Fprintf(&b, "✅ frognano run %d pushed a new commit to this pull request: #%d (%s).", v.RunID, v.PRNumber, v.PRURL)
			break
		}
		fmt.Fprintf(&b, "✅ frognano run %d opened a draft pull request: #%d (%s).", v.RunID, v.PRNumber, v.PRURL)
	case StateFailed:
		if v.Abandoned {
			fmt.Fprintf(&b, "❌ frognano stopped working on run %d before it finished.", v.RunID)
			break
		}
		fmt.Fprintf(&b, "❌ frognano run %d ended %s.", v.RunID, pick(v.FollowUp, "without a new commit", "without a pull request"))
	case StateCancelled:
		fmt.Fprintf(&b, "🛑 frognano run %d was cancelled.", v.RunID)
	case StateSkipped:
		if v.Steps > 0 { // the agent worked, then what it made had nowhere to go
			fmt.Fprintf(&b, "frognano run %d stopped %s.", v.RunID, pick(v.FollowUp, "without a new commit", "without a pull request"))
			break
		}
		fmt.Fprintf(&b, "frognano run %d was not started.", v.RunID)
	}
	if v.Note != "" {
		b.WriteString("\n\n" + v.Note)
	}
	for _, n := range v.Notices {
		b.WriteString("\n\nℹ️ " + n)
	}
	if v.ExitReason != "" || v.Steps > 0 {
		fmt.Fprintf(&b, "\n\nExit reason: %s; steps: %d; time: %s.", report.CodeSpan(v.ExitReason, 40), v.Steps, v.Elapsed.Round(time.Second))
	}
	if v.Summary != "" {
		b.WriteString("\n\n" + v.Summary)
	}
	switch {
	case v.ExtraRequests > 0 && v.FollowUp:
		// A review and its line comments arrive as several requests; so does a second comment.
		fmt.Fprintf(&b, "\n\n_%d more request(s) on this pull request arrived while this run was active; no second run was started (ask again once it has ended)._", v.ExtraRequests)
	case v.ExtraRequests > 0:
		fmt.Fprintf(&b, "\n\n_The label was applied %d more time(s) while this run was active; no second run was started._", v.ExtraRequests)
	}
	b.WriteString(pageLine(v.Page))
	return b.String()
}

// renderProgress shows the latest step: each tool call with its argument exactly as the
// model wrote it (report.RenderCall), or that the model gave its final answer; and, above it,
// that the run waits for a free sandbox or for the model server, while it does.
func renderProgress(p Progress) string {
	var parts []string
	if p.SandboxWait != "" {
		parts = append(parts, "⏳ Waiting for a free sandbox "+p.SandboxWait+".")
	}
	if p.Waiting != "" {
		parts = append(parts, "⏳ Waiting for the model server: "+p.Waiting+".")
	}
	if p.Step > 0 {
		parts = append(parts, renderStep(p))
	}
	return strings.Join(parts, "\n\n")
}

func renderStep(p Progress) string {
	elapsed := p.Elapsed.Round(time.Second)
	if len(p.Calls) == 0 {
		return fmt.Sprintf("Step %d: the model gave its final answer (%s elapsed).", p.Step, elapsed)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d (%s elapsed):\n", p.Step, elapsed)
	for i, c := range p.Calls {
		if i == maxProgressCalls {
			fmt.Fprintf(&b, "\n_and %d more tool calls_\n", len(p.Calls)-i)
			break
		}
		b.WriteString("\n" + report.RenderCall(c.Tool, c.Arguments, 300, githubapp.Redact))
	}
	return strings.TrimRight(b.String(), "\n")
}

func renderDenied(runID int64, labeler, permission string) string {
	return fmt.Sprintf("<!-- frognano:run:%d -->\n@%s, frognano only starts for people with write, maintain or admin "+
		"permission on this repository (yours: %s). No run was started.", runID, labeler, report.CodeSpan(permission, 20))
}

// statusComment edits the run's one status comment. Progress edits are
// throttled to one per interval and never block the agent; final edits are
// synchronous and happen after the progress loop has stopped, so a stale
// progress edit can never overwrite the final text.
type statusComment struct {
	repo     Repo
	id       int64
	interval time.Duration
	log      *slog.Logger
	view     func(Progress) Status

	mu      sync.Mutex
	latest  *Progress
	started bool
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newStatusComment(repo Repo, id int64, interval time.Duration, log *slog.Logger, view func(Progress) Status) *statusComment {
	return &statusComment{repo: repo, id: id, interval: interval, log: log, view: view,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// progress records the latest step; it never blocks.
func (s *statusComment) progress(p Progress) {
	s.mu.Lock()
	s.latest = &p
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// start runs the edit loop until close is called or ctx ends.
func (s *statusComment) start(ctx context.Context) {
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	go s.loop(ctx)
}

// loop edits the comment with the latest progress, at most once per interval.
func (s *statusComment) loop(ctx context.Context) {
	defer close(s.done)
	last := time.Now() // the comment was just posted or edited
	for {
		select {
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		case <-s.kick:
		}
		if wait := time.Until(last.Add(s.interval)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.stop:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		s.mu.Lock()
		p := s.latest
		s.latest = nil
		s.mu.Unlock()
		if p == nil {
			continue
		}
		if err := s.repo.EditComment(ctx, s.id, RenderStatus(s.view(*p))); err != nil {
			s.log.WarnContext(ctx, "editing status comment", logging.Err(err))
		}
		last = time.Now()
	}
}

// close stops the progress loop and waits for an edit in flight. It may be
// called more than once, and before start.
func (s *statusComment) close() {
	s.once.Do(func() { close(s.stop) })
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started {
		<-s.done
	}
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

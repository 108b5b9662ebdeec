package queue

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/frognano/frognano/githubapp"
)

// maxCommentChars stays under GitHub's 65,536-character comment limit.
const maxCommentChars = 60000

// knownTools are the Leaf tools; anything else the model names is shown as
// "tool" so that model-chosen text never becomes markup in our comment.
var knownTools = map[string]bool{"Read": true, "Write": true, "Edit": true, "Glob": true, "Bash": true}

// statusView is everything the status comment can show.
type statusView struct {
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
}

func renderStatus(v statusView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- frognano:run:%d -->\n", v.RunID)
	switch v.State {
	case StateQueued:
		fmt.Fprintf(&b, "⏳ frognano run %d is queued.", v.RunID)
	case StateRunning:
		fmt.Fprintf(&b, "🔧 frognano run %d is working on this issue.", v.RunID)
		if p := v.Progress; p != nil {
			tool := p.Tool
			if !knownTools[tool] {
				tool = "tool"
			}
			fmt.Fprintf(&b, "\n\nStep %d: %s %s (%s elapsed).", p.Step, tool, inlineCode(p.Summary, 120), p.Elapsed.Round(time.Second))
		}
	case StateSucceeded:
		fmt.Fprintf(&b, "✅ frognano run %d opened a draft pull request: #%d (%s).", v.RunID, v.PRNumber, v.PRURL)
	case StateFailed:
		fmt.Fprintf(&b, "❌ frognano run %d ended without a pull request.", v.RunID)
	case StateCancelled:
		fmt.Fprintf(&b, "🛑 frognano run %d was cancelled.", v.RunID)
	case StateSkipped:
		fmt.Fprintf(&b, "frognano run %d was not started.", v.RunID)
	}
	if v.Note != "" {
		b.WriteString("\n\n" + v.Note)
	}
	if v.ExitReason != "" || v.Steps > 0 {
		fmt.Fprintf(&b, "\n\nExit reason: %s; steps: %d; time: %s.", inlineCode(v.ExitReason, 40), v.Steps, v.Elapsed.Round(time.Second))
	}
	if v.Summary != "" {
		b.WriteString("\n\n" + v.Summary)
	}
	if v.ExtraRequests > 0 {
		fmt.Fprintf(&b, "\n\n_The label was applied %d more time(s) while this run was active; no second run was started._", v.ExtraRequests)
	}
	return truncate(b.String(), maxCommentChars)
}

func renderDenied(runID int64, labeler, permission string) string {
	return fmt.Sprintf("<!-- frognano:run:%d -->\n@%s, frognano only starts for people with write, maintain or admin "+
		"permission on this repository (yours: %s). No run was started.", runID, labeler, inlineCode(permission, 20))
}

// inlineCode renders untrusted text as one inline code span: no links, no
// images, no mentions, no line breaks.
func inlineCode(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '`':
			return '\''
		case '\n', '\r', '\t':
			return ' '
		}
		if invisible(r) {
			return -1
		}
		return r
	}, s)
	s = truncate(strings.TrimSpace(s), max)
	if s == "" {
		return "` `"
	}
	return "`" + s + "`"
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

var urlCredentials = regexp.MustCompile(`://[^/\s:@]+:[^/\s@]+@`)

// redact removes GitHub tokens (githubapp.Redact: classic 40-character and newer longer ones,
// and every registered secret) and URL credentials from text we are about to log, store or post.
func redact(s string) string {
	return urlCredentials.ReplaceAllString(githubapp.Redact(s), "://"+githubapp.Redacted+"@")
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
	view     func(Progress) statusView

	mu      sync.Mutex
	latest  *Progress
	started bool
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newStatusComment(repo Repo, id int64, interval time.Duration, log *slog.Logger, view func(Progress) statusView) *statusComment {
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
		if err := s.repo.EditComment(ctx, s.id, renderStatus(s.view(*p))); err != nil {
			s.log.WarnContext(ctx, "editing status comment", "error", redact(err.Error()))
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

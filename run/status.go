package run

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/frognano/frognano/internal/logging"
)

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

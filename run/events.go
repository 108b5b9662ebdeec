package run

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/verify"
)

// Kinds of run events (run_events.kind), in the order a run writes them.
const (
	// EventAttempt: an attempt of the run started (data: AttemptEvent).
	EventAttempt = "attempt"
	// EventAgent: the agent is starting: sandbox, environment setup, then the model (data: AgentEvent).
	EventAgent = "agent"
	// EventStep: one finished agent step with its tool calls and observations (data: StepEvent).
	EventStep = "step"
	// EventSandboxWait: a sandbox of the run waits for a free slot on its worker
	// (FROGNANO_MAX_SANDBOXES; data: SandboxWaitEvent). Its end is not an event of its own: the
	// next event of that sandbox's work (a step, the tests) follows it.
	EventSandboxWait = "sandbox_wait"
	// EventTestsStart: the tests before or after started in their sandbox (data: TestsStartEvent).
	EventTestsStart = "tests_start"
	// EventTests: the tests before and after, and the attempts of a run of several (data: TestsEvent).
	EventTests = "tests"
	// EventEnd: the attempt left the run in this state (data: EndEvent); terminal or requeued.
	EventEnd = "end"
)

// Caps on what one event keeps of untrusted text: the page shows a run, it is no archive.
const (
	eventTextCap  = 64 << 10 // one observation, argument string or message
	eventTaskCap  = 64 << 10
	eventTailCap  = 16 << 10 // a test run's output tail
	eventTestsCap = 500      // per-test rows of the tests event
)

// AttemptEvent is the data of EventAttempt.
type AttemptEvent struct {
	Attempt     int `json:"attempt"`
	MaxAttempts int `json:"max_attempts"`
}

// AgentEvent is the data of EventAgent.
type AgentEvent struct {
	Task string `json:"task"`
}

// StepEvent is the data of EventStep: one step of one agent attempt.
type StepEvent struct {
	Attempt      int            `json:"attempt"` // from 1; 0 for a run of one
	Index        int            `json:"index"`   // 0-based
	Content      string         `json:"content,omitempty"`
	Calls        []CallEvent    `json:"calls"`
	Observations []ObservedText `json:"observations"`
	ModelMS      int64          `json:"model_ms"`
	ToolMS       int64          `json:"tool_ms"`
	ElapsedMS    int64          `json:"elapsed_ms"`
}

// CallEvent is one tool call of a step, its arguments as the model wrote them.
type CallEvent struct {
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
}

// ObservedText is what one tool call returned.
type ObservedText struct {
	Tool string `json:"tool"`
	Text string `json:"text"`
}

// SandboxWaitEvent is the data of EventSandboxWait.
type SandboxWaitEvent struct {
	Attempt int    `json:"attempt"` // from 1; 0 for a run of one
	For     string `json:"for"`     // what the sandbox is for: "the agent", "the tests before"
	InUse   int    `json:"in_use"`
	Cap     int    `json:"cap"`
}

// TestsStartEvent is the data of EventTestsStart.
type TestsStartEvent struct {
	Attempt int  `json:"attempt"` // from 1; 0 for a run of one
	After   bool `json:"after"`   // the tests after (on the patch); false: before
}

// TestsEvent is the data of EventTests.
type TestsEvent struct {
	Environment string       `json:"environment,omitempty"`
	Before      *TestsRun    `json:"before,omitempty"`
	After       *TestsRun    `json:"after,omitempty"`
	PerTest     bool         `json:"per_test"`
	Tests       []TestRow    `json:"tests,omitempty"` // fixed, broken and still failing first; capped
	MoreTests   int          `json:"more_tests,omitempty"`
	Attempts    []AttemptRow `json:"attempts,omitempty"` // a run of several attempts only
	Why         string       `json:"why,omitempty"`      // why the chosen attempt won
}

// TestsRun is one run of the repository's tests.
type TestsRun struct {
	Command    string `json:"command"`
	ExitCode   int    `json:"exit_code"`
	TimedOut   bool   `json:"timed_out,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Passed     int    `json:"passed"`
	Failed     int    `json:"failed"`
	Tail       string `json:"tail,omitempty"`
	Error      string `json:"error,omitempty"`
}

// TestRow is one test before and after ("" when it had no result on that side).
type TestRow struct {
	Name   string `json:"name"`
	Before string `json:"before"`
	After  string `json:"after"`
	Change string `json:"change,omitempty"` // fixed, broken, still failing, new
}

// AttemptRow is one attempt of a run of several.
type AttemptRow struct {
	K          int    `json:"k"`
	Chosen     bool   `json:"chosen,omitempty"`
	ExitReason string `json:"exit_reason,omitempty"`
	Steps      int    `json:"steps"`
	PatchBytes int    `json:"patch_bytes"`
	Error      string `json:"error,omitempty"`
}

// EndEvent is the data of EventEnd.
type EndEvent struct {
	State      string `json:"state"`
	ExitReason string `json:"exit_reason,omitempty"`
	PRURL      string `json:"pr_url,omitempty"`
	Note       string `json:"note,omitempty"`
}

// EventLog writes one run's events. It never fails the run: an event that cannot be written
// is logged and dropped (the runs row stays the record). Writes are serialised, so that ids
// (which the page follows) are committed in order even when attempts step at once.
type EventLog struct {
	pool  *pgxpool.Pool
	runID int64
	log   *slog.Logger
	page  string // RunPageURL of the run, "" without FROGNANO_PUBLIC_URL
	mu    sync.Mutex
}

// RunPageURL is the address of run id's page under base (FROGNANO_PUBLIC_URL), or "" when
// base is empty.
func RunPageURL(base string, id int64) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		return ""
	}
	return base + "/runs/" + strconv.FormatInt(id, 10)
}

// PageURL is the run's page (RunPageURL), "" without FROGNANO_PUBLIC_URL or without a log.
func (l *EventLog) PageURL() string {
	if l == nil {
		return ""
	}
	return l.page
}

type eventLogKey struct{}

// withEvents returns ctx carrying the run's event log. It travels in the context so that the
// Runner (AgentRunner) writes steps for runs of every kind without a change to the Runner port
// that tests fake.
func withEvents(ctx context.Context, l *EventLog) context.Context {
	return context.WithValue(ctx, eventLogKey{}, l)
}

// EventsFrom returns the event log of the run a Runner was called for (in ctx), or nil, whose
// methods do nothing.
func EventsFrom(ctx context.Context) *EventLog {
	l, _ := ctx.Value(eventLogKey{}).(*EventLog)
	return l
}

// Add writes one event of kind with data (encoded as JSON); a failure is logged, never returned.
func (l *EventLog) Add(ctx context.Context, kind string, data any) {
	if l == nil {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		l.log.WarnContext(ctx, "encoding a run event", "kind", kind, logging.Err(err))
		return
	}
	// Bookkeeping outlives a cancelled job context, bounded.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bookkeepingTimeout)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.pool.Exec(wctx, `INSERT INTO run_events (run_id, kind, data) VALUES ($1, $2, $3)`, l.runID, kind, b); err != nil {
		l.log.WarnContext(ctx, "writing a run event", "kind", kind, logging.Err(err))
	}
}

// ended records the state the attempt left the run in.
func (l *EventLog) ended(ctx context.Context) {
	if l == nil {
		return
	}
	var e EndEvent
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bookkeepingTimeout)
	defer cancel()
	err := l.pool.QueryRow(rctx, `SELECT state, coalesce(exit_reason, ''), coalesce(pr_url, ''), coalesce(error, '')
		FROM runs WHERE id = $1`, l.runID).Scan(&e.State, &e.ExitReason, &e.PRURL, &e.Note)
	if err != nil {
		l.log.WarnContext(ctx, "reading the run's state for its end event", logging.Err(err))
		return
	}
	e.Note = cleanRun(e.Note, 2000)
	l.Add(ctx, EventEnd, e)
}

// clean is untrusted text as an event keeps it: redacted, then cut to max bytes. It is for the
// loop's steps, whose texts the runner has already passed through gitleaks' rules.
func clean(s string, max int) string {
	return clip.Bytes(githubapp.Redact(s), max)
}

// cleanRun is clean with gitleaks' rules too (githubapp.RedactRun): for every other text of
// the run that the patch's code or the sandbox wrote (test output and names, errors, notes).
func cleanRun(s string, max int) string {
	return clip.Bytes(githubapp.RedactRun(s), max)
}

// NewStepEvent is what the page shows of one leaf step of attempt (from 1; 0 for a run of one).
func NewStepEvent(attempt int, s leaf.Step) StepEvent {
	e := StepEvent{Attempt: attempt, Index: s.Index, Content: clean(s.Assistant.Text(), eventTextCap),
		Calls: []CallEvent{}, Observations: []ObservedText{},
		ModelMS: s.ModelTime.Milliseconds(), ToolMS: s.ToolTime.Milliseconds(), ElapsedMS: s.Elapsed.Milliseconds()}
	for _, tc := range s.Assistant.ToolCalls {
		e.Calls = append(e.Calls, CallEvent{Tool: clean(tc.Function.Name, 200), Arguments: clean(tc.Function.Arguments, eventTextCap)})
	}
	for _, o := range s.Observations {
		e.Observations = append(e.Observations, ObservedText{Tool: clean(o.Tool, 200), Text: clean(o.Observation, eventTextCap)})
	}
	return e
}

// testsEvent is what the page shows of a finished run's tests and attempts.
func testsEvent(res *runner.Result) TestsEvent {
	e := TestsEvent{Environment: cleanRun(report.EnvironmentLine(res), 2000)}
	e.Before, e.After = testsRun(res.TestsBefore), testsRun(res.TestsAfter)
	if c := res.Comparison; c != nil && c.PerTest {
		e.PerTest = true
		change := map[string]string{}
		for _, l := range []struct {
			names []string
			what  string
		}{{c.Fixed, "fixed"}, {c.Broken, "broken"}, {c.StillFailing, "still failing"}, {c.New, "new"}} {
			for _, n := range l.names {
				change[n] = l.what
			}
		}
		names := map[string]bool{}
		var before, after map[string]verify.Status
		if res.TestsBefore != nil {
			before = res.TestsBefore.Tests
		}
		if res.TestsAfter != nil {
			after = res.TestsAfter.Tests
		}
		for n := range before {
			names[n] = true
		}
		for n := range after {
			names[n] = true
		}
		rows := make([]TestRow, 0, len(names))
		for n := range names {
			rows = append(rows, TestRow{Name: cleanRun(n, 500), Before: string(before[n]), After: string(after[n]), Change: change[n]})
		}
		rank := map[string]int{"broken": 0, "fixed": 1, "still failing": 2, "new": 3, "": 4}
		sort.Slice(rows, func(i, j int) bool {
			if rank[rows[i].Change] != rank[rows[j].Change] {
				return rank[rows[i].Change] < rank[rows[j].Change]
			}
			return rows[i].Name < rows[j].Name
		})
		if len(rows) > eventTestsCap {
			e.MoreTests = len(rows) - eventTestsCap
			rows = rows[:eventTestsCap]
		}
		e.Tests = rows
	}
	if as := res.Attempts; as != nil && len(as.Attempts) > 1 {
		e.Why = cleanRun(as.Why, 2000)
		for i, a := range as.Attempts {
			row := AttemptRow{K: a.K, Chosen: i == as.Chosen}
			if a.Err != nil {
				row.Error = cleanRun(a.Err.Error(), 2000)
			}
			if a.Result != nil {
				row.ExitReason = a.Result.ExitReason()
				row.PatchBytes = len(a.Result.PatchBytes())
				if a.Result.Leaf != nil {
					row.Steps = len(a.Result.Leaf.Steps)
				}
			}
			e.Attempts = append(e.Attempts, row)
		}
	}
	return e
}

func testsRun(t *runner.TestRun) *TestsRun {
	if t == nil {
		return nil
	}
	r := &TestsRun{Command: cleanRun(t.Command, 2000), ExitCode: t.ExitCode, TimedOut: t.TimedOut,
		DurationMS: t.Duration.Milliseconds(), Tail: cleanRun(t.Tail, eventTailCap), Error: cleanRun(t.Error, 2000)}
	for _, s := range t.Tests {
		switch s {
		case verify.Pass:
			r.Passed++
		case verify.Fail:
			r.Failed++
		}
	}
	return r
}

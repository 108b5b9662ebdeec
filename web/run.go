package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/runner/leaf"
)

// maxEvents bounds the events one page reads (ten pages of run.MaxEventsRead).
const maxEvents = 10 * run.MaxEventsRead

// runView is what the run page shows.
type runView struct {
	Run       run.Record
	Facts     run.Facts
	Live      bool  // waiting, queued or running: the page follows the event stream
	LastEvent int64 // the stream starts after this event
	Timeline  []timelineItem
	Task      string
	Groups    []*stepGroup
	Diff      []diffLine
	MoreDiff  int
	Tests     *run.TestsEvent
	// Usage is what the run used (run.UsageLines); StartedBy and StoppedBy who started and
	// stopped it; Audit the writes it attempted on GitHub, with their outcomes (issues 22, 28).
	Usage                [][2]string
	StartedBy, StoppedBy string
	Audit                []run.AuditEntry
}

type timelineItem struct {
	At    time.Time
	What  string
	Class string // done, fail, info
	Link  string // a pull request's URL, when the item is its publication
}

// stepGroup is the steps of one agent attempt within one try of the run.
type stepGroup struct {
	ID    string
	Title string
	Steps []stepView
}

type stepView struct {
	N            int // from 1
	Content      string
	Calls        []run.CallEvent
	Observations []run.ObservedText
	ModelMS      int64
	ToolMS       int64
	ElapsedMS    int64
}

func parseID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	return id, err == nil && id > 0
}

// readableRun loads run id when v may read its repository, as GitHub's id for it names it;
// ok false means the request has been answered (not found, sign in, or an error).
func (p *Pages) readableRun(w http.ResponseWriter, r *http.Request, page bool) (run.Record, bool) {
	v, ok := p.viewer(w, r, page)
	if !ok {
		return run.Record{}, false
	}
	id, ok := parseID(r)
	if !ok {
		p.notFound(w, r)
		return run.Record{}, false
	}
	rec, err := p.cfg.Runs.Run(r.Context(), id)
	if errors.Is(err, run.ErrNoRun) {
		p.answerNotFound(w, r, page)
		return run.Record{}, false
	}
	if err != nil {
		p.cfg.Logger.ErrorContext(r.Context(), "reading a run", logging.RunID(id), logging.Err(err))
		http.Error(w, "the run could not be read", http.StatusInternalServerError)
		return run.Record{}, false
	}
	can, handled := p.canRead(w, r, v, rec, page)
	if handled {
		return run.Record{}, false
	}
	if !can {
		// Exactly what a missing run gets: the answer must not tell that it exists.
		p.answerNotFound(w, r, page)
		return run.Record{}, false
	}
	return rec, true
}

func (p *Pages) answerNotFound(w http.ResponseWriter, r *http.Request, page bool) {
	if page {
		p.notFound(w, r)
		return
	}
	http.Error(w, "not found", http.StatusNotFound)
}

func (p *Pages) handleRun(w http.ResponseWriter, r *http.Request) {
	rec, ok := p.readableRun(w, r, true)
	if !ok {
		return
	}
	v, _ := p.cfg.Auth.Viewer(r)
	view, err := p.runView(r.Context(), rec)
	if err != nil {
		p.cfg.Logger.ErrorContext(r.Context(), "reading a run's details", logging.RunID(rec.ID), logging.Err(err))
		http.Error(w, "the run could not be read", http.StatusInternalServerError)
		return
	}
	title := fmt.Sprintf("Run %d · %s/%s #%d", rec.ID, rec.Owner, rec.Repo, rec.Issue)
	p.render(w, r, http.StatusOK, "run", page{Title: title, Viewer: v.Login, Data: view})
}

func (p *Pages) runView(ctx context.Context, rec run.Record) (*runView, error) {
	facts, err := p.cfg.Runs.Facts(ctx, rec.ID)
	if err != nil {
		return nil, err
	}
	view := &runView{Run: rec, Facts: facts, Live: run.Unfinished(rec.State),
		Usage: run.UsageLines(rec), StartedBy: run.StartedBy(rec), StoppedBy: run.StoppedBy(rec)}
	if view.Audit, err = p.cfg.Runs.Audit(ctx, rec.ID); err != nil {
		return nil, err
	}
	view.Timeline = append(view.Timeline, queuedItems(rec, facts)...)
	b := newStepBuilder()
	var after int64
	for n := 0; n < maxEvents; {
		evs, err := p.cfg.Runs.Events(ctx, rec.ID, after)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			view.apply(e, b)
			after = e.ID
		}
		n += len(evs)
		if len(evs) < run.MaxEventsRead {
			break
		}
	}
	view.LastEvent = after
	view.Groups = b.groups
	// A live page's step count grows under Steps; the timeline sums them up once the run ended.
	if b.steps > 0 && !view.Live {
		view.Timeline = append(view.Timeline, timelineItem{At: b.lastAt, What: plural(b.steps, "agent step"), Class: "info"})
		sortTimeline(view.Timeline)
	}
	// A run from before run_events, or whose events were not written: the stored trajectory.
	if len(view.Groups) == 0 && len(rec.Trajectory) > 0 {
		view.fromTrajectory(rec.Trajectory)
	}
	if rec.FinishedAt != nil && !hasEnd(view.Timeline) {
		view.Timeline = append(view.Timeline, endItem(*rec.FinishedAt, rec.State, rec.ExitReason, rec.PRURL))
	}
	view.Diff, view.MoreDiff = diffLines(rec.Patch)
	return view, nil
}

// stepBuilder groups step events by the try of the run (attempt event) and the agent attempt.
type stepBuilder struct {
	try    int
	groups []*stepGroup
	byID   map[string]*stepGroup
	steps  int
	lastAt time.Time
}

func newStepBuilder() *stepBuilder { return &stepBuilder{byID: map[string]*stepGroup{}} }

func groupID(try, attempt int) string { return fmt.Sprintf("g-%d-%d", try, attempt) }

func groupTitle(try, attempt int) string {
	s := fmt.Sprintf("Try %d", try)
	if attempt > 0 {
		s += fmt.Sprintf(", attempt %d", attempt)
	}
	return s
}

func (b *stepBuilder) add(at time.Time, s run.StepEvent) (g *stepGroup, created bool, sv stepView) {
	id := groupID(b.try, s.Attempt)
	g = b.byID[id]
	if g == nil {
		g = &stepGroup{ID: id, Title: groupTitle(b.try, s.Attempt)}
		b.byID[id] = g
		b.groups = append(b.groups, g)
		created = true
	}
	sv = stepView{N: s.Index + 1, Content: s.Content, Calls: s.Calls, Observations: s.Observations,
		ModelMS: s.ModelMS, ToolMS: s.ToolMS, ElapsedMS: s.ElapsedMS}
	g.Steps = append(g.Steps, sv)
	b.steps++
	b.lastAt = at
	return g, created, sv
}

// apply adds one event to the view.
func (v *runView) apply(e run.Event, b *stepBuilder) {
	switch e.Kind {
	case run.EventStep:
		var s run.StepEvent
		if json.Unmarshal(e.Data, &s) == nil {
			b.add(e.At, s)
		}
		return
	case run.EventAgent:
		var a run.AgentEvent
		if json.Unmarshal(e.Data, &a) == nil && a.Task != "" {
			v.Task = a.Task
		}
	case run.EventTests:
		var t run.TestsEvent
		if json.Unmarshal(e.Data, &t) == nil {
			v.Tests = &t
		}
	case run.EventAttempt:
		b.try++
	}
	if it, ok := timelineOf(e); ok {
		v.Timeline = append(v.Timeline, it)
	}
}

// timelineOf is the timeline entry of an event (steps have none of their own).
func timelineOf(e run.Event) (timelineItem, bool) {
	switch e.Kind {
	case run.EventAttempt:
		var a run.AttemptEvent
		_ = json.Unmarshal(e.Data, &a)
		what := "started"
		if a.MaxAttempts > 1 {
			what = fmt.Sprintf("started (try %d of %d)", a.Attempt, a.MaxAttempts)
		}
		return timelineItem{At: e.At, What: what, Class: "info"}, true
	case run.EventAgent:
		return timelineItem{At: e.At, What: "setup: sandbox and environment, then the agent", Class: "info"}, true
	case run.EventSandboxWait:
		var w run.SandboxWaitEvent
		_ = json.Unmarshal(e.Data, &w)
		what := fmt.Sprintf("waiting for a free sandbox for %s (%d of %d in use on this worker)", w.For, w.InUse, w.Cap)
		return timelineItem{At: e.At, What: attemptPrefix(w.Attempt) + what, Class: "info"}, true
	case run.EventTestsStart:
		var t run.TestsStartEvent
		_ = json.Unmarshal(e.Data, &t)
		if !t.After {
			// One before-run serves every attempt of the run: no attempt of its own.
			return timelineItem{At: e.At, What: "running the tests before...", Class: "info"}, true
		}
		return timelineItem{At: e.At, What: attemptPrefix(t.Attempt) + "running the tests after...", Class: "info"}, true
	case run.EventTests:
		var t run.TestsEvent
		_ = json.Unmarshal(e.Data, &t)
		return timelineItem{At: e.At, What: "tests: " + testsLine(t), Class: "info"}, true
	case run.EventEnd:
		var end run.EndEvent
		_ = json.Unmarshal(e.Data, &end)
		return endItem(e.At, end.State, end.ExitReason, end.PRURL), true
	}
	return timelineItem{}, false
}

// queuedItems is how a run came to be worked: queued when it was asked for or, when it had to
// wait for its pull request's active run (queue/waiting.go), waiting then queued when that
// ended; then when the worker found it may go ahead.
func queuedItems(rec run.Record, facts run.Facts) []timelineItem {
	var items []timelineItem
	switch {
	case rec.State == run.StateWaiting:
		items = append(items, timelineItem{At: rec.CreatedAt, What: "waiting for the active run of this pull request to end", Class: "info"})
	case facts.PromotedAt != nil:
		items = append(items, timelineItem{At: rec.CreatedAt, What: "waited for the active run of this pull request", Class: "info"},
			timelineItem{At: *facts.PromotedAt, What: "queued", Class: "info"})
	case rec.ExitReason == "folded", facts.WaitedOnly:
		items = append(items, timelineItem{At: rec.CreatedAt, What: "waited for the active run of this pull request", Class: "info"})
	default:
		items = append(items, timelineItem{At: rec.CreatedAt, What: "queued", Class: "info"})
	}
	if facts.CheckedAt != nil {
		items = append(items, timelineItem{At: *facts.CheckedAt, What: "checked: it may go ahead", Class: "info"})
	}
	return items
}

// attemptPrefix names attempt k of a run of several ("" for a run of one).
func attemptPrefix(k int) string {
	if k <= 0 {
		return ""
	}
	return fmt.Sprintf("attempt %d: ", k)
}

func endItem(at time.Time, state, exitReason, prURL string) timelineItem {
	it := timelineItem{At: at, What: state, Class: "fail"}
	switch {
	case state == run.StateSucceeded && prURL != "":
		it.What, it.Class, it.Link = "published", "done", prURL
	case state == run.StateSucceeded:
		it.Class = "done"
	case state == run.StateQueued:
		it.What, it.Class = "queued again (retrying)", "info"
	}
	if exitReason != "" && it.Link == "" {
		it.What += " (" + exitReason + ")"
	}
	return it
}

func hasEnd(items []timelineItem) bool {
	for _, it := range items {
		if it.Class == "done" || it.Class == "fail" {
			return true
		}
	}
	return false
}

func sortTimeline(items []timelineItem) {
	// Insertion sort: few items, nearly sorted, and equal times keep their order.
	for i := 1; i < len(items); i++ {
		for j := i; j > 0 && items[j].At.Before(items[j-1].At); j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
}

func testsLine(t run.TestsEvent) string {
	side := func(name string, r *run.TestsRun) string {
		switch {
		case r == nil:
			return name + " not run"
		case r.Error != "":
			return name + " could not run"
		case r.Passed+r.Failed > 0:
			return fmt.Sprintf("%s %d passed, %d failed", name, r.Passed, r.Failed)
		}
		return fmt.Sprintf("%s exit %d", name, r.ExitCode)
	}
	return side("before", t.Before) + "; " + side("after", t.After)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// fromTrajectory fills the task and steps from a stored trajectory (the chosen attempt).
func (v *runView) fromTrajectory(raw []byte) {
	var t leaf.Trajectory
	if json.Unmarshal(raw, &t) != nil {
		return
	}
	if v.Task == "" {
		for _, m := range t.Messages {
			if m.Role == "user" {
				v.Task = m.Text()
				break
			}
		}
	}
	g := &stepGroup{ID: groupID(1, 0), Title: "Steps"}
	for _, s := range t.Steps {
		sv := stepView{N: s.Step + 1, Content: s.Assistant.Text()}
		for _, tc := range s.Assistant.ToolCalls {
			sv.Calls = append(sv.Calls, run.CallEvent{Tool: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		for _, o := range s.Observations {
			sv.Observations = append(sv.Observations, run.ObservedText{Tool: o.Tool, Text: o.Observation})
		}
		g.Steps = append(g.Steps, sv)
	}
	if len(g.Steps) > 0 {
		v.Groups = []*stepGroup{g}
	}
}

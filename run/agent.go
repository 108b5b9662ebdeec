package run

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// AgentRunner is the pipeline's Runner for a real runner.Runner: it checks the model server,
// runs the agent and turns the result into the Outcome the worker stores and publishes.
func AgentRunner(r *runner.Runner, modelURL string) Runner { return agentRunner{r, modelURL} }

type agentRunner struct {
	r        *runner.Runner
	modelURL string
}

// ChooseModel is the name of the operator's model server a run of repo (OWNER/NAME) that asked
// for asked ("": none) uses: the one asked for, or the default; a *runner.ModelRefused when
// the operator does not offer it to repo.
func (a agentRunner) ChooseModel(repo, asked string) (string, error) {
	m := a.r.Models()
	if m == nil { // no named models: the one model of the runner's loop settings
		if asked != "" {
			return "", &runner.ModelRefused{Name: asked, Repo: repo, Asked: true}
		}
		return "", nil
	}
	s, err := m.Choose(repo, asked)
	if err != nil {
		return "", err
	}
	return s.Name, nil
}

// AllowedModels is the names of the operator's model servers that repo (OWNER/NAME) may use.
func (a agentRunner) AllowedModels(repo string) []string { return a.r.Models().Allowed(repo) }

// MaxAttempts is the operator's ceiling on a run's attempts (AttemptsCeiling).
func (a agentRunner) MaxAttempts() int { return a.r.Attempts() }

func (a agentRunner) Run(ctx context.Context, spec RunSpec, progress func(Progress)) (*Outcome, error) {
	var model *runner.ModelServer
	modelURL := a.modelURL
	if spec.Model != "" {
		m, ok := a.r.Models().Get(spec.Model)
		if !ok { // the name was chosen by this process's configuration; a restart changed it
			return nil, fault.Permanent(fmt.Errorf("model %q is no longer configured", spec.Model))
		}
		model, modelURL = m, m.BaseURL
	}
	// A model server that is down is an infrastructure failure worth a retry (CheckModel's
	// error is transient), not a run that ended with llm_query_error on its first turn.
	if err := runner.CheckModel(ctx, modelURL); err != nil {
		return nil, err
	}
	ev := EventsFrom(ctx)
	ev.Add(ctx, EventAgent, AgentEvent{Task: cleanRun(spec.Task, eventTaskCap)})
	pr := &progressOf{send: progress}
	attempt := func(k int) int { // the events' Attempt: 0 for a run of one attempt
		if a.r.Attempts() > 1 {
			return k
		}
		return 0
	}
	res, err := a.r.RunModel(ctx, runner.Spec{
		RunID:       fmt.Sprintf("run-%d", spec.RunID),
		InstanceID:  fmt.Sprintf("%s/%s#%d", spec.Owner, spec.Repo, spec.Issue),
		RepoDir:     spec.RepoDir,
		Task:        spec.Task,
		Repo:        spec.Owner + "/" + spec.Repo, // picks the base image (FROGNANO_SANDBOX_IMAGES)
		SetupCommit: spec.SetupCommit,
		Scope:       env.ServiceScope(spec.InstallationID, spec.RepoID),
		Observer:    runObserver{ctx: ctx, ev: ev, pr: pr, attempt: attempt},
		Model:       model,
		Attempts:    spec.Attempts,
	}, a.r.Models(), func(k int, s leaf.Step) {
		ev.Add(ctx, EventStep, NewStepEvent(k, s))
		pr.step(s)
	})
	if err != nil {
		return nil, err
	}
	if res.Cancelled {
		return nil, fmt.Errorf("agent run cancelled: %w", context.Cause(ctx))
	}
	ev.Add(ctx, EventTests, testsEvent(res))
	if spec.PageURL == "" {
		spec.PageURL = ev.PageURL()
	}
	return OutcomeOf(res, spec)
}

// progressOf turns the steps and waits of a run's attempts into the Progress the status
// comment shows. Several attempts step at once: it follows the one furthest along, so its
// step count never goes back, and it says that the run waits for the model server while any
// attempt does (the latest such wait, with how many attempts wait), and for a free sandbox
// while any of its sandboxes does (likewise).
type progressOf struct {
	send func(Progress) // nil: nothing is shown

	mu       sync.Mutex
	last     Progress
	waits    map[int]waitSeen // attempts waiting now
	slots    map[slotKey]slotSeen
	sequence int
}

type waitSeen struct {
	w   leaf.ModelWait
	seq int
}

// slotKey is one sandbox of a run: an attempt has one of each purpose at a time.
type slotKey struct {
	k       int
	purpose string
}

type slotSeen struct {
	w   sandbox.SlotWait
	seq int
}

func (p *progressOf) step(s leaf.Step) {
	if p.send == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.Index+1 <= p.last.Step {
		return
	}
	calls := make([]Call, 0, len(s.Assistant.ToolCalls))
	for _, tc := range s.Assistant.ToolCalls {
		calls = append(calls, Call{Tool: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	p.last = Progress{Step: s.Index + 1, Calls: calls, Elapsed: s.Elapsed}
	p.sendLocked()
}

// wait records that attempt k waits for w (a zero w: it waits no more).
func (p *progressOf) wait(k int, w leaf.ModelWait) {
	if p.send == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waits == nil {
		p.waits = map[int]waitSeen{}
	}
	if !w.Waiting() {
		if _, was := p.waits[k]; !was {
			return
		}
		delete(p.waits, k)
	} else {
		p.sequence++
		p.waits[k] = waitSeen{w, p.sequence}
	}
	p.sendLocked()
}

// sandboxWait records that a sandbox of attempt k waits for a free slot (w.Waiting), or that
// its wait ended.
func (p *progressOf) sandboxWait(k int, w sandbox.SlotWait) {
	if p.send == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.slots == nil {
		p.slots = map[slotKey]slotSeen{}
	}
	key := slotKey{k, w.Purpose}
	if !w.Waiting() {
		if _, was := p.slots[key]; !was {
			return
		}
		delete(p.slots, key)
	} else {
		p.sequence++
		p.slots[key] = slotSeen{w, p.sequence}
	}
	p.sendLocked()
}

func (p *progressOf) sendLocked() {
	out := p.last
	var latest waitSeen
	for _, ws := range p.waits {
		if ws.seq > latest.seq {
			latest = ws
		}
	}
	out.Waiting = modelWaitText(latest.w.String(), len(p.waits))
	var slot slotSeen
	for _, ss := range p.slots {
		if ss.seq > slot.seq {
			slot = ss
		}
	}
	if w := slot.w; w.Waiting() {
		out.SandboxWait = sandboxWaitText(w, len(p.slots))
	}
	p.send(out)
}

// checkRunOf is the check run that reports res's tests on the commit a publish pushes.
func checkRunOf(res *runner.Result, pageURL string) *githubapp.CheckRun {
	c := report.Check(res, githubapp.RedactRun)
	cr := &githubapp.CheckRun{
		Name: report.CheckRunName, Status: "completed", Conclusion: c.Conclusion,
		Title: c.Title, Summary: c.Summary, Text: c.Text, ExternalID: res.RunID, DetailsURL: pageURL,
		StartedAt: res.StartedAt, CompletedAt: res.StartedAt.Add(res.Elapsed),
	}
	for _, a := range c.Annotations { // the operator's scanners' findings (issue 21)
		cr.Annotations = append(cr.Annotations, githubapp.CheckAnnotation{Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine,
			Level: a.Level, Message: a.Message, Title: a.Title, RawDetails: a.RawDetails})
	}
	return cr
}

// OutcomeOf turns a finished runner.Result into what the pipeline stores and publishes; every
// text GitHub will show is rendered here, once, within its limit.
func OutcomeOf(res *runner.Result, spec RunSpec) (*Outcome, error) {
	traj, err := json.Marshal(res.Trajectory())
	if err != nil {
		return nil, fault.Permanent(fmt.Errorf("encoding the trajectory: %w", err))
	}
	// Every text stored or shown passes the one redactor here, whoever reads it later (the
	// run pages, `frognano runs show`, a follow-up's task). The patch cannot be: the runner
	// refused one that holds a secret, and Publish refuses it again.
	if traj, err = githubapp.RedactJSON(traj); err != nil {
		return nil, fault.Permanent(fmt.Errorf("redacting the trajectory: %w", err))
	}
	out := &Outcome{
		Patch:       res.PatchBytes(),
		NoPatch:     res.NoPatch(),
		ExitReason:  res.ExitReason(),
		TestTime:    res.TestTime(),
		Elapsed:     res.Elapsed,
		Environment: githubapp.RedactRun(report.EnvironmentLine(res)),
		SetupLog:    githubapp.RedactRun(string(res.SetupLog())),
		// The renderer is the one owner of the limits: it gets the final limit, what we
		// add and the redaction that githubapp applies, and cuts where it knows how.
		PRBody:     report.PRBody(res, report.Fit{Suffix: bodySuffix(spec), Redact: githubapp.RedactRun}),
		Summary:    report.Summary(res, report.Fit{Limit: report.GitHubBodyLimit - statusReserve, Redact: githubapp.RedactRun}),
		Headline:   githubapp.RedactRun(report.Headline(res)),
		Trajectory: traj,
		Report:     githubapp.RedactRun(report.Markdown(res)),
		Check:      checkRunOf(res, spec.PageURL),
		Model:      res.ModelName,
	}
	// A run whose setup failed ended before the model was called: no loop, no steps.
	if lr := res.Leaf; lr != nil {
		out.ModelTime, out.ToolTime, out.FinalMessage, out.Steps = lr.ModelTime, lr.ToolTime, githubapp.RedactRun(lr.FinalMessage), len(lr.Steps)
		out.PromptTokens, out.CompletionTokens = lr.PromptTokens, lr.CompletionTokens
	}
	usageOf(out, res.Usage())
	return out, nil
}

// runObserver shows a run's waits in its status comment (progressOf) and records them, and the
// start of its test runs, as the run page's events.
type runObserver struct {
	runner.NoObserver // setup's lines are kept with the run's setup log, not streamed
	ctx               context.Context
	ev                *EventLog
	pr                *progressOf
	attempt           func(k int) int // the events' Attempt
}

func (o runObserver) ModelWait(k int, w leaf.ModelWait) { o.pr.wait(k, w) }

func (o runObserver) SandboxWait(k int, w sandbox.SlotWait) {
	o.pr.sandboxWait(k, w)
	if w.Waiting() {
		o.ev.Add(o.ctx, EventSandboxWait, SandboxWaitEvent{Attempt: o.attempt(k), For: w.For(), InUse: w.InUse, Cap: w.Cap})
	}
}

func (o runObserver) TestsStart(k int, after bool) {
	o.ev.Add(o.ctx, EventTestsStart, TestsStartEvent{Attempt: o.attempt(k), After: after})
}

// ExitModel is the exit reason of a run that asked for a model the operator does not offer
// its repository (or whose repository may not use the default).
const ExitModel = "model_refused"

// chooseModel is the name of the model the run uses (ModelChooser), or a
// *runner.ModelRefused; "" when the Runner has one model.
func (a *attempt) chooseModel() (string, error) {
	mc, ok := a.p.cfg.Runner.(ModelChooser)
	if !ok {
		return "", nil
	}
	asked := a.run.Asked.Model // asked at trigger, else the repository's settings (within the operator's offer)
	if asked == "" && a.settings.Model != nil {
		asked = *a.settings.Model
	}
	return mc.ChooseModel(a.run.Owner+"/"+a.run.Repo, asked)
}

// modelRefusedEnd ends run a.run, whose model is not offered to its repository: skipped, with
// one comment naming the model and the ones it may use, and an issue's label removed.
func (a *attempt) modelRefusedEnd(ctx context.Context, e *runner.ModelRefused) error {
	a.log.InfoContext(ctx, "run not started: model not offered to the repository", "model", e.Name, "allowed", e.Allowed)
	v := a.view(StateSkipped, modelRefusedNote(e))
	ok, err := a.record(ctx, StateSkipped, ExitModel, e.Error(), "", 0, &v, true, true)
	if err != nil {
		return err
	}
	if !ok {
		return errRunCancelled
	}
	return nil
}

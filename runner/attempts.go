package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/sandbox"
)

// Attempts: limits of one run's attempts.
const (
	// DefaultMaxAttempts caps FROGNANO_ATTEMPTS and --attempts unless the operator sets
	// FROGNANO_MAX_ATTEMPTS.
	DefaultMaxAttempts = 8
)

// AttemptOptions configures RunAttempts.
type AttemptOptions struct {
	// N is how many independent attempts to run; <= 1 is one (exactly Run).
	N int
	// Max is the operator's cap on N (FROGNANO_MAX_ATTEMPTS); RunAttempts runs at most Max
	// attempts, and the commands refuse a larger N. 0: DefaultMaxAttempts.
	Max int
	// StopEarly cancels the other attempts as soon as one is verified as fixing every test
	// that failed before and breaking none (off by default).
	StopEarly bool
	// Leaf, when set, returns attempt k's model settings (k from 1) from the runner's; tests
	// use it to give each attempt its own scripted server.
	Leaf func(k int, base leaf.Config) leaf.Config
	// OnStep receives each step of attempt k.
	OnStep func(k int, s leaf.Step)
	// ModelLimiter, when set, bounds the model requests in flight across every run that
	// shares it (FROGNANO_MODEL_CONCURRENCY).
	ModelLimiter *leaf.Limiter
	// The sandboxes of every attempt (agent, tests before and after, setup) are bounded by
	// Config.Sandbox.Slots (FROGNANO_MAX_SANDBOXES), one slot per container.
}

// Attempt is one attempt of a run.
type Attempt struct {
	K      int     // from 1
	Result *Result // nil when the attempt could not be carried out (Err)
	Err    error
}

// AttemptSet is every attempt of a run, in attempt order, and which one was chosen.
type AttemptSet struct {
	Attempts []Attempt
	Chosen   int    // index into Attempts
	Order    []int  // indexes into Attempts, best first
	Why      string // one line: why the chosen attempt won
}

// attemptSpec is what makes a Run one attempt among several.
type attemptSpec struct {
	k      int // from 1
	leaf   leaf.Config
	before *sharedBefore
	shared *sharedRun // nil for a plain Run
}

// sharedRun is what a run's attempts do once for all: pack the checkout, and run the tests
// after on a patch that several attempts made byte for byte.
type sharedRun struct {
	ctx      context.Context // the run's: an attempt stopped early does not cut them short
	packOnce sync.Once
	pack     *sandbox.Snapshot
	packErr  error

	mu     sync.Mutex
	afters map[[sha256.Size]byte]*sharedAfter
}

type sharedAfter struct {
	once  sync.Once
	res   *TestRun
	first int // the attempt that ran it
}

// snapshot is the run's packed checkout: packed by the first attempt that asks, under the
// run's context, and closed by RunAttempts once every attempt is done; a plain Run packs its
// own and closes it when done.
func (a *attemptSpec) snapshot(pack func(context.Context) (*sandbox.Snapshot, error), ctx context.Context) (*sandbox.Snapshot, func(), error) {
	if a == nil || a.shared == nil {
		p, err := pack(ctx)
		if err != nil {
			return nil, nil, err
		}
		return p, func() { p.Close() }, nil
	}
	s := a.shared
	s.packOnce.Do(func() { s.pack, s.packErr = pack(s.ctx) })
	return s.pack, func() {}, s.packErr
}

// testsAfter runs the tests after on diff, or, when another attempt of the run made the very
// same patch, waits for that attempt's run and returns its result: the same tree in a fresh
// sandbox gives the same verification, and a 4B model that finds an easy fix often finds it
// byte for byte several times. The note says so in the attempt's report.
func (a *attemptSpec) testsAfter(diff []byte, run func() *TestRun) (*TestRun, string) {
	if a == nil || a.shared == nil {
		return run(), ""
	}
	key := sha256.Sum256(diff)
	s := a.shared
	s.mu.Lock()
	if s.afters == nil {
		s.afters = map[[sha256.Size]byte]*sharedAfter{}
	}
	e := s.afters[key]
	if e == nil {
		e = &sharedAfter{first: a.k}
		s.afters[key] = e
	}
	s.mu.Unlock()
	e.once.Do(func() { e.res = run() })
	if e.first == a.k {
		return e.res, ""
	}
	return e.res, fmt.Sprintf("This attempt's patch is identical to attempt %d's, so the two share one tests-after run.", e.first)
}

// number is the attempt's number, from 1; 1 for a plain Run.
func (a *attemptSpec) number() int {
	if a == nil {
		return 1
	}
	return a.k
}

// leafConfig is the attempt's model settings (def for a plain Run), with spec's Observer
// told the attempt's number.
func (a *attemptSpec) leafConfig(def leaf.Config, spec Spec) leaf.Config {
	lc, k := def, a.number()
	if a != nil {
		lc = a.leaf
	}
	if spec.Observer != nil {
		o := spec.Observer
		lc.OnWait = func(w leaf.ModelWait) { o.ModelWait(k, w) }
	}
	return lc
}

// testsBefore runs the before-run, or, for an attempt, waits for the one run shared by all
// the attempts (started by whichever attempt gets there first, under the run's context, so
// an attempt stopped early does not cut it short).
func (a *attemptSpec) testsBefore(run func(context.Context) *TestRun, ctx context.Context) *TestRun {
	if a == nil || a.before == nil {
		return run(ctx)
	}
	return a.before.get(run)
}

type sharedBefore struct {
	ctx  context.Context
	once sync.Once
	res  *TestRun
}

func (s *sharedBefore) get(run func(context.Context) *TestRun) *TestRun {
	s.once.Do(func() { s.res = run(s.ctx) })
	return s.res
}

// RunAttempts runs opt.N independent attempts at spec, each a whole Run in sandboxes of its
// own from the same checkout and environment, concurrently; the before-run is shared and
// each attempt is verified by its own after-run. It returns the chosen attempt's Result with
// Attempts set (the ranking of select.go). With N <= 1 it is Run (Attempts nil).
// Every sandbox of every attempt is removed before it returns, cancellation included. The
// error is non-nil only when no attempt could be carried out.
func (r *Runner) RunAttempts(ctx context.Context, spec Spec, opt AttemptOptions) (*Result, error) {
	step := func(k int) func(leaf.Step) {
		if opt.OnStep == nil {
			return nil
		}
		return func(s leaf.Step) { opt.OnStep(k, s) }
	}
	waits := make([]atomic.Int64, max(opt.N, 1)+1) // per attempt: waits on an overloaded model server
	leafFor := func(k int) leaf.Config { return r.attemptLeaf(spec, opt, k, &waits[k]) }
	if min(opt.N, cmp.Or(opt.Max, DefaultMaxAttempts)) <= 1 {
		// One attempt is a plain run: its own before-run, its run id unchanged.
		spec.attempt = &attemptSpec{k: 1, leaf: leafFor(1)}
		res, err := r.Run(ctx, spec, step(1))
		waitedNote(res, waits[1].Load())
		return res, err
	}
	n := min(opt.N, cmp.Or(opt.Max, DefaultMaxAttempts))
	if spec.RunID == "" {
		spec.RunID = fmt.Sprintf("local-%d", time.Now().UnixNano())
	}
	attCtx, stop := context.WithCancel(ctx)
	defer stop()
	shared := &sharedBefore{ctx: ctx}
	once := &sharedRun{ctx: ctx}
	defer func() {
		if once.pack != nil {
			once.pack.Close()
		}
	}()
	set := &AttemptSet{Attempts: make([]Attempt, n)}
	var wg sync.WaitGroup
	for i := range n {
		k := i + 1
		a := spec
		a.RunID = fmt.Sprintf("%s-a%d", spec.RunID, k)
		a.attempt = &attemptSpec{k: k, leaf: leafFor(k), before: shared, shared: once}
		if k > 1 && a.Observer != nil {
			a.Observer = withoutSetupLines{a.Observer} // the environment is prepared once; its log shows once
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			set.Attempts[i].K = k
			res, err := r.Run(attCtx, a, step(k))
			waitedNote(res, waits[k].Load())
			set.Attempts[i].Result, set.Attempts[i].Err = res, err
			if opt.StopEarly && err == nil && scoreOf(k, res).fixesAll {
				stop()
			}
		}()
	}
	wg.Wait()

	results := make([]*Result, n)
	var errs []error
	for i, at := range set.Attempts {
		results[i] = at.Result
		if at.Err != nil {
			errs = append(errs, fmt.Errorf("attempt %d: %w", at.K, at.Err))
		}
	}
	if len(errs) == n {
		// Nothing ran: the first attempt's error says why (a setup error stays one).
		return nil, set.Attempts[0].Err
	}
	set.Order, set.Why = rank(results)
	set.Chosen = set.Order[0]
	for _, i := range set.Order {
		if results[i] != nil {
			set.Chosen = i
			break
		}
	}
	chosen := results[set.Chosen]
	if ctx.Err() != nil {
		chosen.Cancelled = true
	}
	chosen.Attempts = set
	if len(errs) > 0 {
		chosen.Notes = append(chosen.Notes, errors.Join(errs...).Error())
	}
	return chosen, nil
}

// attemptLeaf is attempt k's model settings: the runner's loop settings with spec.Model's
// server (else Config.Leaf's), opt.Leaf's changes, and its requests through the model's own
// Limiter (spec.Model's, else opt.ModelLimiter: each named model has its own concurrency),
// counting its waits on an overloaded server in waits.
func (r *Runner) attemptLeaf(spec Spec, opt AttemptOptions, k int, waits *atomic.Int64) leaf.Config {
	lc, limiter := r.cfg.Leaf, opt.ModelLimiter
	if spec.Model != nil {
		lc, limiter = spec.Model.Leaf(lc), spec.Model.Limiter
	}
	if opt.Leaf != nil {
		lc = opt.Leaf(k, lc)
	}
	if limiter != nil {
		hc := lc.HTTPClient
		if hc == nil {
			hc = &http.Client{Timeout: lc.RequestTimeout}
			if lc.RequestTimeout <= 0 {
				hc.Timeout = leaf.DefaultRequestTimeout
			}
		}
		lc.HTTPClient = limiter.CountingClient(hc, waits)
	}
	return lc
}

// Attempts is how many attempts RunAll makes for each run (Config.Attempts.N, within its cap;
// at least 1).
func (r *Runner) Attempts() int {
	return max(1, min(r.cfg.Attempts.N, cmp.Or(r.cfg.Attempts.Max, DefaultMaxAttempts)))
}

// RunAll runs spec with the runner's own attempt settings (Config.Attempts), or fewer attempts
// when spec asks for fewer (Spec.Attempts): one attempt is Run, several are RunAttempts.
// onStep receives each step with its attempt's number.
func (r *Runner) RunAll(ctx context.Context, spec Spec, onStep func(k int, s leaf.Step)) (*Result, error) {
	opt := r.cfg.Attempts
	opt.OnStep = onStep
	if spec.Attempts > 0 && spec.Attempts < r.Attempts() {
		opt.N = spec.Attempts
	}
	return r.RunAttempts(ctx, spec, opt)
}

// waitedNote tells the reviewer that the model server was overloaded and the run waited for
// it (429 or 503 answers waited out by the Limiter), which explains a long model time.
func waitedNote(res *Result, n int64) {
	if res == nil || n == 0 {
		return
	}
	res.Notes = append(res.Notes, fmt.Sprintf("The model server was overloaded (it answered 429 or 503); this run waited for it %d time(s).", n))
}

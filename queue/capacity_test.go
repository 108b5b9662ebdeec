package queue

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// gate is a fake agent that blocks until released, and counts the runs in it at once: the
// calls of Run (the sandboxes a real runner would hold) and the runs the database says are
// running, as each call sees them when it comes in.
type gate struct {
	pool    *pgxpool.Pool
	entered chan int // the issue of each call, as it comes in
	release chan struct{}

	mu                  sync.Mutex
	inRun, maxInRun     int
	maxRunning          int
	order               []int // the issues, in the order their agents started
	countErr            error // a failed count of the running rows
	maxRunningByInstall map[int64]int
}

func newGate(pool *pgxpool.Pool, runs int) *gate {
	return &gate{pool: pool, entered: make(chan int, runs), release: make(chan struct{}, runs), maxRunningByInstall: map[int64]int{}}
}

func (g *gate) run(ctx context.Context, spec run.RunSpec, _ func(run.Progress)) (*run.Outcome, error) {
	var running, byInstall, issue int
	err := g.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'running'),
			count(*) FILTER (WHERE state = 'running' AND installation_id = $2),
			coalesce(max(issue) FILTER (WHERE id = $1), 0)
		FROM runs`, spec.RunID, spec.InstallationID).Scan(&running, &byInstall, &issue)
	g.mu.Lock()
	g.inRun++
	g.maxInRun = max(g.maxInRun, g.inRun)
	g.maxRunning = max(g.maxRunning, running)
	g.maxRunningByInstall[spec.InstallationID] = max(g.maxRunningByInstall[spec.InstallationID], byInstall)
	if err != nil && g.countErr == nil {
		g.countErr = err
	}
	g.order = append(g.order, issue)
	g.mu.Unlock()
	g.entered <- issue
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	g.mu.Lock()
	g.inRun--
	g.mu.Unlock()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return runtest.GoodOutcome(), nil
}

// awaitEntry waits for the next agent to start and returns its issue.
func (g *gate) awaitEntry(t *testing.T) int {
	t.Helper()
	select {
	case issue := <-g.entered:
		return issue
	case <-time.After(60 * time.Second):
		t.Fatal("no agent started within 60s")
		return 0
	}
}

// startClient starts a working client on b's schema with b's fakes and cfg's capacity.
func (b *bundle) startClient(t testing.TB, workers, perInstallation int) *Client {
	t.Helper()
	c, err := NewClient(b.pool, Config{
		Workers: workers, PerInstallationLimit: perInstallation, GitHub: runtest.GitHubOf(b.repo), Runner: b.runner,
		StatusEditInterval: -1, SoftStopTimeout: time.Second, WorkDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler),
		// River's backstop poll, for the jobs whose insert notification its limiter dropped
		// (one a FetchCooldown per queue and client).
		FetchPollInterval: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Stop(ctx)
	})
	return c
}

// TestWorkersBoundTheRunsAtOnce: a process with Workers N never works more than N runs at
// once, counted from the agents in progress (each holds sandboxes) and from the runs the
// database says are running, with more runs than N ready for it; the small jobs (the cleanup
// runs at start) take no run's place. Before, the runs' River queue was one wider than N
// (room for the cleanup job), and N+1 runs ran.
func TestWorkersBoundTheRunsAtOnce(t *testing.T) {
	t.Parallel()
	const workers, runs = 2, 6
	b := setup(t)
	g := newGate(b.pool, runs)
	b.runner.Set(g.run)
	for i := 1; i <= runs; i++ {
		b.accept(t, i) // all ready before the workers start
	}
	c := b.startClient(t, workers, runs)
	events, unsubscribe := c.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobCancelled, river.EventKindJobFailed)
	defer unsubscribe()

	for i := 0; i < workers; i++ {
		g.awaitEntry(t)
	}
	// Nothing has finished yet, so every run job River has taken is still running: the
	// jobs it took are the runs it works at once.
	if n := b.count(t, `SELECT count(*) FROM river_job WHERE kind = 'frognano_run' AND state = 'running'`); n != workers {
		t.Fatalf("River took %d run jobs at once, want %d", n, workers)
	}
	for started := workers; started < runs; started++ {
		g.release <- struct{}{}
		g.awaitEntry(t)
	}
	for i := 0; i < workers; i++ {
		g.release <- struct{}{}
	}
	b.waitRuns(t, c, events, runs, run.StateSucceeded)

	g.mu.Lock()
	defer g.mu.Unlock()
	if g.countErr != nil {
		t.Fatal(g.countErr)
	}
	if g.maxInRun != workers || g.maxRunning > workers {
		t.Errorf("at most %d agents at once and %d runs running, want %d", g.maxInRun, g.maxRunning, workers)
	}
}

// waitRuns waits until n runs are in state, looking again at each job River finishes.
func (b *bundle) waitRuns(t *testing.T, c *Client, events <-chan *river.Event, n int, state string) {
	t.Helper()
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	for b.count(t, `SELECT count(*) FROM runs WHERE state = '`+state+`'`) < n {
		select {
		case <-events:
		case <-timeout.C:
			t.Fatalf("fewer than %d runs %s after 60s", n, state)
		}
	}
}

package runner_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// ownedBundle is a run of several attempts on pyaverage whose sandboxes carry an owner label
// of the test's own, so that the test can count them through the Docker API while other tests
// run; slots bounds them (FROGNANO_MAX_SANDBOXES; 0: no bound).
type ownedBundle struct {
	runner  *runner.Runner
	spec    runner.Spec
	servers []*leaftest.Server
	opt     runner.AttemptOptions
	owner   string
	slots   *sandbox.Slots
}

func setupOwned(t *testing.T, slots int, envCfg env.Config, repoDir string, scripts ...string) ownedBundle {
	t.Helper()
	var loaded []leaftest.Script
	for _, s := range scripts {
		loaded = append(loaded, leaftest.LoadModel(t, s))
	}
	return setupOwnedWith(t, slots, envCfg, repoDir, nil, loaded...)
}

// setupOwnedWith is setupOwned with scripts given as values and a change to the runner's
// configuration (nil: none).
func setupOwnedWith(t *testing.T, slots int, envCfg env.Config, repoDir string, change func(*runner.Config), scripts ...leaftest.Script) ownedBundle {
	t.Helper()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	owner := "rt-owned-" + hex.EncodeToString(rnd[:])
	var servers []*leaftest.Server
	for _, s := range scripts {
		servers = append(servers, leaftest.NewServer(t, s))
	}
	cfg := runner.DefaultConfig()
	cfg.Sandbox.Image = sandbox.DefaultImage
	cfg.Sandbox.ExecutorPath = executorPath
	cfg.Sandbox.Memory = 1 << 30
	cfg.Sandbox.CPUs = 1
	cfg.Sandbox.Owner = owner
	cfg.Sandbox.Slots = sandbox.NewSlots(slots)
	cfg.Leaf.RetryBaseDelay = time.Millisecond
	cfg.TestTimeout = 3 * time.Minute
	if envCfg.LockDir == "" {
		envCfg.LockDir = t.TempDir()
	}
	cfg.Env = envCfg
	if change != nil {
		change(&cfg)
	}
	t.Cleanup(func() {
		if _, err := sandbox.Prune(context.Background(), docker, owner); err != nil {
			t.Errorf("removing the test's sandboxes: %v", err)
		}
	})
	opt := runner.AttemptOptions{N: len(scripts), Leaf: func(k int, c leaf.Config) leaf.Config {
		c.BaseURL = servers[k-1].URL
		return c
	}}
	spec := runner.Spec{RunID: owner, RepoDir: repoDir, Task: "Fix the failing test."}
	return ownedBundle{runner: runner.New(docker, cfg, nil), spec: spec, servers: servers, opt: opt, owner: owner, slots: cfg.Sandbox.Slots}
}

// containers lists the owner's containers in every state: sandboxes, their disk watchers and
// the environment's pin.
func (b ownedBundle) containers(t *testing.T) []container.Summary {
	t.Helper()
	list, err := docker.ContainerList(context.Background(), container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+b.owner)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// sandboxCounter follows the Docker engine's container events of one owner and keeps how many
// sandboxes exist (created, not yet destroyed), the most that ever did, and how many of each
// purpose were made. Disk watchers are counted with their sandbox, and pins (created, never
// started, no memory) not at all, as FROGNANO_MAX_SANDBOXES counts.
type sandboxCounter struct {
	mu      sync.Mutex
	now     int
	peak    int
	made    map[string]int
	changed chan struct{}
	errs    <-chan error
}

func countSandboxes(t *testing.T, owner string) *sandboxCounter {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	msgs, errs := docker.Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)),
		filters.Arg("label", sandbox.LabelOwner+"="+owner),
		filters.Arg("event", string(events.ActionCreate)),
		filters.Arg("event", string(events.ActionDestroy)),
	)})
	c := &sandboxCounter{made: map[string]int{}, changed: make(chan struct{}, 1), errs: errs}
	go func() {
		for m := range msgs {
			attrs := m.Actor.Attributes
			purpose := attrs[sandbox.LabelPurpose]
			if attrs[sandbox.LabelWatches] != "" || purpose == "pin" {
				continue
			}
			c.mu.Lock()
			if m.Action == events.ActionCreate {
				c.now++
				c.made[purpose]++
				c.peak = max(c.peak, c.now)
			} else {
				c.now--
			}
			c.mu.Unlock()
			select {
			case c.changed <- struct{}{}:
			default:
			}
		}
	}()
	return c
}

// settle waits until the engine has reported as many sandboxes made as want counts, and every
// one of them destroyed; it returns the counts by purpose and the peak.
func (c *sandboxCounter) settle(t *testing.T, want int) (map[string]int, int) {
	t.Helper()
	timeout := time.NewTimer(2 * time.Minute)
	defer timeout.Stop()
	for {
		c.mu.Lock()
		total := 0
		for _, n := range c.made {
			total += n
		}
		now, peak, made := c.now, c.peak, fmt.Sprint(c.made)
		c.mu.Unlock()
		if total >= want && now == 0 {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.made, peak
		}
		select {
		case <-c.changed:
		case err := <-c.errs:
			t.Fatalf("following the engine's events: %v", err)
		case <-timeout.C:
			t.Fatalf("the engine reported %s sandboxes made (want %d), %d still there", made, want, now)
		}
	}
}

// TestMaxSandboxesCountsEverySandbox: with FROGNANO_MAX_SANDBOXES=2, a run of four attempts
// whose repository has a setup script never has more than two sandboxes at once, counted
// through the Docker engine's own events: the setup container, the four agents, the shared
// tests-before run and the tests-after runs all take a slot. Every attempt still runs to its
// end and is verified, and the fix is chosen. Attempts 1 and 4 make the same patch: they
// share one tests-after run, and attempt 4's report says so.
func TestMaxSandboxesCountsEverySandbox(t *testing.T) {
	t.Parallel()
	dir := checkout(t, "pyaverage")
	// A setup script of this test's own, so the environment is built (with a setup
	// container) whatever earlier runs cached.
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	if err := os.MkdirAll(filepath.Join(dir, ".frognano"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "set -eu\necho 'environment " + hex.EncodeToString(rnd[:]) + "'\n"
	if err := os.WriteFile(filepath.Join(dir, env.ScriptFile), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.Git(t, dir, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "setup")
	freshEnvironment(t, dir, sandbox.DefaultImage)

	b := setupOwned(t, 2, env.Config{Network: env.NoNetwork, Timeout: 5 * time.Minute}, dir,
		"attempt-wrong-fix.json", "e2e-pyaverage.json", "attempt-unrelated.json", "attempt-wrong-fix.json")
	count := countSandboxes(t, b.owner)
	res, err := b.runner.RunAttempts(context.Background(), b.spec, b.opt)
	if err != nil {
		t.Fatal(err)
	}
	made, peak := count.settle(t, 9)
	t.Logf("sandboxes made: %v; at most %d at once", made, peak)
	if peak > 2 {
		t.Errorf("%d sandboxes existed at once, over FROGNANO_MAX_SANDBOXES=2", peak)
	}
	want := map[string]int{"setup": 1, "agent": 4, "tests-before": 1, "tests-after": 3}
	for purpose, n := range want {
		if made[purpose] != n {
			t.Errorf("%d %s sandbox(es) made, want %d (all: %v)", made[purpose], purpose, n, made)
		}
	}
	built := 0
	for _, a := range res.Attempts.Attempts {
		if a.Result != nil && a.Result.Environment != nil && a.Result.Environment.Setup != nil {
			built++
		}
	}
	if built != 1 {
		t.Errorf("%d attempts ran setup, want 1 (the others reuse its environment)", built)
	}
	for _, a := range res.Attempts.Attempts {
		if a.Err != nil || a.Result == nil || a.Result.TestsAfter == nil || a.Result.TestsAfter.Error != "" {
			t.Fatalf("attempt %d was not carried out and verified: %v %+v", a.K, a.Err, a.Result)
		}
	}
	// Whichever of the two got there first ran the tests; the other's report says so.
	one, four := res.Attempts.Attempts[0].Result, res.Attempts.Attempts[3].Result
	notes := strings.Join(one.Notes, "\n") + "\n" + strings.Join(four.Notes, "\n")
	if one.TestsAfter != four.TestsAfter || strings.Count(notes, "so the two share one tests-after run") != 1 ||
		!strings.Contains(notes, "identical to attempt 1's") && !strings.Contains(notes, "identical to attempt 4's") {
		t.Errorf("attempts 1 and 4 made the same patch but did not share their tests-after run; their notes: %q", notes)
	}
	if k := res.Attempts.Attempts[res.Attempts.Chosen].K; k != 2 {
		t.Errorf("chosen attempt %d (%s), want 2", k, res.Attempts.Why)
	}
	if left := b.containers(t); len(left) != 0 {
		t.Errorf("%d container(s) left after the run", len(left))
	}
}

// TestRunAttemptsCancelledRemovesEverySandbox: cancelling a run of three attempts, each in a
// ten-minute command, with three sandbox slots (so the shared before-run is waiting for one),
// removes every sandbox of the run: once RunAttempts has returned, the Docker engine lists no
// container of the run's owner at all (agents, test runs, disk watchers, the environment's
// pin).
func TestRunAttemptsCancelledRemovesEverySandbox(t *testing.T) {
	t.Parallel()
	b := setupOwned(t, 3, env.Config{}, checkout(t, "pyaverage"), "e2e-cancel-in-bash.json", "e2e-cancel-in-bash.json", "e2e-cancel-in-bash.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var res *runner.Result
	var runErr error
	go func() {
		defer close(done)
		res, runErr = b.runner.RunAttempts(ctx, b.spec, b.opt)
	}()
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Minute)
	defer wcancel()
	// Every attempt is in its ten-minute command: the second request never comes, so the
	// first was answered and its Bash call runs, or waits to run, in the attempt's own
	// sandbox, which is made while the model writes its first turn.
	for _, s := range b.servers {
		if err := s.WaitRequests(wctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	for agents := 0; agents != 3; {
		agents = 0
		for _, c := range b.containers(t) {
			if c.Labels[sandbox.LabelPurpose] == "agent" && c.State == "running" {
				agents++
			}
		}
		if wctx.Err() != nil {
			t.Fatalf("%d agent sandboxes running before the cancel, want 3", agents)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	cancelled := time.Now()
	<-done
	took := time.Since(cancelled)
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		t.Fatalf("RunAttempts: %v", runErr)
	}
	if runErr == nil && !res.Cancelled {
		t.Fatalf("result not marked cancelled: exit %q", res.ExitReason())
	}
	if left := b.containers(t); len(left) != 0 {
		var names []string
		for _, c := range left {
			names = append(names, c.Labels[sandbox.LabelRunID]+"/"+c.Labels[sandbox.LabelPurpose]+" "+c.State)
		}
		t.Errorf("after cancel returned, the engine still lists: %s", strings.Join(names, ", "))
	}
	// A measurement, not an assertion (the machine may be loaded): the goal is 5 s.
	t.Logf("RunAttempts returned %s after cancel, every sandbox gone", took.Round(time.Millisecond))
}

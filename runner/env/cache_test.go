package env_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/env"
)

// Two runs that need the same missing environment at once build it once: the second waits for
// the first and reuses its image. The two Managers stand for two processes (each its own
// lock file handle; a shared lock, as the service's PostgreSQL advisory lock, is taken too). A
// third run starts with no setup; a changed input makes a new environment.
func TestConcurrentRunsBuildOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, head := gittest.Repo(t, map[string]string{
		env.ScriptFile:     "echo building; sleep 2; cp requirements.txt /opt/installed.txt\n",
		"requirements.txt": "one==1\n",
	})
	lockDir := t.TempDir()
	shared := &countingLocker{}
	cfg := env.Config{Network: env.NoNetwork, SharedLock: shared}
	managers := []*env.Manager{manager(t, cfg, lockDir), manager(t, cfg, lockDir)}
	req := env.Request{RunID: "envtest-once", RepoDir: dir, Commit: head, Scope: scopeOf(t, dir), Sandbox: sandboxConfig(t)}

	envs := make([]*env.Environment, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range managers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			envs[i], errs[i] = managers[i].Prepare(ctx, req)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		defer envs[i].Release()
	}
	removeEnvImage(t, envs[0].Ref)
	built := 0
	for _, e := range envs {
		if e.Setup != nil {
			built++
		}
	}
	if built != 1 || envs[0].Image != envs[1].Image || envs[0].Cached == envs[1].Cached {
		t.Fatalf("built %d times; images %s and %s; cached %v and %v", built, envs[0].Image, envs[1].Image, envs[0].Cached, envs[1].Cached)
	}
	if n := shared.calls.Load(); n != 2 {
		t.Errorf("the shared lock was taken %d times, want 2 (once per builder)", n)
	}

	third, err := managers[1].Prepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release()
	if !third.Cached || third.Setup != nil || third.Image != envs[0].Image {
		t.Errorf("third run: cached %v, setup %v", third.Cached, third.Setup != nil)
	}

	// A changed input is a new environment, once committed (setup sees the commit).
	if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("one==2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, err := managers[0].Prepare(ctx, req); err != nil {
		t.Fatal(err)
	} else if again.Release(); again.Key != envs[0].Key {
		t.Error("an uncommitted edit changed the key")
	}
	req.Commit = gittest.Commit(t, dir, "one==2")
	changed, err := managers[0].Prepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer changed.Release()
	removeEnvImage(t, changed.Ref)
	if changed.Key == envs[0].Key || changed.Cached || changed.Setup == nil {
		t.Errorf("a changed requirements.txt reused the environment (key %s)", changed.Key)
	}
	out, _ := run(t, sandboxConfig(t), changed.Image, "", "", "cat /opt/installed.txt")
	if out != "one==2\n" {
		t.Errorf("the new environment holds %q", out)
	}
}

// countingLocker is a shared lock in one process, counting how often it is taken.
type countingLocker struct {
	mu    sync.Mutex
	calls atomic.Int32
}

func (l *countingLocker) Lock(ctx context.Context, key string) (func(), error) {
	l.calls.Add(1)
	l.mu.Lock()
	return l.mu.Unlock, nil
}

// The cache keeps within its size bound by removing the least recently used environment
// images, and never one a run still uses. Not parallel: the bound counts every environment
// image on the engine, so the other tests' images must not come and go meanwhile.
func TestEvictLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	const mib = 1 << 20
	build := func(m *env.Manager, name string) *env.Environment {
		t.Helper()
		// 3 MiB that do not compress or deduplicate: each image's own layer is about that.
		return buildSized(t, m, "envtest-lru-"+name, name, 3*mib, nil)
	}
	gone := func(e *env.Environment) bool { return imageGone(t, e) }
	before := cachedBytes(t)
	// Room for the images already there, and two of ours but not three.
	const fresh = 2 * time.Second
	// A short FreshFor, not none: these evictions are engine-wide, and other packages' tests
	// commit environments meanwhile, each untagged and unpinned for a moment after its commit.
	m := manager(t, env.Config{Network: env.NoNetwork, CacheSize: before + 7*mib, FreshFor: fresh}, "")
	a := build(m, "a")
	a.Release()       // no longer in use: the first to go
	time.Sleep(fresh) // and no longer fresh
	b := build(m, "b")
	defer b.Release()
	time.Sleep(10 * time.Millisecond)
	c := build(m, "c") // evicts after building: a goes, b and c fit
	defer c.Release()
	list, err := m.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		if x.ID == b.Image && (x.Size < 3*mib || x.Size > 4*mib || x.InUse == 0) {
			t.Errorf("b is listed with %d bytes and %d users, want about 3 MiB and its pin", x.Size, x.InUse)
		}
	}
	if !gone(a) || gone(b) || gone(c) {
		t.Fatalf("after the third build: a gone %v, b gone %v, c gone %v; want only a gone", gone(a), gone(b), gone(c))
	}

	// A bound of nothing: still never an image in use.
	tiny := manager(t, env.Config{CacheSize: 1, FreshFor: fresh}, "")
	time.Sleep(fresh) // b and c are no longer fresh: only their pins keep them
	if _, err := tiny.Evict(ctx); err != nil {
		t.Fatal(err)
	}
	if gone(b) || gone(c) {
		t.Fatal("an environment image in use was removed")
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	removed, err := tiny.Evict(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !gone(c) || gone(b) {
		t.Errorf("after c's release: c gone %v, b gone %v; removed %v", gone(c), gone(b), ids(removed))
	}
}

func ids(cs []env.Cached) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%.19s(%s)", c.ID, c.Ref))
	}
	return out
}

// A run cancelled while it waits for another run's build of the same environment stops
// waiting at once.
func TestWaitingForTheLockEndsWithTheContext(t *testing.T) {
	t.Parallel()
	l := env.FileLocker{Dir: t.TempDir()}
	unlock, err := l.Lock(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := l.Lock(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("waited %s", d)
	}
	other, err := l.Lock(context.Background(), "other-key")
	if err != nil {
		t.Fatal(err)
	}
	other()
}

// One tenant cannot push another's environments out of the cache by building large ones: the
// cache removes the least recently used image of the tenant that holds the most. The
// victim's image is the least recently used of all, not in use and not fresh: before tenants
// counted, the attacker's third build removed it. Not parallel, for the reason above.
func TestOneTenantCannotEvictAnother(t *testing.T) {
	ctx := context.Background()
	const mib = 1 << 20
	build := func(m *env.Manager, tenant, name string, size int) *env.Environment {
		t.Helper()
		return buildSized(t, m, "envtest-fair-"+name, name, size, &env.Scope{Tenant: tenant, Repo: tenant + " " + name})
	}
	gone := func(e *env.Environment) bool { return imageGone(t, e) }
	before := cachedBytes(t)
	const fresh = 2 * time.Second
	suffix := fmt.Sprint(time.Now().UnixNano())
	victimTenant, attackerTenant := "victim-"+suffix, "attacker-"+suffix
	m := manager(t, env.Config{Network: env.NoNetwork, CacheSize: before + 12*mib, FreshFor: fresh}, "")
	victim := build(m, victimTenant, "v", 3*mib)
	victim.Release() // between two runs of the victim: in the cache, in no one's use
	time.Sleep(fresh)
	var attacker []*env.Environment
	for _, name := range []string{"a1", "a2", "a3"} {
		a := build(m, attackerTenant, name, 4*mib)
		a.Release()
		attacker = append(attacker, a)
		time.Sleep(fresh) // each older than FreshFor by the next build: all removable
	}
	if _, err := m.Evict(ctx); err != nil {
		t.Fatal(err)
	}
	if gone(victim) {
		t.Fatal("the attacker's builds evicted the victim's environment")
	}
	if !gone(attacker[0]) {
		t.Errorf("the attacker's least recently used environment is still there: nothing of its own was evicted")
	}
}

// buildSized builds an environment whose setup writes size random bytes (no compression or
// deduplication: its own layer is about that size) to /opt/name, with scope, or the checkout's
// own when nil; its image is removed when the test ends.
func buildSized(t *testing.T, m *env.Manager, runID, name string, size int, scope *env.Scope) *env.Environment {
	t.Helper()
	dir, head := gittest.Repo(t, map[string]string{env.ScriptFile: fmt.Sprintf("head -c %d /dev/urandom > /opt/%s\n", size, name)})
	sc := scopeOf(t, dir)
	if scope != nil {
		sc = *scope
	}
	e, err := m.Prepare(context.Background(), env.Request{RunID: runID, RepoDir: dir, Commit: head, Scope: sc, Sandbox: sandboxConfig(t)})
	if err != nil {
		t.Fatalf("building %s: %v", name, err)
	}
	removeEnvImage(t, e.Ref)
	return e
}

// imageGone reports whether e's image is no longer on the engine.
func imageGone(t *testing.T, e *env.Environment) bool {
	_, err := docker.ImageInspect(context.Background(), e.Image)
	return cerrdefs.IsNotFound(err)
}

// cachedBytes is what the engine's environment images take now, all tests' together.
func cachedBytes(t *testing.T) int64 {
	t.Helper()
	others, err := manager(t, env.Config{}, "").List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range others {
		n += c.Size
	}
	return n
}

package env_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"sync"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/env"
)

// TestObserveReusedOrBuilt: Config.Observe (the service's environment cache metric) hears a
// build, then a reuse, of the same environment.
func TestObserveReusedOrBuilt(t *testing.T) {
	t.Parallel()
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir, head := gittest.Repo(t, map[string]string{env.ScriptFile: "echo observe-" + hex.EncodeToString(b[:]) + "\n"})
	var mu sync.Mutex
	var seen []bool
	m := manager(t, env.Config{Network: env.NoNetwork, Observe: func(reused bool) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, reused)
	}}, t.TempDir())
	req := env.Request{RunID: "envtest-observe", RepoDir: dir, Commit: head, Scope: scopeOf(t, dir), Sandbox: sandboxConfig(t)}
	for i := 0; i < 2; i++ {
		e, err := m.Prepare(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			t.Cleanup(func() { removeEnvImage(t, e.Ref) })
		}
		e.Release()
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []bool{false, true}) {
		t.Errorf("observed %v, want a build then a reuse", seen)
	}
}

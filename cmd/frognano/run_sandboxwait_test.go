package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestRunCommandSaysItWaitsForASandbox: `frognano run` with FROGNANO_MAX_SANDBOXES=1 prints
// that the tests before wait for a free sandbox while the agent's holds the slot (the model's
// first answer is held until stderr says so), then that a sandbox is free for them, and the
// run goes on to its fix.
func TestRunCommandSaysItWaitsForASandbox(t *testing.T) {
	t.Parallel()
	model := leaftest.NewServer(t, leaftest.LoadModel(t, "e2e-pyaverage.json"))
	const waitLine = "waiting for a free sandbox for the tests before (1 of 1 in use, FROGNANO_MAX_SANDBOXES)\n"
	var stderr svcBuffer
	target, err := url.Parse(strings.TrimSuffix(model.URL, "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var chats atomic.Int64
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions") && chats.Add(1) == 1 {
			deadline := time.Now().Add(2 * time.Minute)
			for !strings.Contains(stderr.String(), waitLine) {
				if time.Now().After(deadline) {
					t.Errorf("stderr never said the tests before wait for a sandbox:\n%s", stderr.String())
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(held.Close)
	var stdout bytes.Buffer
	err = run(context.Background(), []string{"run", "--repo", cliCheckout(t, "pyaverage"), "--task", "Fix the failing test.",
		"--out", filepath.Join(t.TempDir(), "out"), "--executor", cliExecutor(t)},
		envMap(map[string]string{"FROGNANO_MODEL_URL": held.URL + "/v1", "FROGNANO_SANDBOX_MEMORY": "1g", "FROGNANO_SANDBOX_CPUS": "1",
			"FROGNANO_MAX_SANDBOXES": "1"}), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	log := stderr.String()
	wait := strings.Index(log, waitLine)
	free := strings.Index(log, "a sandbox is free for the tests before\n")
	if wait < 0 || free < wait || !strings.Contains(log, "finished: exit reason agent after 5 steps") {
		t.Errorf("stderr does not say the tests before waited for a sandbox, then got one:\n%s", log)
	}
}

package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/frognano/frognano/internal/dockertest"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// goImage is the sandbox image with a Go toolchain the runner tests use too.
const goImage = "frognano-sandbox-go:test"

var (
	docker       *client.Client
	executorPath string
)

func TestMain(m *testing.M) {
	dockertest.Main(m, dockertest.Options{Tests: "the eval tests", Images: []string{goImage}, Executor: true}, func(e dockertest.Env) {
		docker, executorPath = e.Docker, e.Executor
	})
}

// newRunner is a runner as the runner tests make one, with owner labelling its sandboxes, at
// most slots sandboxes and model requests at once, and the model at url.
func newRunner(t testing.TB, owner, url string, slots int) *runner.Runner {
	t.Helper()
	return newRunnerWith(t, owner, url, slots, 1)
}

// newRunnerWith is newRunner making attempts attempts per run.
func newRunnerWith(t testing.TB, owner, url string, slots, attempts int) *runner.Runner {
	t.Helper()
	cfg := runner.DefaultConfig()
	cfg.Attempts.N = attempts
	cfg.Sandbox.ExecutorPath = executorPath
	cfg.Sandbox.Memory = 1 << 30
	cfg.Sandbox.CPUs = 1
	cfg.Sandbox.Owner = owner
	cfg.Sandbox.Env = []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local"}
	cfg.Sandbox.Slots = sandbox.NewSlots(slots)
	cfg.Attempts.ModelLimiter = leaf.NewLimiter(slots)
	cfg.Leaf.BaseURL = url
	cfg.Leaf.RetryBaseDelay = time.Millisecond
	cfg.TestTimeout = 3 * time.Minute
	return runner.New(docker, cfg, nil)
}

// containersOwnedBy lists the containers (running or not) of a sandbox owner.
func containersOwnedBy(t testing.TB, owner string) []string {
	t.Helper()
	list, err := docker.ContainerList(context.Background(), container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+owner)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	return ids
}

// modelRouter is one model URL in front of a scripted server per task: a request goes to the
// server whose key the conversation's first user message (the task's problem statement)
// contains. Tasks run concurrently, so the order of their first requests is not known.
type modelRouter struct {
	URL     string
	t       testing.TB
	mu      sync.Mutex
	servers map[string]*leaftest.Server
}

func newModelRouter(t testing.TB, servers map[string]*leaftest.Server) *modelRouter {
	rt := &modelRouter{t: t, servers: servers}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"microsoft/FrogNano-4B-2609","object":"model"}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", rt.handle)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	rt.URL = srv.URL + "/v1"
	return rt
}

func (rt *modelRouter) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	first := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			first = fmt.Sprint(m.Content)
			break
		}
	}
	rt.mu.Lock()
	var to *leaftest.Server
	for key, s := range rt.servers {
		if strings.Contains(first, key) {
			to = s
		}
	}
	rt.mu.Unlock()
	if to == nil {
		rt.t.Errorf("model router: no script for a conversation starting %.200q", first)
		http.Error(w, "no script", http.StatusInternalServerError)
		return
	}
	fwd, err := http.NewRequestWithContext(r.Context(), http.MethodPost, to.URL+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fwd.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(fwd)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// taskRepo makes a repository from testdata/repos/NAME whose base commit lacks the hidden
// tests: files maps a test file to its content at base (the testdata version, the full one, is
// what the test patch brings). It returns the repository, the base commit and the test patch.
func taskRepo(t testing.TB, name string, base map[string]string) (dir, commit, testPatch string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "testdata", "repos", name))); err != nil {
		t.Fatal(err)
	}
	full := map[string]string{}
	for f := range base {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		full[f] = string(b)
	}
	gittest.Write(t, dir, base)
	commit = gittest.Commit(t, dir, "base")
	gittest.Write(t, dir, full)
	testPatch = gittest.Git(t, dir, "diff", "--binary")
	gittest.Git(t, dir, "checkout", "--", ".")
	if testPatch == "" {
		t.Fatal("empty test patch")
	}
	return dir, commit, testPatch + "\n"
}

// pyBase is tests/test_basic.py of pyaverage without the two tests the fix makes pass.
const pyBase = `import pytest

from stats import average, total


def test_total():
    assert total([1, 2, 3]) == 6


def test_average_empty():
    with pytest.raises(ValueError):
        average([])
`

// goBase is gomax's max_test.go without TestMaxNegative.
const goBase = `package gomax

import "testing"

func TestMaxPositive(t *testing.T) {
	if got := Max([]int{3, 9, 4}); got != 9 {
		t.Fatalf("Max = %d, want 9", got)
	}
}

func TestMin(t *testing.T) {
	if got := Min([]int{3, -9, 4}); got != -9 {
		t.Fatalf("Min = %d, want -9", got)
	}
}
`

func pyTaskRepo(t testing.TB) (dir, commit, testPatch string) {
	dir, commit, testPatch = taskRepo(t, "pyaverage", map[string]string{"tests/test_basic.py": pyBase})
	// A marker only the hidden tests hold: the model must never see it.
	testPatch = strings.Replace(testPatch, "+def test_average():", "+# hidden-eval-marker\n+def test_average():", 1)
	testPatch = fixHunkCounts(t, dir, commit, testPatch)
	return dir, commit, testPatch
}

// fixHunkCounts rewrites a hand-edited test patch through git so its hunk headers are right:
// apply it leniently (--recount) and take the diff again.
func fixHunkCounts(t testing.TB, dir, commit, p string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "apply", "--recount", f)
	out := gittest.Git(t, dir, "diff", "--binary")
	gittest.Git(t, dir, "checkout", "--", ".")
	return out + "\n"
}

func jsonLine(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

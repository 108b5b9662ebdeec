package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/runner/sandbox"
)

// hangingModel answers /models with 404 (reachable) and holds every chat completion until the
// test ends; asked is closed at the first one.
func hangingModel(t *testing.T) (url string, asked <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		once.Do(func() { close(ch) })
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL + "/v1", ch
}

// sandboxesOf lists the containers of owner (sandboxes and their disk watchers), all states.
func sandboxesOf(t *testing.T, owner string) []container.Summary {
	t.Helper()
	docker, err := svcDockerOnce()
	if err != nil {
		t.Fatal(err)
	}
	list, err := docker.ContainerList(context.Background(), container.ListOptions{
		All: true, Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+owner)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestRunKilledLeavesNothingForever: `frognano run` is killed with SIGKILL mid-run. Its
// sandbox carries a lifetime (so it would end by itself), its disk watcher ends at once (its
// stdin was the dead process's stream), and the next `frognano run` removes both, while the
// sandboxes of a run still going and of the service stay.
func TestRunKilledLeavesNothingForever(t *testing.T) {
	t.Parallel()
	executor, frognano := svcBinaries(t, true)
	docker, err := svcDockerOnce()
	if err != nil {
		t.Fatal(err)
	}
	modelURL, asked := hangingModel(t)
	owner := fmt.Sprintf("leftover-test-%d", time.Now().UnixNano())
	repo := cliCheckout(t, "pyaverage")
	t.Cleanup(func() {
		for _, o := range []string{owner, runOwner(owner)} {
			_, _ = sandbox.Prune(context.Background(), docker, o)
		}
	})

	cmd := exec.Command(frognano, "run", "--repo", repo, "--task", "Fix it.", "--out", filepath.Join(t.TempDir(), "out"),
		"--executor", executor, "--test-cmd", "none", "--timeout", "2m", "--test-timeout", "1m")
	cmd.Env = append(os.Environ(), "FROGNANO_MODEL_URL="+modelURL, "FROGNANO_SANDBOX_OWNER="+owner,
		"FROGNANO_SANDBOX_MEMORY=256m", "FROGNANO_SANDBOX_CPUS=1", "FROGNANO_SANDBOX_DISK=64m")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // a failed wait below leaves it running otherwise
	instance := sandbox.ProcessInstance(cmd.Process.Pid)
	select {
	case <-asked: // the loop waits for the model; the agent's sandbox is being made meanwhile
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the run never asked the model; stderr:\n%s", stderr.String())
	}
	svcWait(t, 2*time.Minute, "the agent's sandbox and its disk watcher to run", func() (bool, string) {
		running := map[string]bool{}
		for _, c := range sandboxesOf(t, runOwner(owner)) {
			running[c.Labels[sandbox.LabelPurpose]] = c.State == "running"
		}
		return running["agent"] && running["agent-disk-watcher"], fmt.Sprint(running)
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	var agent, watcher container.Summary
	for _, c := range sandboxesOf(t, runOwner(owner)) {
		switch c.Labels[sandbox.LabelPurpose] {
		case "agent":
			agent = c
		case "agent-disk-watcher":
			watcher = c
		}
	}
	if agent.ID == "" || watcher.ID == "" {
		t.Fatalf("the killed run left no agent sandbox and watcher to look at; stderr:\n%s", stderr.String())
	}
	if agent.Labels[sandbox.LabelInstance] != instance || agent.State != "running" {
		t.Errorf("the killed run's sandbox: instance %q state %q, want %q running", agent.Labels[sandbox.LabelInstance], agent.State, instance)
	}
	// It would end by itself: PID 1 sleeps for the longer of --timeout and --test-timeout plus
	// the margin (2m + 15m).
	info, err := docker.ContainerInspect(context.Background(), agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(info.Config.Cmd, " "); got != "sleep 1020" {
		t.Errorf("the sandbox's PID 1 runs %q, want sleep 1020", got)
	}
	// The watcher ends as soon as the process that drove it is gone.
	svcWait(t, time.Minute, "the killed run's disk watcher to end", func() (bool, string) {
		w, err := docker.ContainerInspect(context.Background(), watcher.ID)
		if err != nil {
			return false, err.Error()
		}
		return !w.State.Running, w.State.Status
	})

	// A run still going (this process) and the service, on the same host, each have a sandbox.
	live := sandbox.DefaultConfig()
	live.ExecutorPath, live.Memory, live.Owner, live.Instance = executor, 256<<20, runOwner(owner), sandbox.ProcessInstance(os.Getpid())
	service := live
	service.Owner, service.Instance = owner, "service-start"
	for _, cfg := range []sandbox.Config{live, service} {
		sb, err := sandbox.New(context.Background(), docker, cfg, "keep-me", "agent")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sb.Close() })
	}

	// The next run cleans up at start, even though it then stops at its unreachable model.
	var out bytes.Buffer
	err = run(context.Background(), []string{"run", "--repo", repo, "--task", "x", "--out", t.TempDir(), "--executor", executor,
		"--model-url", "http://127.0.0.1:1/v1"}, envMap(map[string]string{"FROGNANO_SANDBOX_OWNER": owner}), &out, &out)
	if exitCode(err) != 3 || !strings.Contains(out.String(), "removed 1 sandbox(es) that interrupted runs left behind") {
		t.Errorf("the next run: err %v (exit %d), output:\n%s", err, exitCode(err), out.String())
	}
	for _, id := range []string{agent.ID, watcher.ID} {
		if _, err := docker.ContainerInspect(context.Background(), id); err == nil {
			t.Errorf("container %s of the killed run is still there", id)
		}
	}
	if _, err := docker.VolumeInspect(context.Background(), workspaceVolumeOf(info)); err == nil {
		t.Error("the killed run's workspace volume is still there")
	}
	var kept []string
	for _, o := range []string{runOwner(owner), owner} {
		for _, c := range sandboxesOf(t, o) {
			if c.Labels[sandbox.LabelWatches] == "" {
				kept = append(kept, c.Labels[sandbox.LabelOwner]+"/"+c.Labels[sandbox.LabelInstance])
			}
		}
	}
	want := []string{runOwner(owner) + "/" + sandbox.ProcessInstance(os.Getpid()), owner + "/service-start"}
	if strings.Join(kept, " ") != strings.Join(want, " ") {
		t.Errorf("sandboxes left: %q, want the live run's and the service's: %q", kept, want)
	}
}

func workspaceVolumeOf(info container.InspectResponse) string {
	for _, m := range info.Mounts {
		if m.Destination == sandbox.DefaultWorkdir {
			return m.Name
		}
	}
	return ""
}

func TestSandboxDiskSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want int64
		err  string
	}{
		{"Default", nil, nil, sandbox.DefaultDisk, ""},
		{"Env", map[string]string{"FROGNANO_SANDBOX_DISK": "512m"}, nil, 512 << 20, ""},
		{"FlagWins", map[string]string{"FROGNANO_SANDBOX_DISK": "512m"}, []string{"--sandbox-disk", "2GiB"}, 2 << 30, ""},
		{"BadEnv", map[string]string{"FROGNANO_SANDBOX_DISK": "lots"}, nil, 0, "FROGNANO_SANDBOX_DISK"},
		{"BadFlag", nil, []string{"--sandbox-disk", "-1"}, 0, "sandbox-disk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.Runner(envMap(tt.env))
			if err == nil {
				fs := newFlagSet("run", &bytes.Buffer{})
				bindRunnerFlags(fs, &cfg)
				err = parseFlags(fs, tt.args)
			}
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("err = %v, want one naming %s", err, tt.err)
			case tt.err == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.err == "" && cfg.Sandbox.Disk != tt.want:
				t.Errorf("disk = %d, want %d", cfg.Sandbox.Disk, tt.want)
			}
		})
	}
}

package runner_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/egress"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// runOffline runs a script on testdata/repos/pyaverage (plus files) with no tests, the way
// the service makes the agent's sandbox.
func runOffline(t *testing.T, script leaftest.Script, files map[string]string) *runner.Result {
	t.Helper()
	model := leaftest.NewServer(t, script)
	cfg := runner.DefaultConfig()
	cfg.Sandbox.Image = sandbox.DefaultImage
	cfg.Sandbox.ExecutorPath = executorPath
	cfg.Sandbox.Memory = 512 << 20
	cfg.Sandbox.CPUs = 1
	cfg.Sandbox.Owner = "runner-test"
	cfg.Leaf.BaseURL = model.URL
	cfg.Leaf.RetryBaseDelay = time.Millisecond
	cfg.TestCmd = "none"
	dir := checkout(t, "pyaverage")
	if len(files) > 0 {
		gittest.Write(t, dir, files)
		gittest.Commit(t, dir, "files")
	}
	runID := strings.NewReplacer("/", "-", "_", "-").Replace(fmt.Sprintf("rt-%s-%d", strings.ToLower(t.Name()), time.Now().UnixNano()))
	res, err := runner.New(docker, cfg, nil).Run(context.Background(), runner.Spec{RunID: runID, RepoDir: dir, Task: "Fix the failing test."}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitReason() != leaf.ExitAgent {
		t.Fatalf("exit reason %q (%s)", res.ExitReason(), res.Leaf.Error)
	}
	return res
}

// TestOfflineSandboxReportsNetworkAttempts: a model that tries pip install, curl (not in the
// image), a download from Python, npm install (not in the image) and a connect to an address
// gets a report, a pull request body and a status comment that name the hosts and how often
// each was looked up, the connection with no route, each command that tried with its exit
// status, the commands not found, and what to do: docs/environments.md's Python setup snippet
// (pip tried; the repository has requirements.txt) and an image with Node. What the model
// only printed (a host that could not be resolved, cargo not found, with exit 127) counts
// for nothing.
func TestOfflineSandboxReportsNetworkAttempts(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := runOffline(t, leaftest.LoadModel(t, "offline-network.json"), map[string]string{"requirements.txt": "somepkg==1.0\n"})
	e := res.Egress
	if e == nil || !e.Attempted() || e.Unobserved != "" {
		t.Fatalf("egress report %+v", e)
	}
	hosts := map[string]int{}
	for _, h := range e.Hosts {
		hosts[h.Name] = h.Lookups
	}
	if hosts["files.pkgs.invalid"] < 1 || hosts["data.pkgs.invalid"] < 1 || len(hosts) != 2 {
		t.Errorf("hosts %+v, want files.pkgs.invalid and data.pkgs.invalid only", e.Hosts)
	}
	if e.NoRoute < 1 {
		t.Errorf("no-route count %d, want the connect to 192.0.2.1", e.NoRoute)
	}
	var missing []string
	for _, m := range e.Missing {
		missing = append(missing, m.Command)
	}
	if strings.Join(missing, ",") != "curl,npm" {
		t.Errorf("commands not found %q, want curl and npm (cargo was only printed)", missing)
	}
	pr := report.PRBody(res, report.Fit{})
	summary := report.Summary(res, report.Fit{})
	for name, text := range map[string]string{"report": report.Markdown(res), "PR body": pr, "summary": summary} {
		for _, want := range []string{
			"## What the offline sandbox stopped",
			fmt.Sprintf("| `files.pkgs.invalid` | %d |", hosts["files.pkgs.invalid"]),
			fmt.Sprintf("| `data.pkgs.invalid` | %d |", hosts["data.pkgs.invalid"]),
			"had no route",
			"- `pip install --retries 0 --index-url https://files.pkgs.invalid/simple somepkg`: exit 1; while it ran, the sandbox looked up `files.pkgs.invalid`\n",
			"- `npm install`: exit 127; `npm` is not in the sandbox",
			"- `curl -sSfLO https://files.pkgs.invalid/x.tar.gz`: exit 127; `curl` is not in the sandbox",
			"**Node** (`npm` was not found in the sandbox). Map the repository to an image that has Node: the operator's setting `FROGNANO_SANDBOX_IMAGES`",
			"**Python** (pip tried to reach the network; the repository has requirements.txt).",
			"python3 -m pip install --no-cache-dir -r requirements.txt",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the %s lacks %q:\n%s", name, want, text)
			}
		}
		// The pull request's transcript shows the model's commands; the section must not
		// count what they printed.
		section := egressSection(text)
		for _, forged := range []string{"forged.pkgs.invalid", "cargo", "**Rust**", "Could"} {
			if strings.Contains(section, forged) {
				t.Errorf("the %s's section counts %q, which the model only printed:\n%s", name, forged, section)
			}
		}
	}
	t.Logf("run took %s; lookups %d, no route %d; hosts %+v", time.Since(start).Round(time.Millisecond), e.Lookups, e.NoRoute, e.Hosts)
	if testing.Verbose() {
		t.Log(egressSection(summary))
	}
}

// egressSection is the "What the offline sandbox stopped" section of a rendering.
func egressSection(text string) string {
	_, rest, ok := strings.Cut(text, "## What the offline sandbox stopped")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// TestHostileHideFromObserver (testdata/hostile/hide-from-observer.json): the model cannot kill,
// stop or displace the observer, and flooding it with 100,000 random names hides no try: the
// report stays bounded, counts the flood, and still reports pip's try with its advice (under
// the names not kept when the flood filled the table).
func TestHostileHideFromObserver(t *testing.T) {
	t.Parallel()
	script := leaftest.Load(t, filepath.Join(leaftest.ModelsDir(t), "..", "hostile", "hide-from-observer.json"))
	res := runOffline(t, script, map[string]string{"requirements.txt": "somepkg==1.0\n"})
	e := res.Egress
	if e == nil || strings.Contains(e.Unobserved, "stopped answering") {
		t.Fatalf("the observer was lost: %+v", e)
	}
	if e.Lookups < 1000 || len(e.Hosts) > 100 || e.HostsMore == 0 {
		t.Errorf("after the flood: %d lookups, %d hosts kept, %d not kept", e.Lookups, len(e.Hosts), e.HostsMore)
	}
	var pip *egress.Call
	for i, c := range e.Calls {
		if strings.HasPrefix(c.Command, "pip install") {
			pip = &e.Calls[i]
		}
	}
	if pip == nil || pip.Lookups == 0 || pip.Tool != "pip" {
		t.Fatalf("pip's try is hidden: %+v", e.Calls)
	}
	report := report.Markdown(res)
	section := egressSection(report)
	if !strings.Contains(section, "**Python** (pip tried to reach the network") || !strings.Contains(section, "lookup(s) of names the observer did not keep") {
		t.Errorf("the section lacks pip's advice or the count of names not kept:\n%s", section)
	}
	if rows := strings.Count(section, "\n| `"); rows > 20 {
		t.Errorf("the report lists %d names, over its bound of 20", rows)
	}
	if len(section) > 20000 {
		t.Errorf("the section takes %d bytes", len(section))
	}
	t.Logf("%d lookups, %d names kept, %d lookups of names not kept; unobserved %q", e.Lookups, len(e.Hosts), e.HostsMore, e.Unobserved)
}

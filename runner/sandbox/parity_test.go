package sandbox_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/frognano/frognano/runner/executor"
	"github.com/frognano/frognano/runner/sandbox"
)

// TestExecutorParityThroughContainer runs the same sequence of tool calls through the executor
// binary on the host (on a temporary copy, with a clean environment so the host's login
// profile cannot add noise) and through a real container, and requires byte-identical
// observations:
// the rules of docs/leaf-protocol.md that the executor's table tests check in process hold through
// the container too (path display, truncation, errors, timeouts, state carried between calls).
func TestExecutorParityThroughContainer(t *testing.T) {
	t.Parallel()
	repo := parityTree(t)
	local := t.TempDir()
	if err := os.CopyFS(local, os.DirFS(repo)); err != nil {
		t.Fatal(err)
	}
	sb := readySandbox(t, testConfig(), repo)
	long := strings.Repeat("0123456789", 2100) // over Read's 20,000-character cap
	calls := []struct{ tool, args string }{
		{"Glob", `{"pattern": "**/*.py"}`},
		{"Read", `{"file_path": "pkg/mod.py"}`},
		{"Read", `{"file_path": "pkg/mod.py", "offset": 2, "limit": 1}`},
		{"Read", `{"file_path": "pkg/mod.py", "offset": 0, "limit": 0}`},
		{"Read", `{"path": "pkg/mod.py"}`},
		{"Read", `{"file_path": "missing.txt"}`},
		{"Read", `{"file_path": "pkg"}`},
		{"Read", `{"file_path": "bad-utf8.txt"}`},
		{"Read", `{not json`},
		{"Read", `[1, 2]`},
		{"Write", `{"file_path": "long.txt", "content": "` + long + `"}`},
		{"Read", `{"file_path": "long.txt"}`},
		{"Edit", `{"file_path": "pkg/mod.py", "old_string": "absent", "new_string": "x"}`},
		{"Edit", `{"file_path": "pkg/mod.py", "old_string": "", "new_string": "x"}`},
		{"Edit", `{"file_path": "pkg/mod.py", "old_string": "value", "new_string": "v"}`},
		{"Edit", `{"file_path": "pkg/mod.py", "old_string": "value", "new_string": "v", "replace_all": "yes"}`},
		{"Read", `{"file_path": "pkg/mod.py"}`},
		{"Write", `{"file_path": "new/dir/file.txt", "content": "héllo\n"}`},
		{"Glob", `{"pattern": "**/*", "path": "new"}`},
		{"Glob", `{"pattern": "*.nothing"}`},
		{"Bash", `{"command": "echo out; echo err >&2; exit 3", "description": "exit code"}`},
		{"Bash", `{"command": "cat new/dir/file.txt pkg/mod.py | wc -l"}`},
		{"Bash", `{"command": "printf 'x%.0s' $(seq 1 30010)"}`},
		{"Bash", `{"command": "echo before; sleep 5", "timeout": 1}`},
		{"Bash", `{"command": "sleep 5", "timeout": 1500}`},
		{"Frobnicate", `{}`},
	}
	ctx := context.Background()
	host := startHostExecutor(t, local)
	for i, c := range calls {
		want := host.call(t, c.tool, c.args)
		got, err := sb.Call(ctx, c.tool, c.args)
		if err != nil {
			t.Fatalf("call %d %s: sandbox error: %v", i, c.tool, err)
		}
		want = strings.ReplaceAll(want, local, "/workspace")
		if got != want {
			t.Errorf("call %d %s %.60s:\n in process: %q\n container:  %q", i, c.tool, c.args, clip(want), clip(got))
		}
	}
}

// hostExecutor is the executor binary run as a plain host process, spoken to over its pipes.
type hostExecutor struct {
	in  *json.Encoder
	out *bufio.Reader
	n   int
}

func startHostExecutor(t *testing.T, workdir string) *hostExecutor {
	t.Helper()
	cmd := exec.Command(executorPath, "-workdir", workdir)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1", "LANG=C.UTF-8"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	h := &hostExecutor{in: json.NewEncoder(stdin), out: bufio.NewReaderSize(stdout, 1<<20)}
	var ready executor.Ready
	line, err := h.out.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &ready) != nil || !ready.Ready {
		t.Fatalf("host executor not ready: %q %v", line, err)
	}
	return h
}

func (h *hostExecutor) call(t *testing.T, tool, args string) string {
	t.Helper()
	h.n++
	id := fmt.Sprint(h.n)
	if err := h.in.Encode(executor.Request{ID: id, Tool: tool, Arguments: args}); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := h.out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var resp executor.Response
		if err := json.Unmarshal(line, &resp); err != nil || resp.ID != id {
			t.Fatalf("host executor answered %q (%v)", line, err)
		}
		if !resp.Alive { // heartbeats come before the answer of a call over 5 s
			return resp.Observation
		}
	}
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:200] + " … " + s[len(s)-200:]
	}
	return s
}

func parityTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"pkg/mod.py":      "value = 1\nother = value + 1\nprint(value)\n",
		"pkg/__init__.py": "",
		"top.py":          "import pkg\n",
		"bad-utf8.txt":    "ok \xff\xfe bytes\n",
		".hidden/x.py":    "hidden = True\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// corpus is testdata/leaf-differential.json: tool calls and the observations the reference
// (microsoft/FrogNano, frognano/harness/leaf/tool_runner.py) gave for them, recorded by
// running its pipeline (its argument parsing, its request file, the tool runner under the
// sandbox image's Python 3.11 inside its `bash -lc` wrapper) in a container of the sandbox
// image. testdata/leaf-differential.md says how it was recorded and what it covers.
type corpus struct {
	Reset    string              `json:"reset"`
	Fixtures map[string]string   `json:"fixtures"`
	Sessions map[string][]string `json:"sessions"`
	Cases    []corpusCase        `json:"cases"`
}

type corpusCase struct {
	Session string `json:"session"`
	Fixture string `json:"fixture"`
	Tool    string `json:"tool"`
	Args    string `json:"args"`
	// Dirty: the call may change the workspace, so the next call starts from a fresh fixture.
	Dirty bool `json:"dirty"`
	// Reference is what the reference produced: an observation, or (ToolError) the
	// exception its host raised before the tool runner started, which ends its run and
	// which frognano gives as the observation instead (docs/leaf-protocol.md, section 10,
	// item 15).
	Reference expected `json:"reference"`
	// Departure names the item of docs/leaf-protocol.md section 10 under which frognano
	// answers this call differently on purpose; Frognano is then its answer.
	Departure string    `json:"departure,omitempty"`
	Frognano  *expected `json:"frognano,omitempty"`
}

// expected is one side's answer to a call.
type expected struct {
	Observation *string `json:"observation,omitempty"`
	ToolError   *string `json:"tool_error,omitempty"`
	// A long observation is kept as its SHA-256 and its length in characters.
	SHA256 string `json:"sha256,omitempty"`
	Chars  int    `json:"chars,omitempty"`
}

// matches reports whether got is the expected answer.
func (r expected) matches(got string) bool {
	switch {
	case r.Observation != nil:
		return got == *r.Observation
	case r.ToolError != nil:
		return got == *r.ToolError
	}
	sum := sha256.Sum256([]byte(got))
	return hex.EncodeToString(sum[:]) == r.SHA256 && utf8.RuneCountInString(got) == r.Chars
}

func (r expected) String() string {
	switch {
	case r.Observation != nil:
		return *r.Observation
	case r.ToolError != nil:
		return *r.ToolError
	default:
		return fmt.Sprintf("(%d characters with SHA-256 %s)", r.Chars, r.SHA256)
	}
}

// TestExecutorMatchesReferenceCorpus runs every call of the differential corpus through the
// executor in real sandboxes (one long-lived executor per session and shard, a fresh fixture
// whenever the fixture changes or the previous call may have changed the workspace) and
// requires the reference's observation byte for byte.
func TestExecutorMatchesReferenceCorpus(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "leaf-differential.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cp corpus
	if err := json.Unmarshal(b, &cp); err != nil {
		t.Fatalf("reading the corpus: %v", err)
	}
	if len(cp.Cases) < 1000 {
		t.Fatalf("the corpus has %d calls, want at least 1,000", len(cp.Cases))
	}
	// Each session is one environment; the default session is cut in two shards (at a
	// fresh fixture) that run side by side.
	type shard struct {
		name  string
		env   []string
		cases []int
	}
	var shards []shard
	for _, name := range slices.Sorted(maps.Keys(cp.Sessions)) {
		var idx []int
		for i, c := range cp.Cases {
			if c.Session == name {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			t.Fatalf("session %s has no calls", name)
		}
		cut := len(idx)
		if len(idx) > 200 {
			for cut = len(idx) / 2; cut < len(idx) && !freshFixture(cp, idx, cut); cut++ {
			}
		}
		shards = append(shards, shard{name, cp.Sessions[name], idx[:cut]})
		if cut < len(idx) {
			shards = append(shards, shard{name + "-2", cp.Sessions[name], idx[cut:]})
		}
	}
	for i, c := range cp.Cases {
		if (c.Departure == "") != (c.Frognano == nil) {
			t.Fatalf("call %d: a departure needs both its reason and frognano's answer", i)
		}
	}
	var mu sync.Mutex
	identical, ended, departed := 0, 0, 0
	t.Cleanup(func() {
		t.Logf("%d calls: %d observations identical to the reference's; %d where the reference ended its run (tool_error) and frognano shows that error; %d answered differently on purpose (leaf-protocol.md section 10)",
			len(cp.Cases), identical, ended, departed)
	})
	// Two lanes side by side (go test runs two parallel tests on two cores): one half of the
	// default session, and the other half followed by the small sessions, one after another.
	lanes := map[string][]shard{}
	for _, sh := range shards {
		lane := "b"
		if sh.name == "default" {
			lane = "a"
		}
		lanes[lane] = append(lanes[lane], sh)
	}
	repo := makeRepo(t) // what the sandboxes start with; the first fixture replaces it
	runShard := func(t *testing.T, sh shard) {
		cfg := testConfig()
		cfg.Env = sh.env
		cfg.PidsLimit = 256
		ctx := context.Background()
		var sb *sandbox.Sandbox
		var built map[string]bool // the fixtures whose template sb holds
		restarts := 0
		// call makes one call. When the sandbox was stopped because its disk watcher could
		// not measure the workspace (du fails while files vanish under it, and the fixtures
		// replace the workspace hundreds of times), it reports false and the shard goes on
		// in a new sandbox from a fresh fixture; any other failure ends the shard.
		call := func(what, tool, args string) (string, bool) {
			t.Helper()
			obs, err := sb.Call(ctx, tool, args)
			if err == nil {
				return obs, true
			}
			reason := sb.StopReason(ctx)
			if strings.Contains(reason, "could no longer be measured") && restarts < 20 {
				restarts++
				t.Logf("%s: the sandbox was stopped (%s); going on in a new one", what, reason)
				return "", false
			}
			t.Fatalf("%s: %v (%s)", what, err, reason)
			return "", false
		}
		bash := func(what, command string) bool {
			t.Helper()
			args, _ := json.Marshal(map[string]string{"command": command})
			obs, ok := call(what, "Bash", string(args))
			if ok && !strings.HasPrefix(obs, "Exit code: 0\n") {
				t.Fatalf("%s: %s", what, clip(obs))
			}
			return ok
		}
		fresh := true
		for k := 0; k < len(sh.cases); {
			i := sh.cases[k]
			c := cp.Cases[i]
			if sb == nil {
				sb, built = readySandbox(t, cfg, repo), map[string]bool{}
			}
			// Every fixture but the ones that need their script (unreadable files, paths
			// longer than cp copies well) is built once in /dev/shm, a folder no call looks
			// at, and copied for each fresh start.
			if !scriptOnlyFixtures[c.Fixture] && !built[c.Fixture] {
				dir := "/dev/shm/fx/" + c.Fixture
				if !bash("building fixture "+c.Fixture, fmt.Sprintf("rm -rf %s && mkdir -p %s && cd %s && { %s\n}", dir, dir, dir, cp.Fixtures[c.Fixture])) {
					sb = nil
					continue
				}
				built[c.Fixture] = true
			}
			if fresh || freshFixture(cp, sh.cases, k) {
				// The corpus's reset, in fewer processes: empty /workspace (unlocking the
				// folders the perm fixture locks) and /tmp, then build the fixture.
				script := "chmod -R u+rwX /workspace 2>/dev/null; rm -rf -- /workspace/* /workspace/.[!.]* /workspace/..?* /tmp/* /tmp/.[!.]* /tmp/..?* 2>/dev/null; cd /workspace"
				if k == 0 || cp.Cases[sh.cases[k-1]].Fixture != "perm" {
					script = strings.TrimPrefix(script, "chmod -R u+rwX /workspace 2>/dev/null; ")
				}
				if scriptOnlyFixtures[c.Fixture] {
					script += "\n" + cp.Fixtures[c.Fixture]
				} else {
					script += " && cp -a /dev/shm/fx/" + c.Fixture + "/. /workspace/"
				}
				if !bash(fmt.Sprintf("call %d: fixture %s", i, c.Fixture), script) {
					sb = nil
					continue
				}
			}
			// The calls since the last fresh fixture changed nothing (not Dirty), so a fresh
			// fixture is the same workspace they saw: a restart can begin at any call.
			got, ok := call(fmt.Sprintf("call %d %s", i, c.Tool), c.Tool, c.Args)
			if !ok {
				sb, fresh = nil, true
				continue
			}
			fresh = false
			k++
			want, side := c.Reference, "reference"
			if c.Departure != "" {
				want, side = *c.Frognano, "frognano ("+c.Departure+")"
			}
			if !want.matches(got) {
				t.Errorf("call %d %s %.120q (fixture %s):\n %s: %q\n executor: %q", i, c.Tool, c.Args, c.Fixture, side, clip(want.String()), clip(got))
				continue
			}
			mu.Lock()
			switch {
			case c.Departure != "":
				departed++
			case c.Reference.ToolError != nil:
				ended++
			default:
				identical++
			}
			mu.Unlock()
		}
	}
	for _, name := range slices.Sorted(maps.Keys(lanes)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, sh := range lanes[name] {
				t.Run(sh.name, func(t *testing.T) { runShard(t, sh) })
			}
		})
	}
}

// scriptOnlyFixtures are rebuilt by their script for each fresh start; the others are
// copied from a template in /dev/shm (a folder no call of the corpus looks at), which gives
// the same tree faster.
var scriptOnlyFixtures = map[string]bool{"perm": true, "longpath": true}

// freshFixture reports whether the k-th call of idx starts from a fresh fixture: the fixture
// changes, or the call before it may have changed the workspace. The recording followed the
// same rule, so both sides saw the same workspace.
func freshFixture(cp corpus, idx []int, k int) bool {
	prev, cur := cp.Cases[idx[k-1]], cp.Cases[idx[k]]
	return prev.Dirty || prev.Fixture != cur.Fixture
}

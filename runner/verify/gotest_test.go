package verify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes path -> content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runShell runs a Plan's shell command in dir the way the sandbox does (bash -c) and
// returns standard output (what a -json reader needs) and the exit code.
func runShell(t *testing.T, dir, shell string, env ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", shell)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out, 0
	case errors.As(err, &exit):
		return out, exit.ExitCode()
	}
	t.Fatalf("running %q: %v\n%s", shell, err, stderr.String())
	return nil, 0
}

// goEnv isolates the go tool from the surrounding module and the network.
var goEnv = []string{"GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off", "CGO_ENABLED=0"}

// tinyModule has passing, failing, skipped, sub- and crashing tests, and a package
// that does not build.
var tinyModule = map[string]string{
	"go.mod": "module example.com/tiny\n\ngo 1.22\n",
	"ok/ok_test.go": `package ok

import "testing"

func TestPass(t *testing.T) { t.Log("quiet when passing") }
func TestFail(t *testing.T) { t.Fatal("boom: wanted 3") }
func TestSkip(t *testing.T) { t.Skip("not today") }
func TestSub(t *testing.T) {
	t.Run("a", func(t *testing.T) {})
	t.Run("b", func(t *testing.T) { t.Error("sub b broke") })
}
`,
	"broken/broken.go":      "package broken\n\nfunc F() int { return 1 }\n",
	"broken/broken_test.go": "package broken\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { var s string = F(); _ = s }\n",
	"crash/crash_test.go": `package crash

import "testing"

func TestBefore(t *testing.T) {}
func TestPanic(t *testing.T) { var m map[string]int; m["x"] = 1 }
func TestNeverRuns(t *testing.T) {}
`,
	"notests/x.go": "package notests\n\nconst X = 1\n",
}

func TestReadGoTestReal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("this test needs the go tool: %v", err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, tinyModule)
	plan := PlanFor(CmdGo)
	out, code := runShell(t, dir, plan.Shell, goEnv...)
	if code == 0 {
		t.Fatalf("go test passed on a module with failures:\n%s", out)
	}
	o := Read(plan, code, out, nil)

	want := map[string]Status{
		"example.com/tiny/ok.TestPass":      Pass,
		"example.com/tiny/ok.TestFail":      Fail,
		"example.com/tiny/ok.TestSkip":      Skip,
		"example.com/tiny/ok.TestSub":       Fail,
		"example.com/tiny/ok.TestSub/a":     Pass,
		"example.com/tiny/ok.TestSub/b":     Fail,
		"example.com/tiny/broken":           Fail,
		"example.com/tiny/crash.TestBefore": Pass,
		"example.com/tiny/crash.TestPanic":  Fail,
	}
	if fmt.Sprint(o.Tests) != fmt.Sprint(want) {
		t.Errorf("Tests:\n got %v\nwant %v\noutput:\n%s", o.Tests, want, out)
	}
	if o.Command != CmdGo || o.ExitCode != code || !o.Failed() {
		t.Errorf("outcome header: %+v", o)
	}
	for _, s := range []string{"boom: wanted 3", "sub b broke", "--- FAIL: TestFail", "cannot use F()",
		"panic: assignment to entry in nil map", "FAIL\texample.com/tiny/ok"} {
		if !strings.Contains(o.Tail, s) {
			t.Errorf("tail lacks %q:\n%s", s, o.Tail)
		}
	}
	for _, s := range []string{"quiet when passing", "=== RUN   TestPass", `"Action"`} {
		if strings.Contains(o.Tail, s) {
			t.Errorf("tail shows %q, which plain go test hides:\n%s", s, o.Tail)
		}
	}
}

// TestCompareGoTestReal runs the real go tool before and after a "fix" and compares.
func TestCompareGoTestReal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, tinyModule)
	plan := PlanFor("go test ./ok/... ./broken/...")
	out, code := runShell(t, dir, plan.Shell, goEnv...)
	before := Read(plan, code, out, nil)

	writeFiles(t, dir, map[string]string{
		"broken/broken_test.go": "package broken\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { if F() != 1 { t.Fatal() } }\n",
		"ok/ok_test.go": `package ok

import "testing"

func TestPass(t *testing.T) { t.Fatal("now broken") }
func TestFail(t *testing.T) {}
func TestNew(t *testing.T) {}
func TestSub(t *testing.T) {
	t.Run("a", func(t *testing.T) {})
	t.Run("b", func(t *testing.T) { t.Error("sub b broke") })
}
`,
	})
	out, code = runShell(t, dir, plan.Shell, goEnv...)
	after := Read(plan, code, out, nil)

	got := Compare(before, after)
	want := Comparison{
		Fixed:        []string{"example.com/tiny/broken", "example.com/tiny/ok.TestFail"},
		Broken:       []string{"example.com/tiny/ok.TestPass"},
		StillFailing: []string{"example.com/tiny/ok.TestSub", "example.com/tiny/ok.TestSub/b"},
		New:          []string{"example.com/tiny/broken.TestF", "example.com/tiny/ok.TestNew"},
		Removed:      []string{"example.com/tiny/ok.TestSkip"},
		BeforeFailed: 4, AfterFailed: 3, AfterPassed: 4,
		PerTest: true,
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("Compare:\n got %+v\nwant %+v\nbefore %v\nafter %v", got, want, before.Tests, after.Tests)
	}
}

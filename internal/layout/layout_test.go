package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/frognano/frognano"

// pkg is what `go list -json` says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// list runs go list over the whole module (test files excluded: a test may reach across).
func list(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list's answer: %v", err)
		}
		pkgs[rel(p.ImportPath)] = p
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list named %d packages of the module; expected the whole module", len(pkgs))
	}
	return pkgs
}

// rel is a package path relative to the module ("runner/leaf"); "" for a path outside it.
func rel(path string) string {
	if path == module {
		return "."
	}
	if r, ok := strings.CutPrefix(path, module+"/"); ok {
		return r
	}
	return ""
}

// under reports whether p is folder or a package below it.
func under(p, folder string) bool { return p == folder || strings.HasPrefix(p, folder+"/") }

// chain finds how from reaches to through the module's imports, for the failure message.
func chain(pkgs map[string]pkg, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var path []string
			for p := cur; p != ""; p = prev[p] {
				path = append([]string{p}, path...)
			}
			return path
		}
		for _, imp := range pkgs[cur].Imports {
			r := rel(imp)
			if r == "" {
				continue
			}
			if _, seen := prev[r]; !seen {
				prev[r] = cur
				queue = append(queue, r)
			}
		}
	}
	return []string{from, "…", to}
}

// TestTrustBoundaryImports checks that no package reaches, directly or through others, a
// package its side must never import.
func TestTrustBoundaryImports(t *testing.T) {
	t.Parallel()
	pkgs := list(t)
	rules := []struct {
		from   string   // a folder: every package in it
		never  []string // folders none of them may reach
		reason string
	}{
		{"githubapp", []string{"runner"},
			"githubapp holds the GitHub credentials; the code beside the sandbox is not its to import (the check packages are)"},
		{"runner", []string{"githubapp", "queue", "run", "server", "web"},
			"runner runs beside the untrusted sandbox and must never reach the code that holds credentials"},
		{"runner", []string{"report"},
			"runner (runner/audit too) makes a run's Result, facts only; the text people read of it is report's, which imports runner"},
		{"check", []string{"runner", "report", "githubapp", "queue", "run", "server", "web", "eval", "doctor", "dockerproxy", "cmd"},
			"the check packages judge untrusted output for both sides and import neither"},
		{"report", []string{"githubapp", "queue", "run", "server", "web", "eval", "doctor", "dockerproxy", "cmd"},
			"report only renders a run's Result: it holds no credential and sends nothing; its callers (run, cmd/frognano) redact and send"},
		{"export", []string{"run", "queue", "server", "web", "api", "eval"},
			"export only reads the runs' tables and writes two files: it starts nothing, writes no table and serves nobody"},
		{"run", []string{"queue", "server", "web"},
			"run never imports River nor its callers; and the queue's tests import run/runtest, which must not reach the queue"},
	}
	var problems []string
	for name, p := range pkgs {
		for _, r := range rules {
			if !under(name, r.from) {
				continue
			}
			for _, dep := range p.Deps {
				d := rel(dep)
				for _, n := range r.never {
					if d != "" && under(d, n) {
						problems = append(problems, name+" reaches "+d+" ("+strings.Join(chain(pkgs, name, d), " -> ")+"): "+r.reason)
					}
				}
			}
		}
	}
	// Package config imports both sides to build their configurations; only the commands
	// (cmd/) may import it, so that no side reaches the other through it.
	for name, p := range pkgs {
		if under(name, "cmd") || under(name, "config") {
			continue
		}
		for _, dep := range p.Deps {
			if d := rel(dep); d != "" && under(d, "config") {
				problems = append(problems, name+" reaches "+d+" ("+strings.Join(chain(pkgs, name, d), " -> ")+"): only cmd/ imports package config, which imports both sides of the trust boundary")
			}
		}
	}
	// run/runtest is a test harness: no program of the module may depend on it.
	for name, p := range pkgs {
		if under(name, "run/runtest") {
			continue
		}
		for _, dep := range p.Deps {
			if d := rel(dep); d != "" && under(d, "run/runtest") {
				problems = append(problems, name+" reaches "+d+" ("+strings.Join(chain(pkgs, name, d), " -> ")+"): run/runtest is for tests only")
			}
		}
	}
	// The check packages hold no Docker client either: they never start or reach a sandbox.
	for name, p := range pkgs {
		if !under(name, "check") {
			continue
		}
		for _, dep := range p.Deps {
			if strings.HasPrefix(dep, "github.com/docker/docker/") {
				problems = append(problems, name+" reaches "+dep+": the check packages never reach a sandbox or the engine")
				break
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// TestRulesSeeTheirPackages guards the test itself: each side it names has packages, so a
// folder renamed away cannot make the rules above vacuous.
func TestRulesSeeTheirPackages(t *testing.T) {
	t.Parallel()
	pkgs := list(t)
	for _, folder := range []string{"githubapp", "runner", "runner/audit", "report", "check", "check/patch", "check/secrets", "check/deps", "check/scanner", "config", "cmd/frognano", "run", "run/runtest"} {
		if _, ok := pkgs[folder]; !ok && folder != "check" {
			t.Errorf("no package %s in the module: update the layout rules", folder)
		}
		n := 0
		for name := range pkgs {
			if under(name, folder) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no package under %s: update the layout rules", folder)
		}
	}
}

package verify

import (
	"bytes"
	"encoding/json"
	"strings"
)

// goEvent is one line of `go test -json` (cmd/test2json).
type goEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
	// A package whose build failed gets build-output events (keyed by ImportPath,
	// not Package) and then an ordinary package "fail" event.
}

// readGoJSON reconstructs the text a plain `go test` would have shown and the per-test
// results. Like plain `go test`, the text keeps the output of failing tests and of
// packages and hides the output of tests that passed or were skipped. Lines that are
// not JSON events (for example standard error merged in) are kept as text.
//
// Keys are "IMPORTPATH.TestName" (subtests "IMPORTPATH.TestName/sub"). A package that
// failed without any failing test (a build error, a failing TestMain, a crash between
// tests) is recorded as a failing key "IMPORTPATH". A test that started but never
// finished in a run that exited non-zero (a panic or a timeout) is a fail. Tests is nil
// when no event was found at all.
func readGoJSON(output []byte, exitCode int) (text []byte, tests map[string]Status) {
	var out bytes.Buffer
	tests = map[string]Status{}
	events := 0
	pkgFailed := map[string]bool{}
	pkgTestFailed := map[string]bool{}
	running := map[string]string{} // test key -> package
	// held is the output of each running top-level test, shown only if it fails.
	held := map[string]*bytes.Buffer{}
	var heldOrder []string

	for len(output) > 0 {
		var line []byte
		if i := bytes.IndexByte(output, '\n'); i >= 0 {
			line, output = output[:i+1], output[i+1:]
		} else {
			line, output = output, nil
		}
		var ev goEvent
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &ev) != nil || ev.Action == "" {
			out.Write(line)
			continue
		}
		events++
		key := ev.Test
		if ev.Package != "" && key != "" {
			key = ev.Package + "." + ev.Test
		}
		top := ev.Package + "." + strings.SplitN(ev.Test, "/", 2)[0]
		switch ev.Action {
		case "output", "build-output":
			if ev.Test == "" {
				out.WriteString(ev.Output)
				continue
			}
			b := held[top]
			if b == nil {
				b = &bytes.Buffer{}
				held[top] = b
				heldOrder = append(heldOrder, top)
			}
			b.WriteString(ev.Output)
		case "run":
			if ev.Test != "" {
				running[key] = ev.Package
			}
		case "pass", "skip", "fail":
			if ev.Test == "" {
				if ev.Action == "fail" {
					pkgFailed[ev.Package] = true
				}
				continue
			}
			delete(running, key)
			st := Status(ev.Action)
			record(tests, key, st)
			if st == Fail {
				pkgTestFailed[ev.Package] = true
			}
			if key == top {
				// A finished top-level test: show its output only if it failed.
				if b := held[top]; b != nil {
					if st == Fail {
						out.Write(b.Bytes())
					}
					delete(held, top)
				}
			}
		}
	}
	if events == 0 {
		return out.Bytes(), nil
	}
	// Whatever was still running when the output ended is what crashed: show it.
	for _, top := range heldOrder {
		if b := held[top]; b != nil {
			out.Write(b.Bytes())
		}
	}
	if exitCode != 0 {
		for key, pkg := range running {
			record(tests, key, Fail)
			pkgTestFailed[pkg] = true
		}
	}
	for pkg := range pkgFailed {
		if pkg != "" && !pkgTestFailed[pkg] {
			record(tests, pkg, Fail)
		}
	}
	return out.Bytes(), tests
}

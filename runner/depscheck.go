package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/frognano/frognano/check/deps"
	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/runner/sandbox"
)

// listDependencies lists what the checked patch p does to the repository's dependencies
// and to where they come from (check/deps, from git's objects of the host's clone, never the
// sandbox's files) and, with FROGNANO_OSV_DIR, matches the new versions against OSV's offline
// exports. It never refuses the patch: what it finds is for the reviewer
// (Result.Dependencies), and a failure is a note.
func (x *run) listDependencies(ctx context.Context, p *patch.Checked) {
	if p == nil || p.TooLarge || len(p.Diff) == 0 {
		return
	}
	git := patch.HostGit(x.spec.RepoDir)
	if reads, err := deps.Reads(ctx, git, x.base, patchPaths(p)); err == nil && !reads {
		return // no manifest, and no file a manifest of the base includes
	}
	rep, err := deps.List(ctx, git, x.base, p.Diff)
	if err != nil {
		x.note("The patch's dependency changes could not be listed: " + err.Error())
		return
	}
	if len(rep.Files) == 0 {
		return
	}
	if dir := x.r.cfg.OSVDir; dir != "" && len(rep.Changes) > 0 {
		deps.OSV{Dir: dir}.Check(ctx, rep)
	}
	x.res.Dependencies = rep
}

// patchPaths are the paths the checked patch changes (its own file list names every path git
// will change), for deps.Reads, which spares a patch that touches no dependency file the
// throwaway index.
func patchPaths(p *patch.Checked) []string {
	var out []string
	for _, f := range p.Files {
		for _, q := range []string{f.OldPath, f.NewPath, f.Path()} {
			if q != "" {
				out = append(out, q)
			}
		}
	}
	return out
}

// installCheckTimeout bounds each command of the install check.
const installCheckTimeout = time.Minute

// checkInstalled says, for each version the patch adds, whether the environment the tests ran
// in has it. The sandbox is offline and its environment image was built from the base commit,
// so a package the patch adds was most likely not there when the tests after ran; where that
// can be checked honestly and cheaply it is, in a fresh sandbox made from the same image with
// the same lock-down as the test runs (no repository copy: nothing of the patch or the model
// reaches it), and the answer is only ever used to say "installed" or "missing":
//
//   - PyPI: the image's python3 in isolated mode (-I: no current directory, user site or
//     PYTHON* variables on its path) asks importlib.metadata for each distribution's version;
//     found at the version the patch names (compared with SCALIBR's PyPI version semantics)
//     is Installed, absent or another version is Missing.
//   - Go: `go mod download -json` with GOPROXY=off answers from the module cache alone.
//
// npm and Cargo are not checked (their packages live in the repository's node_modules or
// target directory, which the patch controls): the report says conservatively that the
// offline sandbox could not install them. A sandbox that cannot be made, or a check that
// fails, leaves the changes Unchecked with a note.
func (x *run) checkInstalled(ctx context.Context) {
	rep := x.res.Dependencies
	if rep == nil || x.res.TestsAfter == nil {
		return
	}
	var py, gomods []*deps.Change
	for i := range rep.Changes {
		c := &rep.Changes[i]
		if !installable(*c) || len(c.New) != 1 || c.New[0].Version == "" {
			continue
		}
		switch c.Ecosystem {
		case "PyPI":
			if pyNameRE(c.Name) {
				py = append(py, c)
			}
		case "Go":
			v := "v" + c.New[0].Version
			if !c.Toolchain() && module.Check(c.Name, v) == nil && semver.IsValid(v) {
				gomods = append(gomods, c)
			}
		}
	}
	if len(py) == 0 && len(gomods) == 0 {
		return
	}
	sb, err := sandbox.New(ctx, x.r.docker, x.sbCfg, x.spec.RunID, "deps-check")
	if err != nil {
		x.note("Whether the patch's new dependencies were installed could not be checked: " + err.Error())
		return
	}
	defer sb.Close()
	if len(py) > 0 {
		if err := checkPython(ctx, sb, py); err != nil {
			x.note("Whether the patch's new Python dependencies were installed could not be checked: " + err.Error())
		}
	}
	if len(gomods) > 0 {
		if err := checkGo(ctx, sb, gomods); err != nil {
			x.note("Whether the patch's new Go modules were in the module cache could not be checked: " + err.Error())
		}
	}
}

// pyNameRE accepts the distribution names pip accepts (PEP 508), so nothing else is passed on.
func pyNameRE(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i, r := range s {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || i == len(s)-1 || !strings.ContainsRune("._-", r)) {
			return false
		}
	}
	return true
}

// pyInstalled prints, as JSON, the installed version of each distribution named on its
// command line (null when absent).
const pyInstalled = `import sys, json, importlib.metadata as m
out = {}
for name in sys.argv[1:]:
    try:
        out[name] = m.version(name)
    except Exception:
        out[name] = None
print(json.dumps(out))`

func checkPython(ctx context.Context, sb *sandbox.Sandbox, cs []*deps.Change) error {
	argv := []string{"/bin/bash", "-lc", `exec python3 -I -c "$0" "$@"`, pyInstalled}
	for _, c := range cs {
		argv = append(argv, c.Name)
	}
	res, err := sb.Exec(ctx, argv, nil, installCheckTimeout, 1<<20)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 || res.Truncated {
		return fmt.Errorf("python3 exited %d", res.ExitCode)
	}
	var found map[string]*string
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &found); err != nil {
		return fmt.Errorf("reading python3's answer: %w", err)
	}
	for _, c := range cs {
		v := found[c.Name]
		if v == nil {
			c.Install = deps.Missing
			continue
		}
		c.Found = *v
		c.Install = deps.Missing
		if deps.SameVersion(c.New[0], *v) {
			c.Install = deps.Installed
		}
	}
	return nil
}

func checkGo(ctx context.Context, sb *sandbox.Sandbox, cs []*deps.Change) error {
	argv := []string{"/bin/bash", "-lc",
		`cd / && GOPROXY=off GOSUMDB=off GOFLAGS= GOTOOLCHAIN=local GOWORK=off exec go mod download -json -- "$@"`, "go"}
	for _, c := range cs {
		argv = append(argv, c.Name+"@v"+c.New[0].Version)
	}
	res, err := sb.Exec(ctx, argv, nil, installCheckTimeout, 1<<20)
	if err != nil {
		return err
	}
	if res.Truncated || res.ExitCode == 127 {
		return fmt.Errorf("go exited %d", res.ExitCode)
	}
	// go mod download exits 1 when a module is missing and still writes each module's
	// answer, Error set for the missing ones.
	got := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(res.Stdout))
	for {
		var m struct{ Path, Version, Error string }
		if err := dec.Decode(&m); err != nil {
			break
		}
		got[m.Path+"@"+m.Version] = m.Error == ""
	}
	if len(got) == 0 {
		return fmt.Errorf("go mod download answered nothing (exit %d)", res.ExitCode)
	}
	for _, c := range cs {
		if got[c.Name+"@v"+c.New[0].Version] {
			c.Install = deps.Installed
		} else {
			c.Install = deps.Missing
		}
	}
	return nil
}

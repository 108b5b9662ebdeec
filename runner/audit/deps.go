package audit

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

// Dependencies lists what the checked patch p does to the repository's dependencies and to
// where they come from (check/deps, from git's objects of the host's clone, never the sandbox's
// files) and, with osvDir (FROGNANO_OSV_DIR), matches the new versions against OSV's offline
// exports. It never refuses the patch: what it finds is for the reviewer
// (Result.Dependencies), and a failure is a note. nil when p touches no dependency file.
func (a *Auditor) Dependencies(ctx context.Context, p *patch.Checked, osvDir string) *deps.Report {
	if p == nil || p.TooLarge || len(p.Diff) == 0 {
		return nil
	}
	git := patch.HostGit(a.RepoDir)
	if reads, err := deps.Reads(ctx, git, a.Base, patchPaths(p)); err == nil && !reads {
		return nil // no manifest, and no file a manifest of the base includes
	}
	rep, err := deps.List(ctx, git, a.Base, p.Diff)
	if err != nil {
		a.Note("The patch's dependency changes could not be listed: " + err.Error())
		return nil
	}
	if len(rep.Files) == 0 {
		return nil
	}
	if osvDir != "" && len(rep.Changes) > 0 {
		deps.OSV{Dir: osvDir}.Check(ctx, rep)
	}
	return rep
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

// Installed says, for each version the patch adds, whether the environment the tests ran in
// has it, and records the answer in rep (the run's Result.Dependencies). The sandbox is
// offline and its environment image was built from the base commit, so a package the patch
// adds was most likely not there when the tests after ran; where that can be checked honestly
// and cheaply it is, in a fresh sandbox made from the same image with the same lock-down as
// the test runs (no repository copy: nothing of the patch or the model reaches it), and the
// answer is only ever used to say "installed" or "missing":
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
//
// The caller calls it only when the tests after ran: what the environment holds matters to
// nothing else.
func (a *Auditor) Installed(ctx context.Context, rep *deps.Report) {
	if rep == nil {
		return
	}
	var py, gomods []*deps.Change
	for i := range rep.Changes {
		c := &rep.Changes[i]
		if !Installable(*c) || len(c.New) != 1 || c.New[0].Version == "" {
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
	sb, err := sandbox.New(ctx, a.Docker, a.Sandbox, a.RunID, "deps-check")
	if err != nil {
		a.Note("Whether the patch's new dependencies were installed could not be checked: " + err.Error())
		return
	}
	defer sb.Close()
	if len(py) > 0 {
		if err := checkPython(ctx, sb, py); err != nil {
			a.Note("Whether the patch's new Python dependencies were installed could not be checked: " + err.Error())
		}
	}
	if len(gomods) > 0 {
		if err := checkGo(ctx, sb, gomods); err != nil {
			a.Note("Whether the patch's new Go modules were in the module cache could not be checked: " + err.Error())
		}
	}
}

// Installable reports whether c adds a registry version that an environment could hold: not
// a removal or a move, not a constraint, override or replace, not a URL, repository or path.
// Installed checks those (Python distributions and Go modules), and the report says of the
// rest of them that the tests after most likely ran without.
func Installable(c deps.Change) bool {
	if c.Kind == deps.Removed || c.Kind == deps.Unlisted || c.Kind == deps.Moved || c.Role != "" {
		return false
	}
	for _, p := range c.New {
		if p.Source.Kind != deps.Registry {
			return false
		}
	}
	return true
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

package report

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/deps"
	"github.com/frognano/frognano/check/deps/osvtest"
	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/runner"
)

// hostileDeps lists, with the real extractors on a real clone, a patch whose package-lock.json
// names packages and versions full of markup, invisible characters and a value the redactor
// knows, and checks them against an export whose record says the same kind of thing.
func hostileDeps(t *testing.T, osvDir string) *deps.Report {
	t.Helper()
	dir, base := gittest.Repo(t, map[string]string{"package-lock.json": `{"lockfileVersion": 3, "packages": {}}`})
	gittest.Write(t, dir, map[string]string{"package-lock.json": `{"lockfileVersion": 3, "packages": {
		"node_modules/<img src=x onerror=alert(1)>": {"version": "1.0.0"},
		"node_modules/evil\u202egnp": {"version": "2.0.0 @octocat closes #12"},
		"node_modules/leaky-SECRETVALUE": {"version": "3.0.0"},
		"node_modules/a|b": {"version": "<!-- x -->"}}}`})
	gittest.Git(t, dir, "add", "-A")
	diff, err := exec.Command("git", "-C", dir, "diff", "--cached", "--binary", base).Output()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := deps.List(context.Background(), patch.HostGit(dir), base, diff)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 4 {
		t.Fatalf("changes %+v, want the 4 packages", rep.Changes)
	}
	if osvDir != "" {
		deps.OSV{Dir: osvDir}.Check(context.Background(), rep)
	}
	return rep
}

func TestDependenciesRenderInert(t *testing.T) {
	t.Parallel()
	osvDir := osvtest.Export(t, t.TempDir(), osvtest.Vuln{
		ID: "FROG-<b>1</b>", Ecosystem: "npm", Package: "<img src=x onerror=alert(1)>", Introduced: "0", Fixed: "9.9.9 [link](javascript:x)",
		Aliases: []string{"@admin"}, Severity: "<script>alert(1)</script>",
		Summary: "*emph* https://evil.example <details open>x</details> SECRETVALUE \u200b",
	})
	res := &runner.Result{RunID: "r", Patch: &patch.Checked{Diff: []byte("x")}, Dependencies: hostileDeps(t, osvDir)}
	redact := func(s string) string { return strings.ReplaceAll(s, "SECRETVALUE", "[REDACTED]") }
	x := newRender(res, redact, 0)
	var b strings.Builder
	x.writeDepsWarning(&b)
	x.writeDependencies(&b)
	md := b.String()
	checkInert(t, md, 0)
	if strings.Contains(md, "SECRETVALUE") {
		t.Error("the section holds a value the redactor knows")
	}
	for _, want := range []string{"> [!CAUTION]", "`FROG-<b>1</b>`", "`<img src=x onerror=alert(1)>`"} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	for name, text := range map[string]string{
		"PR body": PRBody(res, Fit{Redact: redact}), "summary": Summary(res, Fit{Redact: redact}),
		"check run": Check(res, redact).Summary, "report": redact(Markdown(res)), "headline": redact(Headline(res)),
	} {
		if !strings.Contains(text, "known vulnerabilities") {
			t.Errorf("the %s does not show the known vulnerability", name)
		}
		if strings.Contains(text, "SECRETVALUE") {
			t.Errorf("the %s holds a value the redactor knows", name)
		}
		checkInert(t, text, strings.Count(text, "<details>\n<summary>"))
	}
}

// TestDependenciesWithoutVulnerabilityData: unset FROGNANO_OSV_DIR, the versions are only
// listed, the report says no vulnerability data was configured, and a new version that could
// not be checked is said to be most likely missing from the tests after.
func TestDependenciesWithoutVulnerabilityData(t *testing.T) {
	t.Parallel()
	res := &runner.Result{RunID: "r", Patch: &patch.Checked{Diff: []byte("x")}, Dependencies: hostileDeps(t, ""),
		TestCommand: "npm test", TestsAfter: &runner.TestRun{}}
	md := Markdown(res)
	for _, want := range []string{
		"No vulnerability data was configured (`FROGNANO_OSV_DIR`): the versions were not checked for known vulnerabilities.",
		"most likely not (see below)", "The tests after most likely ran without it.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if h := Headline(res); !strings.Contains(h, "New dependency versions the tests after most likely ran without (added after their environment was built; not checked): ") {
		t.Errorf("headline %q", h)
	}
	res.TestsAfter, res.TestCommand = nil, ""
	if md := Markdown(res); !strings.Contains(md, "| no tests ran with the patch |") || strings.Contains(md, "most likely") {
		t.Errorf("without tests after, the report still speaks of them:\n%s", md)
	}
	if strings.Contains(md, "[!CAUTION]") || strings.Contains(md, "none known") {
		t.Error("the report claims a vulnerability check that was not made")
	}
	if c := Check(res, nil); strings.Contains(c.Title, "vulnerab") {
		t.Errorf("check run title %q", c.Title)
	}
}

// TestDependenciesAreCapped: a lock file of thousands of new packages, every one with a known
// vulnerability, still fits each text GitHub takes.
func TestDependenciesAreCapped(t *testing.T) {
	t.Parallel()
	rep := &deps.Report{Files: []string{"package-lock.json"}, VulnData: true, VulnChecked: []string{"npm"}}
	for i := range 5000 {
		p := deps.Package{Ecosystem: "npm", Name: fmt.Sprintf("pkg-%d-%s", i, strings.Repeat("n", 150)), Version: "1.0.0"}
		v := deps.Vuln{ID: fmt.Sprintf("FROG-%d", i), Version: "1.0.0", Summary: strings.Repeat("s", 2000), Fixed: []string{"1", "2", "3", "4"}}
		rep.Changes = append(rep.Changes, deps.Change{File: "package-lock.json", Ecosystem: "npm", Name: p.Name, Kind: deps.Added,
			New: []deps.Package{p}, Vulns: []deps.Vuln{v, v}})
		rep.Notes = append(rep.Notes, strings.Repeat("note ", 200))
	}
	res := &runner.Result{RunID: "r", Patch: &patch.Checked{Diff: []byte("x")}, Dependencies: rep}
	if n := runeLen(PRBody(res, Fit{})); n > GitHubBodyLimit {
		t.Errorf("PR body of %d characters", n)
	}
	if n := runeLen(Summary(res, Fit{})); n > GitHubBodyLimit {
		t.Errorf("summary of %d characters", n)
	}
	c := Check(res, nil)
	if n := runeLen(c.Summary); n > checkOutputLimit || !strings.Contains(c.Summary, "and 9980 more (listed under Dependencies)") {
		t.Errorf("check run summary of %d characters, or without the count of what it left out", n)
	}
	if h := Headline(res); runeLen(h) > 3000 {
		t.Errorf("headline of %d characters", runeLen(h))
	}
}

// sourcesDeps lists, with the real readers on a real clone, a patch that does each thing the
// listing follows: a new extra index (with credentials in its URL), a requirement moved into
// an included file and turned into a git URL, a git dependency and an alias in package.json,
// a Go replace by a folder, and entries that cannot be read (an include out of the
// repository, an environment variable, a computed setup.py).
func sourcesDeps(t *testing.T) *deps.Report {
	t.Helper()
	mod := "module example.com/m\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.7\n"
	dir, base := gittest.Repo(t, map[string]string{
		"requirements.txt": "requests==2.31.0\nflask==2.0.0\n",
		"package.json":     `{"name": "web", "dependencies": {"lodash": "^4.17.21", "left-pad": "^1.3.0"}}`,
		"go.mod":           mod,
		"setup.py":         "from setuptools import setup\nsetup(name='a', install_requires=['six==1.16.0'])\n",
	})
	gittest.Write(t, dir, map[string]string{
		"requirements.txt": "--extra-index-url https://deploy:SECRETVALUE@pkgs.example/simple\n-r deps/common.in\n-r ../../etc/passwd\nflask==${FLASK}\n",
		"deps/common.in":   "requests @ git+https://git.example/requests.git@main\n",
		"package.json": `{"name": "web", "dependencies": {"lodash": "^4.17.21", "left-pad": "npm:lefty-pad@^1.3.0",
			"<b>x</b>": "github:evil/x#main"}}`,
		"go.mod":   mod + "replace golang.org/x/text => ./third_party/text\n",
		"setup.py": "from setuptools import setup\nREQS = ['six==1.16.0']\nREQS.append('evil')\nsetup(name='a', install_requires=REQS)\n",
	})
	gittest.Git(t, dir, "add", "-A")
	diff, err := exec.Command("git", "-C", dir, "diff", "--cached", "--binary", base).Output()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := deps.List(context.Background(), patch.HostGit(dir), base, diff)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestDependencySourcesRender: what the patch changes about where dependencies come from is a
// warning at the top of the report, the PR body and the check run, worded plainly, with
// every name, path and URL an inert code span; the Dependencies section lists the entries with
// their sources, the settings and what could not be read (golden).
func TestDependencySourcesRender(t *testing.T) {
	t.Parallel()
	res := &runner.Result{RunID: "r", Patch: &patch.Checked{Diff: []byte("x")}, Dependencies: sourcesDeps(t),
		TestCommand: "pytest", TestsAfter: &runner.TestRun{}}
	redact := func(s string) string { return strings.ReplaceAll(s, "SECRETVALUE", "[REDACTED]") }
	x := newRender(res, redact, 0)
	var b strings.Builder
	x.writeDepsWarning(&b)
	x.writeDependencies(&b)
	md := b.String()
	checkInert(t, md, 0)
	golden.Check(t, "runner-deps-sources.md", md)
	golden.Check(t, "runner-deps-sources.html", githubtest.ShowAsGitHub(md))
	for _, want := range []string{
		"> **The patch changes where dependencies come from** (5).",
		"> - `requirements.txt` sets `--extra-index-url` `https://[REDACTED]@pkgs.example/simple`: it adds a package index",
		"> - `requests` in `deps/common.in`: now from the repository `git+https://git.example/requests.git@main`; it was `2.31.0` from its registry.",
		"> - `golang.org/x/text` (replace) in `go.mod`: new, from the local path `./third_party/text`.",
		"> - `left-pad` in `package.json`: now `^1.3.0` from the package `lefty-pad`; it was `^1.3.0` from its registry.",
		"| `flask` | PyPI | `requirements.txt` | no longer found: `2.0.0` (these files hold what frognano could not read, listed below) |",
		"- `requirements.txt` line 3 `--requirement ../../etc/passwd`: it names a file outside the repository, which frognano does not read.",
		"- `setup.py` line 4 `install_requires=REQS`: it is computed when setup.py runs",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "SECRETVALUE") || strings.Contains(md, "deploy:") {
		t.Error("the section holds the index URL's credentials")
	}
	for name, text := range map[string]string{
		"PR body": PRBody(res, Fit{Redact: redact}), "check run": Check(res, redact).Summary, "report": redact(Markdown(res)),
	} {
		i := strings.Index(text, "**The patch changes where dependencies come from**")
		if i < 0 || i > strings.Index(text, "## ") {
			t.Errorf("the %s does not open with the warning about sources", name)
		}
	}
	if h := Headline(res); !strings.Contains(h, "**The patch changes where dependencies come from:** a new `--extra-index-url` in `requirements.txt`; ") {
		t.Errorf("headline %q", h)
	}
	if c := Check(res, redact); !strings.HasSuffix(c.Title, " Where dependencies come from changes (5).") || c.Conclusion == CheckFailure {
		t.Errorf("check run %q %q", c.Conclusion, c.Title)
	}
}

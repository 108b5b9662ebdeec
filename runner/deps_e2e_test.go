package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/deps"
	"github.com/frognano/frognano/check/deps/osvtest"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// TestRunListsDependencyChanges runs a scripted model whose patch fixes pyaverage, upgrades
// attrs to a version with a (made-up) known vulnerability in a small OSV export the test
// writes, and adds urllib3, which the offline sandbox could not install. The report, PR body,
// check run and headline show it: the vulnerability at the top, the Dependencies section with
// what the environment had (attrs 22.2.0 is in the default sandbox image; urllib3 is not).
func TestRunListsDependencyChanges(t *testing.T) {
	t.Parallel()
	osvDir := osvtest.Export(t, t.TempDir(),
		osvtest.Vuln{ID: "FROG-2026-0001", Ecosystem: "PyPI", Package: "attrs", Introduced: "22.0.0", Fixed: "22.2.1",
			Aliases: []string{"CVE-2099-12345"}, Severity: "HIGH", CVSS: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N",
			Summary: "A vulnerability invented for frognano's tests"},
		osvtest.Vuln{ID: "FROG-2026-0002", Ecosystem: "PyPI", Package: "urllib3", Introduced: "0", Fixed: "1.26.0"},
	)
	b := setupWith(t, "pyaverage", leaftest.LoadModel(t, "e2e-deps.json"), sandbox.DefaultImage,
		func(c *runner.Config) { c.OSVDir = osvDir })
	dir := b.spec.RepoDir
	if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("attrs==21.4.0\npytest==7.2.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, "add", "-A")
	gittest.In(t, dir)("commit", "-q", "-m", "requirements")

	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ExitReason(); got != leaf.ExitAgent {
		t.Fatalf("exit reason %q, want agent (error %q)", got, res.Leaf.Error)
	}
	if res.TestsAfter == nil || res.TestsAfter.ExitCode != 0 {
		t.Fatalf("tests after should pass: %+v", res.TestsAfter)
	}
	d := res.Dependencies
	if d == nil {
		t.Fatalf("no dependencies listed; notes %q", res.Notes)
	}
	type row struct {
		kind, old, new string
		vulns          int
		install        deps.Install
		found          string
	}
	got := map[string]row{}
	for _, c := range d.Changes {
		r := row{kind: c.Kind, vulns: len(c.Vulns), install: c.Install, found: c.Found}
		for _, p := range c.Old {
			r.old += p.Display()
		}
		for _, p := range c.New {
			r.new += p.Display()
		}
		got[c.Name] = r
	}
	want := map[string]row{
		"attrs":   {kind: deps.Changed, old: "21.4.0", new: "22.2.0", vulns: 1, install: deps.Installed, found: "22.2.0"},
		"urllib3": {kind: deps.Added, new: "1.26.4", install: deps.Missing},
	}
	if len(got) != len(want) || got["attrs"] != want["attrs"] || got["urllib3"] != want["urllib3"] {
		t.Errorf("changes %+v, want %+v (notes %q, %q)", got, want, d.Notes, res.Notes)
	}

	md := report.Markdown(res)
	body := report.PRBody(res, report.Fit{})
	check := report.Check(res, nil)
	headline := report.Headline(res)
	caution := "**The patch adds dependency versions with known vulnerabilities** (1, in OSV's offline data)"
	for name, text := range map[string]string{"report": md, "PR body": body, "check run summary": check.Summary} {
		i := strings.Index(text, caution)
		if i < 0 || i > strings.Index(text, "## ") {
			t.Errorf("the %s does not open with the vulnerability warning:\n%s", name, text)
		}
		for _, w := range []string{"`attrs` `22.2.0`: `FROG-2026-0001` (`CVE-2099-12345`), severity `HIGH; CVSS 3.1 7.5`, fixed in `22.2.1`",
			"## Dependencies", "| `urllib3` | PyPI | `requirements.txt` | added `1.26.4` | none known | **no**: the tests after ran without it |",
			"Checked for known vulnerabilities against OSV's offline exports (`FROGNANO_OSV_DIR`): PyPI."} {
			if !strings.Contains(text, w) {
				t.Errorf("the %s lacks %q", name, w)
			}
		}
	}
	if check.Conclusion != report.CheckSuccess || !strings.HasSuffix(check.Title, " Known vulnerabilities in 1 new dependency version(s).") {
		t.Errorf("check run %q %q: want success, the title naming the vulnerability", check.Conclusion, check.Title)
	}
	for _, w := range []string{"**The patch adds dependency versions with known vulnerabilities:** `attrs` `22.2.0` (`FROG-2026-0001`).",
		"New dependency versions the tests after ran without (not in their environment; the offline sandbox could not install them): `urllib3` `1.26.4`."} {
		if !strings.Contains(headline, w) {
			t.Errorf("headline lacks %q:\n%s", w, headline)
		}
	}
	section := sectionOf(t, md, "## Dependencies")
	golden.Check(t, "runner-deps-section.md", section)
	golden.Check(t, "runner-deps-section.html", githubtest.ShowAsGitHub(section))
	if ids := containersOf(t, b.spec.RunID); len(ids) != 0 {
		t.Errorf("containers left behind: %v", ids)
	}
}

// sectionOf returns the markdown from heading to the next heading of its level.
func sectionOf(t *testing.T, md, heading string) string {
	t.Helper()
	i := strings.Index(md, heading+"\n")
	if i < 0 {
		t.Fatalf("no %q in:\n%s", heading, md)
	}
	rest := md[i+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j+1]
	}
	return heading + rest
}

// checkGoModulesInTheEnvironment is the second run of TestRunGoEnvironment: in the environment
// gocmp's setup built (go-cmp v0.7.0 downloaded into its module cache from the test's own
// module server), a patch that adds golang.org/x/text, which the offline sandbox could not
// download, and a module requiring go-cmp v0.7.0: the check in a fresh sandbox of that
// environment finds go-cmp in the cache and not x/text, and the report says the tests after
// ran without it.
func checkGoModulesInTheEnvironment(t *testing.T, res *runner.Result) {
	t.Helper()
	d := res.Dependencies
	if d == nil {
		t.Fatalf("no dependencies listed; notes %q", res.Notes)
	}
	got := map[string]deps.Install{}
	for _, c := range d.Changes {
		got[c.File+" "+c.Name+" "+c.Kind] = c.Install
	}
	want := map[string]deps.Install{
		"go.mod golang.org/x/text added":              deps.Missing,
		"tools/go.mod github.com/google/go-cmp added": deps.Installed,
		"tools/go.mod stdlib added":                   deps.Unchecked,
	}
	if len(got) != len(want) {
		t.Errorf("changes %v, want %v (notes %q, %q)", got, want, d.Notes, res.Notes)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q (notes %q)", k, got[k], w, res.Notes)
		}
	}
	md := report.Markdown(res)
	for _, w := range []string{
		"| `golang.org/x/text` | Go | `go.mod` | added `0.3.7` |  | **no**: the tests after ran without it |",
		"| `github.com/google/go-cmp` | Go | `tools/go.mod` | added `0.7.0` |  | yes |",
		"| `stdlib` | Go | `tools/go.mod` | added `1.21` |  | the image's Go toolchain (not installed by the patch) |",
		"No vulnerability data was configured (`FROGNANO_OSV_DIR`)",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("report lacks %q:\n%s", w, sectionOf(t, md, "## Dependencies"))
		}
	}
}

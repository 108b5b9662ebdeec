package report

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/egress"
	"github.com/frognano/frognano/runner/leaf"
)

func exitCode(n int) *int { return &n }

// offlineResult is a failed run whose model tried the network and ran commands the sandbox
// lacks, with names and commands as hostile as the model can make them: markup, mentions,
// backticks, pipes, an invisible character, and a secret of the redactor's in a name.
func offlineResult() *runner.Result {
	return &runner.Result{
		RunID: "run-offline", Model: "frognano-4b", BaseCommit: "abc123",
		Leaf: &leaf.Result{ExitReason: leaf.ExitAgent, FinalMessage: "I could not install the dependencies."},
		Egress: &egress.Report{
			Hosts: []egress.Host{
				{Name: "files.pkgs.invalid", Lookups: 6, Queries: 24},
				{Name: `\x3cimg\x3e|x.invalid`, Lookups: 1, Queries: 2},
				{Name: "ghs_redactme.exfil.invalid", Lookups: 1, Queries: 2},
			},
			HostsMore: 3, Lookups: 11, NoRoute: 2,
			Calls: []egress.Call{
				{Command: "pip install somepkg", ExitCode: exitCode(1), Lookups: 12, Hosts: []string{"files.pkgs.invalid"}, Tool: "pip"},
				{Command: "echo <details open>`x` @octocat | tee \u202e #12", ExitCode: exitCode(0), Lookups: 2, Hosts: []string{`\x3cimg\x3e|x.invalid`}},
				{Command: "npm install", ExitCode: exitCode(127), NotFound: "npm"},
				{Command: "python3 -c 'connect'", NoRoute: 2},
			},
			CallsMore: 1,
			Missing:   []egress.Missing{{Command: "npm", Toolchain: egress.Node, Calls: 1}},
			Advice: []egress.Advice{
				{Ecosystem: egress.Node, NotFound: "npm", Why: "was not found in the sandbox", Image: true, Setup: egress.Snippets[egress.Node]},
				{Ecosystem: egress.Python, Why: "pip tried to reach the network; the repository has requirements.txt", Setup: egress.Snippets[egress.Python], SetupExists: true},
			},
		},
	}
}

func redactTest(s string) string { return strings.ReplaceAll(s, "ghs_redactme", "[REDACTED]") }

// TestEgressGolden: the section in the status comment of a failed run (Summary) and the report,
// rendered with GitHub's Markdown: every name and command is inert code, the redactor ran over
// them, and the advice's snippets are docs/environments.md's.
func TestEgressGolden(t *testing.T) {
	t.Parallel()
	r := offlineResult()
	summary := Summary(r, Fit{Redact: redactTest})
	section := "## What the offline sandbox stopped" + strings.SplitN(strings.SplitN(summary, "## What the offline sandbox stopped", 2)[1], "\n## ", 2)[0]
	golden.Check(t, "runner-egress.md", section)
	golden.Check(t, "runner-egress.html", githubtest.ShowAsGitHub(section))
	checkInert(t, summary, 0)
	if strings.Contains(summary, "ghs_redactme") {
		t.Error("a name carried a secret past the redactor")
	}
	codes := strings.Join(githubtest.ElementTexts(githubtest.ShowAsGitHub(summary), "code"), "\x00")
	for _, w := range []string{"files.pkgs.invalid", `\x3cimg\x3e|x.invalid`, "echo <details open>`x` @octocat | tee <U+202E> #12", "npm", "FROGNANO_SANDBOX_IMAGES"} {
		if !strings.Contains(codes, w) {
			t.Errorf("no code element shows %q", w)
		}
	}
	for _, text := range []string{Markdown(r), PRBody(r, Fit{})} {
		if !strings.Contains(text, section[:200]) {
			t.Error("the report or the PR body lacks the section")
		}
	}
	// The least detailed level keeps the facts and points at the snippets.
	small := newRender(r, nil, len(details)-1)
	var b strings.Builder
	small.writeEgress(&b)
	if strings.Contains(b.String(), "```sh") || !strings.Contains(b.String(), "the example in docs/environments.md") {
		t.Errorf("least detailed section:\n%s", b.String())
	}
}

// TestNoEgressSectionForAnHonestRun: a run that tried no network and ran nothing missing has
// no such section anywhere.
func TestNoEgressSectionForAnHonestRun(t *testing.T) {
	t.Parallel()
	for _, e := range []*egress.Report{nil, {}} {
		r := offlineResult()
		r.Egress = e
		for _, text := range []string{Markdown(r), PRBody(r, Fit{}), Summary(r, Fit{})} {
			if strings.Contains(text, "offline sandbox stopped") {
				t.Errorf("an honest run's text has the section:\n%s", text)
			}
		}
	}
}

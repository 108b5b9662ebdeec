package runner_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/deps/osvtest"
	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/golden"
	"github.com/frognano/frognano/internal/secrettest"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// TestPatchChecksEndToEnd is issue 21's whole check in one run of a scripted model, with
// every part switched on as an operator would: FROGNANO_SECRETS=warn (so that a pull request
// exists to show), FROGNANO_OSV_DIR with a small export made by the test, and a scanner
// (fake-sast) in an image derived from the sandbox image. The model fixes pyaverage, raises
// attrs to a version with a known (made-up) vulnerability and adds urllib3, writes an AWS key
// and a private key into deploy/creds.txt and a test key under tests/fixtures/ (which the base
// branch's .gitleaks.toml allows), then tries `pip install` from an index and `curl`, which
// the offline sandbox stops. The PR body, the status comment's headline, the check run
// (summary, text and annotations) and the report are golden files (the PR body also as the
// HTML a GitHub-flavoured renderer makes); none holds a secret's value.
func TestPatchChecksEndToEnd(t *testing.T) {
	t.Parallel()
	scanImage := buildScanImage(t)
	aws := secrettest.AWSKey(t)
	pem := func() (string, []string) {
		body := base64.StdEncoding.EncodeToString([]byte(secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 180)))
		kind := "RSA " + "PRIVATE KEY"
		lines := []string{body[:64], body[64:128], body[128:]}
		return "-----BEGIN " + kind + "-----\n" + strings.Join(lines, "\n") + "\n-----END " + kind + "-----\n", lines
	}
	key, keyLines := pem()
	fixture, fixtureLines := pem()
	args := func(v map[string]string) leaftest.Arguments {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return leaftest.Arguments(b)
	}
	script := leaftest.Script{Turns: []leaftest.Turn{
		{ToolCalls: []leaftest.ToolCall{
			{ID: "fix", Name: "Edit", Arguments: args(map[string]string{"file_path": "stats/basic.py",
				"old_string": "return total(xs) / (len(xs) - 1)", "new_string": "return total(xs) / len(xs)"})},
			{ID: "reqs", Name: "Write", Arguments: args(map[string]string{"file_path": "requirements.txt",
				"content": "attrs==22.2.0\npytest==7.2.1\nurllib3==1.26.4\n"})}}},
		{ToolCalls: []leaftest.ToolCall{
			{ID: "creds", Name: "Write", Arguments: args(map[string]string{"file_path": "deploy/creds.txt",
				"content": "aws_access_key_id = " + aws + "\n\n" + key})},
			{ID: "fixture", Name: "Write", Arguments: args(map[string]string{"file_path": "tests/fixtures/test_key.pem", "content": fixture})}}},
		{ToolCalls: []leaftest.ToolCall{{ID: "pip", Name: "Bash", Arguments: args(map[string]string{
			"command": "pip install --retries 0 --index-url https://files.pkgs.invalid/simple urllib3==1.26.4"})}}},
		{ToolCalls: []leaftest.ToolCall{{ID: "curl", Name: "Bash", Arguments: args(map[string]string{
			"command": "curl -sSfLO https://files.pkgs.invalid/urllib3-1.26.4.tar.gz"})}},
			Expect: &leaftest.Expect{LastToolContains: []string{"Exit code: 1"}}},
		{Content: "Fixed `average`, pinned newer dependencies and added the deploy credentials.",
			Expect: &leaftest.Expect{LastToolContains: []string{"Exit code: 127"}}},
	}}
	osvDir := osvtest.Export(t, t.TempDir(),
		osvtest.Vuln{ID: "FROG-2026-0001", Ecosystem: "PyPI", Package: "attrs", Introduced: "22.0.0", Fixed: "22.2.1",
			Aliases: []string{"CVE-2099-12345"}, Severity: "HIGH", CVSS: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N",
			Summary: "A vulnerability invented for frognano's tests"})
	scanners, err := scanner.Parse("sast=fake-sast ok")
	if err != nil {
		t.Fatal(err)
	}
	b := setupWith(t, "pyaverage", script, scanImage, func(c *runner.Config) {
		c.Secrets, c.OSVDir, c.Scanners = secrets.Warn, osvDir, scanners
	})
	dir := b.spec.RepoDir
	gittest.Write(t, dir, map[string]string{
		"requirements.txt": "attrs==21.4.0\npytest==7.2.1\n",
		".gitleaks.toml":   "[[allowlists]]\ndescription = \"test keys\"\npaths = ['''^tests/fixtures/''']\n",
	})
	gittest.Git(t, dir, "add", "-A")
	gittest.In(t, dir)("commit", "-q", "-m", "requirements and the test keys' allow-list")

	res, err := b.runner.Run(context.Background(), b.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ExitReason(); got != leaf.ExitAgent || res.PatchBytes() == nil {
		t.Fatalf("exit reason %q, patch %d bytes (notes %q): want a finished run with its patch", got, len(res.PatchBytes()), res.Notes)
	}

	// Section 1: the two secrets of deploy/creds.txt, not the allowed fixture; kept under warn.
	var found []string
	for _, f := range res.SecretFindings {
		found = append(found, f.String())
	}
	if want := []string{`aws-access-token in "deploy/creds.txt" line 1`, `private-key in "deploy/creds.txt" line 3`}; !slices.Equal(found, want) {
		t.Errorf("secret findings %q, want %q", found, want)
	}
	// Section 2: attrs changed to a vulnerable version, urllib3 added.
	if d := res.Dependencies; d == nil || len(d.Changes) != 2 {
		t.Errorf("dependencies %+v, want attrs changed and urllib3 added", d)
	}
	// Section 3: the scanner's finding on the changed line fails the check.
	check := report.Check(res, nil)
	if check.Conclusion != report.CheckFailure || len(check.Annotations) == 0 {
		t.Errorf("check run %q with %d annotations, want a failure with the scanner's", check.Conclusion, len(check.Annotations))
	}
	// Section 4: the lookups the observer counted, and curl, which the image lacks.
	if e := res.Egress; e == nil || !e.Attempted() || len(e.Missing) == 0 {
		t.Errorf("what the offline sandbox stopped: %+v", e)
	}

	// The trajectory's output_patch is the patch itself, published under warn as it is; the
	// rest of the trajectory (the messages, the steps) must hold no value.
	tr := res.Trajectory()
	tr.OutputPatch = ""
	traj, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	annotations, err := json.MarshalIndent(check.Annotations, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]string{
		"pr-body.md": report.PRBody(res, report.Fit{}), "headline.md": report.Headline(res) + "\n", "report.md": report.Markdown(res),
		"check-summary.md": check.Title + "\n\n" + check.Summary, "check-text.md": check.Text,
		"check-annotations.json": string(annotations) + "\n",
	}
	values := append(append([]string{aws}, keyLines...), fixtureLines...)
	for name, text := range map[string]string{"trajectory": string(traj), "notes": strings.Join(res.Notes, "\n")} {
		shown[name] = text
	}
	for name, text := range shown {
		for _, v := range values {
			if strings.Contains(text, v) {
				t.Errorf("the %s hold a secret's value", name)
			}
		}
	}
	for _, name := range []string{"pr-body.md", "headline.md", "report.md", "check-summary.md", "check-text.md", "check-annotations.json"} {
		golden.Check(t, "patch-checks-"+name, stable(shown[name], b.spec.RunID))
	}
	golden.Check(t, "patch-checks-pr-body.html", githubtest.ShowAsGitHub(stable(shown["pr-body.md"], b.spec.RunID)))
}

// stable replaces what differs from one run of a test to the next (times, commit ids, the run's
// id, sizes measured) with fixed words, so that a golden file holds the rest exactly.
func stable(s, runID string) string {
	for _, r := range []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(regexp.QuoteMeta(runID)), "RUN"},
		{regexp.MustCompile(`\b[0-9a-f]{40}\b`), "SHA"},
		{regexp.MustCompile(`\b[0-9a-f]{12}\b`), "SHORT"},
		{regexp.MustCompile(`\b\d+m\d+(\.\d+)?s\b`), "TIME"}, // before the next, which would take its seconds alone
		{regexp.MustCompile(`\b\d+(\.\d+)?\s?(ms|s|m|min)\b`), "TIME"},
		{regexp.MustCompile(`\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?(\.\d+)?Z?\b`), "DATE"},
		{regexp.MustCompile(`\b\d+(\.\d+)? (B|KiB|MiB|GiB)\b`), "SIZE"},
	} {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}

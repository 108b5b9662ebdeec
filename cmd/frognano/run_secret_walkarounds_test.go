package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/internal/secrettest"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// scriptWith reads a script of the module's testdata (dir "hostile" or "models") and puts
// values[KEY] where it says @@KEY@@, as the contents of a JSON string: a script can then write
// a value that looks like a secret while frognano's own repository holds none.
func scriptWith(t *testing.T, dir, name string, values map[string]string) leaftest.Script {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(leaftest.ModelsDir(t)), dir, name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for k, v := range values {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		s = strings.ReplaceAll(s, "@@"+k+"@@", string(j[1:len(j)-1]))
	}
	if m := regexp.MustCompile(`@@[A-Z_]+@@`).FindString(s); m != "" {
		t.Fatalf("script %s: no value for %s", name, m)
	}
	script, err := leaftest.Parse([]byte(s))
	if err != nil {
		t.Fatalf("script %s: %v", name, err)
	}
	return script
}

// Made-up values of the shapes gitleaks' rules know, made at run time.
func ghToken(t *testing.T, prefix string) string {
	return prefix + "_" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)
}
func genericKey(t *testing.T) string { return secrettest.GenericSecret(t, 40) }
func pemLines(t *testing.T, n int) []string {
	b := base64.StdEncoding.EncodeToString([]byte(secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", n)))
	var lines []string
	for len(b) > 64 {
		lines, b = append(lines, b[:64]), b[64:]
	}
	return append(lines, b)
}

// secretsRun is one `frognano run` of a scripted model on a pyaverage checkout.
type secretsRun struct {
	model  *leaftest.Server
	out    string
	files  map[string]string // each file of the output folder, by name
	output string            // stdout and stderr
}

// runSecrets commits base into a pyaverage checkout and runs `frognano run` on it against
// script (FROGNANO_SECRETS at its default, block).
func runSecrets(t *testing.T, base map[string]string, script leaftest.Script) *secretsRun {
	t.Helper()
	repo := cliCheckout(t, "pyaverage")
	if len(base) > 0 {
		gittest.Write(t, repo, base)
		gittest.Git(t, repo, "add", "-A")
		gittest.Git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base files")
	}
	r := &secretsRun{model: leaftest.NewServer(t, script), out: filepath.Join(t.TempDir(), "out"), files: map[string]string{}}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--repo", repo, "--task", "Wire up the deployment credentials.", "--out", r.out,
		"--executor", cliExecutor(t), "--test-cmd", "none", "--setup-network", "none"}, envMap(map[string]string{
		"FROGNANO_MODEL_URL": r.model.URL, "FROGNANO_SANDBOX_MEMORY": "512m", "FROGNANO_SANDBOX_CPUS": "1",
	}), &stdout, &stderr)
	r.output = stdout.String() + stderr.String()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, r.output)
	}
	for _, name := range []string{"patch.diff", "trajectory.json", "report.md"} {
		b, err := os.ReadFile(filepath.Join(r.out, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r.files[name] = string(b)
	}
	return r
}

// seen is every request the model got, as sent: what the model read.
func (r *secretsRun) seen() string {
	var b strings.Builder
	for _, q := range r.model.Requests() {
		b.Write(q.Raw)
	}
	return b.String()
}

// lastObservation is the last tool message the model got.
func (r *secretsRun) lastObservation(t *testing.T) string {
	t.Helper()
	reqs := r.model.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			return msgs[i].Text()
		}
	}
	t.Fatal("the model's last request has no tool message")
	return ""
}

// checkNowhere fails when a value is in a file of the output folder other than the patch
// (which is the model's), or in what the command printed; and when the model never read it
// (then finding it nowhere would prove nothing).
func (r *secretsRun) checkNowhere(t *testing.T, values []string) {
	t.Helper()
	seen := r.seen()
	for _, v := range values {
		if v == "" || !strings.Contains(seen, v) {
			t.Fatalf("the model never read the value %.6q…: the attack did not happen", v)
		}
		for name, text := range map[string]string{"report.md": r.files["report.md"], "trajectory.json": r.files["trajectory.json"],
			"the command's output": r.output} {
			if strings.Contains(text, v) {
				t.Errorf("%s holds a secret's value (%.6q…)", name, v)
			}
		}
	}
}

// checkRefused fails unless the patch was refused for exactly the findings rows, named as
// such in report.md (a table: rule, file, line, allowed by) and on the terminal.
func (r *secretsRun) checkRefused(t *testing.T, rows [][3]string) {
	t.Helper()
	if p := r.files["patch.diff"]; p != "" {
		t.Fatalf("the patch was kept (%d bytes): the walk-around got through\n%s", len(p), r.files["report.md"])
	}
	report := r.files["report.md"]
	want := []string{"- Patch: none: refused for what looks like a secret (listed under **Secrets**)",
		"**The patch was refused:** the files it would publish hold what looks like a secret"}
	terminal := []string{"frognano: patch: none: refused, it holds what looks like a secret"}
	for _, row := range rows {
		want = append(want, "| `"+row[0]+"` | `"+row[1]+"` | "+row[2]+" | **nothing** |")
		where := "line " + row[2]
		if row[2] == "its name" {
			where = row[2]
		}
		terminal = append(terminal, "frognano:   "+row[0]+" in "+row[1]+" "+where+"\n")
	}
	for _, w := range want {
		if !strings.Contains(report, w) {
			t.Errorf("report.md lacks %q:\n%s", w, report)
		}
	}
	for _, w := range terminal {
		if !strings.Contains(r.output, w) {
			t.Errorf("the terminal lacks %q:\n%s", w, r.output)
		}
	}
	if n := strings.Count(report, "| **nothing** |"); n != len(rows) {
		t.Errorf("report.md lists %d findings, want %d:\n%s", n, len(rows), report)
	}
}

// TestRunRefusesSecretWalkArounds is issue 28's three ways past the secrets check, each with
// siblings, carried out through `frognano run` by a scripted model (testdata/hostile/secret-*)
// under FROGNANO_SECRETS=block. On the old check every one of them was published (patch.diff
// held the secrets); now each patch is refused, report.md and the terminal list every
// finding, and no value is in report.md, trajectory.json or the command's output.
func TestRunRefusesSecretWalkArounds(t *testing.T) {
	t.Parallel()
	t.Run("PathAllowLists", func(t *testing.T) {
		t.Parallel()
		values := map[string]string{"GITHUB_PAT": ghToken(t, "ghp"), "GITHUB_APP_TOKEN": ghToken(t, "ghu"), "GENERIC_VALUE": genericKey(t)}
		r := runSecrets(t, nil, scriptWith(t, "hostile", "secret-path-allowlists.json", values))
		r.checkRefused(t, [][3]string{
			{"github-pat", "@octokit/auth-token/README.md", "3"},
			{"generic-api-key", "conf/build.inc", "1"},
			{"github-app-token", "vendor/@octokit/auth-token/README.md", "1"},
		})
		r.checkNowhere(t, []string{values["GITHUB_PAT"], values["GITHUB_APP_TOKEN"], values["GENERIC_VALUE"]})
	})
	t.Run("LineAllowLists", func(t *testing.T) {
		t.Parallel()
		values := map[string]string{"VALUE_DOCKER": genericKey(t), "VALUE_JS": genericKey(t), "VALUE_AUTHOR": genericKey(t), "VALUE_KEYRING": genericKey(t)}
		r := runSecrets(t, nil, scriptWith(t, "hostile", "secret-line-allowlists.json", values))
		r.checkRefused(t, [][3]string{
			{"generic-api-key", "Dockerfile", "2"},
			{"generic-api-key", "stats/settings.py", "1"},
			{"generic-api-key", "stats/vault.py", "1"},
			{"generic-api-key", "web/client.js", "1"},
		})
		r.checkNowhere(t, []string{values["VALUE_DOCKER"], values["VALUE_JS"], values["VALUE_AUTHOR"], values["VALUE_KEYRING"]})
	})
	t.Run("EncodingsAndNames", func(t *testing.T) {
		t.Parallel()
		values := map[string]string{"GITHUB_PAT": ghToken(t, "ghp"), "GITHUB_APP_TOKEN": ghToken(t, "ghp"), "GITHUB_NAME_TOKEN": ghToken(t, "ghp")}
		r := runSecrets(t, nil, scriptWith(t, "hostile", "secret-encodings-and-names.json", values))
		r.checkRefused(t, [][3]string{
			{"github-pat", "deploy/my creds.txt", "2"},
			{"github-pat", "notes/ünï cødé.txt", "1"},
			{"github-pat", "ops/[secret: github-pat]", "its name"},
		})
		r.checkNowhere(t, []string{values["GITHUB_PAT"], values["GITHUB_APP_TOKEN"], values["GITHUB_NAME_TOKEN"]})
	})
	t.Run("UnchangedLines", func(t *testing.T) {
		t.Parallel()
		rsa, ec := "RSA "+"PRIVATE KEY", "EC "+"PRIVATE KEY"
		half := pemLines(t, 96)
		base := map[string]string{
			"deploy/key.pem":   "-----BEGIN " + rsa + "-----\nPASTE THE KEY HERE\n-----END " + rsa + "-----\n",
			"deploy/half.pem":  "-----BEGIN " + ec + "-----\n" + strings.Join(half, "\n") + "\n",
			"scripts/fetch.sh": "#!/bin/sh\ncurl https://api.example.com/data \\\n  -u \"$API_USER:$API_PASS\"\n",
			"k8s/secret.yaml":  "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  db: \"\"\n",
		}
		r := runSecrets(t, base, scriptWith(t, "hostile", "secret-unchanged-lines.json", nil))
		r.checkRefused(t, [][3]string{
			{"private-key", "deploy/half.pem", "1"},
			{"private-key", "deploy/key.pem", "1"},
			{"kubernetes-secret-yaml", "k8s/secret.yaml", "2"},
			{"curl-auth-user", "scripts/fetch.sh", "2"},
		})
		// The model made the values in the sandbox and printed the files: read them there.
		shown := r.lastObservation(t)
		var values []string
		for _, kind := range []string{rsa, ec} {
			m := regexp.MustCompile(`(?s)-----BEGIN ` + kind + `-----\n(.*?)\n-----END ` + kind + `-----`).FindStringSubmatch(shown)
			if m == nil {
				t.Fatalf("the model did not see the %s:\n%s", kind, shown)
			}
			for _, l := range strings.Split(m[1], "\n") {
				if !strings.Contains(strings.Join(half, "\n"), l) { // the base's half is the repository's own
					values = append(values, l)
				}
			}
		}
		for _, re := range []string{`-u deploy:(\S+)`, `\n  db: (\S+)`} {
			m := regexp.MustCompile(re).FindStringSubmatch(shown)
			if m == nil {
				t.Fatalf("the model did not see %s:\n%s", re, shown)
			}
			values = append(values, m[1])
		}
		if len(values) < 6 {
			t.Fatalf("%d values read, want the key's lines, the other key's new lines, curl's and the Secret's", len(values))
		}
		r.checkNowhere(t, values)
	})
}

// TestRunListsAllowedSecrets: what the secrets check finds and does not blame on the patch is
// listed with what allowed it, and the patch is published: a key the base's file already held
// (the patch changes another line of that file), a token the base's .gitleaksignore names by
// fingerprint, and a test key under a path the base's .gitleaks.toml allows. report.md holds
// none of the values.
func TestRunListsAllowedSecrets(t *testing.T) {
	t.Parallel()
	aws := secrettest.AWSKey(t)
	rsa := "RSA " + "PRIVATE KEY"
	keyLines := pemLines(t, 180)
	values := map[string]string{
		"IGNORED_PAT": ghToken(t, "ghp"),
		"TEST_KEY":    "-----BEGIN " + rsa + "-----\n" + strings.Join(keyLines, "\n") + "\n-----END " + rsa + "-----\n",
	}
	base := map[string]string{
		"config/test.ini": "[aws]\nkey = " + aws + "\nregion = eu-west-1\n",
		".gitleaksignore": "# the test token\nfixtures/token.txt:github-pat:1\n",
		".gitleaks.toml":  "[[allowlists]]\ndescription = \"test keys\"\npaths = ['''^tests/keys/''']\n",
	}
	r := runSecrets(t, base, scriptWith(t, "models", "run-secrets-allowed.json", values))
	if r.files["patch.diff"] == "" {
		t.Fatalf("the patch was refused:\n%s", r.files["report.md"])
	}
	report := r.files["report.md"]
	for _, want := range []string{
		"Gitleaks' rules found these in the files the patch publishes; each is allowed, so none refuses the patch.",
		"| `aws-access-token` | `config/test.ini` | 2 | already in the base |",
		"| `github-pat` | `fixtures/token.txt` | 1 | `.gitleaksignore` of the base |",
		"| `private-key` | `tests/keys/id.pem` | 1 | `.gitleaks.toml` of the base |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report.md lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "**nothing**") || strings.Contains(r.output, "what looks like a secret") {
		t.Errorf("an allowed finding is blamed on the patch:\n%s\n%s", report, r.output)
	}
	// The trajectory's output_patch is the published patch itself, values and all (as
	// patch.diff); the rest of it must hold none.
	var traj map[string]any
	if err := json.Unmarshal([]byte(r.files["trajectory.json"]), &traj); err != nil {
		t.Fatal(err)
	}
	if p, _ := traj["output_patch"].(string); !strings.Contains(p, "+++ b/tests/keys/id.pem") {
		t.Fatalf("the trajectory's output_patch is not the patch:\n%.300s", p)
	}
	delete(traj, "output_patch")
	rest, err := json.Marshal(traj)
	if err != nil {
		t.Fatal(err)
	}
	r.files["trajectory.json"] = string(rest)
	r.checkNowhere(t, append([]string{values["IGNORED_PAT"]}, keyLines...))
	if strings.Contains(report, aws) || strings.Contains(r.files["trajectory.json"], aws) || strings.Contains(r.output, aws) {
		t.Error("the base's key is in what frognano wrote")
	}
}

// TestRunRedactsKeysTheTestsPrint: a test the patch adds prints an AWS key pair it assembles at
// run time (testdata/hostile/secret-printed-by-tests.json): its file holds nothing gitleaks'
// rules read, so the patch is kept, and the tests after print the pair. report.md and the
// terminal show that output with the values replaced by [secret: RULE] (githubapp.RedactRun);
// before the review of 2026-12-07 report.md held them in clear.
func TestRunRedactsKeysTheTestsPrint(t *testing.T) {
	t.Parallel()
	keyID := secrettest.AWSKey(t)
	secret := secrettest.GenericSecret(t, 40)
	reverse := func(s string) string {
		b := []byte(s)
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
		return string(b)
	}
	model := leaftest.NewServer(t, scriptWith(t, "hostile", "secret-printed-by-tests.json",
		map[string]string{"KEY_ID_REVERSED": reverse(keyID), "SECRET_REVERSED": reverse(secret)}))
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--repo", cliCheckout(t, "pyaverage"), "--task", "Check the deployment credentials.",
		"--out", out, "--executor", cliExecutor(t), "--setup-network", "none"}, envMap(map[string]string{
		"FROGNANO_MODEL_URL": model.URL, "FROGNANO_SANDBOX_MEMORY": "512m", "FROGNANO_SANDBOX_CPUS": "1",
	}), &stdout, &stderr)
	output := stdout.String() + stderr.String()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, output)
	}
	files := map[string]string{}
	for _, name := range []string{"patch.diff", "trajectory.json", "report.md"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	if !strings.Contains(files["patch.diff"], reverse(keyID)) {
		t.Fatalf("the patch was not kept: the case needs the scan to pass it\n%s", files["report.md"])
	}
	// The attack happened: the tests after printed the pair, which report.md shows redacted.
	report := files["report.md"]
	for _, w := range []string{"aws_access_key_id = [secret: aws-access-token]", "[secret: generic-api-key]"} {
		if !strings.Contains(report, w) {
			t.Errorf("report.md lacks %q (did the tests print the pair?):\n%s", w, report)
		}
	}
	for name, text := range map[string]string{"report.md": report, "trajectory.json": files["trajectory.json"], "the command's output": output} {
		for what, v := range map[string]string{"key id": keyID, "secret key": secret} {
			if strings.Contains(text, v) {
				t.Errorf("%s holds the %s in clear", name, what)
			}
		}
	}
}

package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/runner/sandbox"
)

// TestServiceKeepsOperatorValuesSecret is security issue 17, item 3, against the whole service
// (real PostgreSQL, real Docker, the fake GitHub): the repository's setup.sh writes the
// operator's FROGNANO_SETUP_ENV values (a token, and a proxy URL's password) into the
// environment image, reversed (a form the seal check does not look for); the scripted model
// reads them back and repeats them in a command, its
// reasoning and its final message, then fixes the bug so that a PR carrying the transcript is
// opened. Neither value may appear in the database (every row of every table of the test's
// schema), the PR, the comments and their earlier versions, the check runs, the pushed commit
// or the service's log.
func TestServiceKeepsOperatorValuesSecret(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-setup-leak.json")
	e.env["FROGNANO_SETUP_NETWORK"] = "none"
	e.env["FROGNANO_SETUP_ENV"] = "MIRROR_TOKEN=" + setupToken + " PROXY_URL"
	e.env["PROXY_URL"] = setupProxyURL
	e.gh.PushCommit(e.repo, "main", ".frognano/setup.sh", setupLeakScript(e.owner), "setup")
	p := e.start()
	id := e.queueRun(p)
	row := e.waitState(id, svcRunWait, "succeeded")
	e.waitNoContainers(time.Minute)
	if err := p.stop(); err != nil { // flush the shutdown's log lines too
		t.Fatal(err)
	}
	// The environment image carries the sandbox labels of the setup that made it.
	images, err := e.docker.ImageList(context.Background(), image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+e.owner))})
	if err != nil {
		t.Fatalf("listing the test's environment images: %v", err)
	}
	for _, img := range images {
		if _, err := e.docker.ImageRemove(context.Background(), img.ID, image.RemoveOptions{Force: true, PruneChildren: true}); err != nil {
			t.Errorf("removing the test's environment image: %v", err)
		}
	}

	// The attack was real: the model read both values from the image, and its transcript
	// reached the PR (else finding them nowhere would prove nothing).
	seen := svcRequestsRaw(e)
	for _, v := range []string{setupToken, setupPassword} {
		if !strings.Contains(seen, v) {
			t.Fatalf("the model never saw %q: setup did not leave it in the image", v)
		}
	}
	prs := e.gh.PRs(e.repo)
	if len(prs) != 1 || !strings.Contains(prs[0].Body, "rev /opt/leak") {
		t.Fatalf("want one PR whose transcript shows the model reading /opt/leak, got %+v", prs)
	}

	head := e.gh.Branch(e.repo, svcBranch)
	var pushed strings.Builder
	pushed.WriteString(head.Message)
	for name, content := range head.Files {
		pushed.WriteString(name + "\n" + content)
	}
	var comments strings.Builder
	for _, c := range e.gh.Comments(e.repo, svcIssue) {
		comments.WriteString(c.Body + strings.Join(c.History, "\n"))
	}
	haystacks := map[string]string{
		"the database":      e.dump(t),
		"the PR":            prs[0].Title + prs[0].Body,
		"the comments":      comments.String(),
		"the check runs":    fmt.Sprint(e.gh.CheckRuns(e.repo)),
		"the pushed commit": pushed.String(),
		"the service log":   e.logs.String(),
	}
	for name, hay := range haystacks {
		if hay == "" || hay == "[]" {
			t.Errorf("%s is empty: nothing was checked", name)
		}
		for _, v := range []string{setupToken, setupPassword} {
			// bytea columns (the patch) are dumped as hex.
			if strings.Contains(hay, v) || strings.Contains(hay, hex.EncodeToString([]byte(v))) {
				t.Errorf("%s holds the operator's value %q", name, v)
			}
		}
	}
	if !strings.Contains(string(row.Trajectory), "rev /opt/leak") {
		t.Errorf("the stored trajectory lacks the model's calls")
	}
}

// TestServiceRefusesAnUnsealedEnvironment is issue 28's seal check through the whole service:
// the repository's setup.sh writes the operator's token (FROGNANO_SETUP_ENV) base64-encoded
// into a dotfile of the environment. The environment is refused before the model is called:
// the run fails as environment_refused (a refusal with its own words, never "setup failed" with
// exit status 0, as it read before), its status comment names the file, the form and the fix, no
// environment image is left, and the value is in no row of the database, no comment and no
// log line, in any form. Before, the environment was built and the model read the file.
func TestServiceRefusesAnUnsealedEnvironment(t *testing.T) {
	t.Parallel()
	e := svcSetup(t, "svc-never.json")
	e.env["FROGNANO_SETUP_NETWORK"] = "none"
	e.env["FROGNANO_SETUP_ENV"] = "MIRROR_TOKEN=" + setupToken
	e.gh.PushCommit(e.repo, "main", ".frognano/setup.sh", "# "+e.owner+"\nset -eu\nmkdir -p /root/.config\n"+
		"printf 'token: %s\\n' \"$(printf '%s' \"$MIRROR_TOKEN\" | base64)\" > /root/.config/mirror.yml\necho configured\n", "setup")
	p := e.start()
	id := e.queueRun(p)
	row := e.waitState(id, svcRunWait, "failed")
	if len(e.model.Requests()) != 0 {
		t.Errorf("the model was asked %d times", len(e.model.Requests()))
	}
	svcWait(t, time.Minute, "the final status comment", func() (bool, string) {
		body := e.onlyComment().Body
		return strings.Contains(body, "environment_refused"), body
	})
	c := e.onlyComment()
	for _, want := range []string{"frognano refused the environment", "## Environment refused",
		"| `/root/.config/mirror.yml` | holds the value of MIRROR_TOKEN, base64-encoded |", "credential helper", "configured"} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("status comment lacks %q:\n%s", want, c.Body)
		}
	}
	for _, bad := range []string{"Setup failed", "setup script (.frognano/setup.sh) failed", "Exit status: 0"} {
		if strings.Contains(c.Body, bad) {
			t.Errorf("status comment holds %q:\n%s", bad, c.Body)
		}
	}
	if row.PRURL != "" {
		t.Errorf("a pull request was opened: %+v", row)
	}
	e.waitNoContainers(time.Minute)
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	images, err := e.docker.ImageList(context.Background(), image.ListOptions{Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelOwner+"="+e.owner))})
	if err != nil || len(images) != 0 {
		t.Errorf("environment images of the refused setup: %v %v", images, err)
	}
	var comments strings.Builder
	for _, c := range e.gh.Comments(e.repo, svcIssue) {
		comments.WriteString(c.Body + strings.Join(c.History, "\n"))
	}
	forms := []string{setupToken, base64.StdEncoding.EncodeToString([]byte(setupToken)), hex.EncodeToString([]byte(setupToken))}
	for name, hay := range map[string]string{"the database": e.dump(t), "the comments": comments.String(), "the service log": e.logs.String()} {
		for _, v := range forms {
			if strings.Contains(hay, v) {
				t.Errorf("%s holds the operator's value (%q)", name, v)
			}
		}
	}
}

// dump returns every row of every table of the test's schema as text: what the service stored.
func (e *svcEnv) dump(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	rows, err := e.db.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		t.Fatalf("listing the schema's tables: %v", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("listing the schema's tables: %v", err)
	}
	var b strings.Builder
	for _, table := range tables {
		var text string
		q := fmt.Sprintf(`SELECT coalesce(string_agg(t::text, E'\n'), '') FROM %s t`, pgx.Identifier{table}.Sanitize())
		if err := e.db.QueryRow(ctx, q).Scan(&text); err != nil {
			t.Fatalf("reading table %s: %v", table, err)
		}
		fmt.Fprintf(&b, "== %s\n%s\n", table, text)
	}
	return b.String()
}

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/export"
	"github.com/frognano/frognano/internal/secrettest"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/runner/leaf"
)

// exportDB is a migrated schema holding three finished runs of octo/pager (one merged, one
// whose observation holds the operator's setup value, base64-encoded too) and one of
// acme/private, and the environment that points `frognano export` at it, with that value in
// FROGNANO_SETUP_ENV.
func exportDB(t *testing.T) (getenv func(string) string, value string) {
	t.Helper()
	pool := dbtest.New(t)
	ctx := context.Background()
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	value = "mirror-" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 24)
	traj := func(obs string) []byte {
		content := obs
		r := &leaf.Result{Messages: []leaf.Message{
			{Role: "system", Content: ptrTo(leaf.SystemPrompt)}, {Role: "user", Content: ptrTo("Fix f.")},
			{Role: "assistant", ToolCalls: []leaf.ToolCall{{ID: "c1", Type: "function", Function: leaf.FunctionCall{Name: "Bash", Arguments: `{"command":"env"}`}}}},
			{Role: "tool", ToolCallID: "c1", Content: &content},
			{Role: "assistant", Content: ptrTo("Done.")},
		}, ExitReason: leaf.ExitAgent}
		b, err := json.Marshal(r.Trajectory("run-x", "octo/pager#1", 0, "", false))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(value))
	for i, r := range []struct {
		repoID      int64
		owner, repo string
		pr          any
		obs         string
	}{
		{42, "octo", "pager", 10, "Exit code: 0\nSTDOUT:\nok\nSTDERR:\n"},
		{42, "octo", "pager", nil, "Exit code: 0\nSTDOUT:\nMIRROR=" + value + "\n" + b64 + "\nSTDERR:\n"},
		{77, "acme", "private", nil, "ACME-PRIVATE-MARKER"},
		{42, "octo", "pager", 11, "Exit code: 0\nSTDOUT:\nok\nSTDERR:\n"},
	} {
		_, err := pool.Exec(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler,
				state, created_at, pr_number, trajectory, check_run)
			VALUES ('h', $1, 5, $2, $3, $4, $5, 'alice', 'succeeded', $6, $7, $8, '{"Conclusion":"success"}')`,
			fmt.Sprintf("d%d", i), r.repoID, r.owner, r.repo, i+1, time.Date(2026, 3, 1+i, 10, 0, 0, 0, time.UTC), r.pr, traj(r.obs))
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := pool.Exec(ctx, `INSERT INTO pull_outcomes (repo_id, number, installation_id, owner, repo, ours, issue, first_run_id,
			last_run_id, opened_at, state, ended_at)
		SELECT repo_id, pr_number, 5, owner, repo, true, issue, id, id, created_at,
			CASE WHEN pr_number = 10 THEN 'merged' ELSE 'closed' END, created_at + interval '1 day'
		FROM runs WHERE pr_number IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": svcDatabaseURL(t, schema), "FROGNANO_SETUP_ENV": "MIRROR_TOKEN=" + value}
	return func(k string) string { return env[k] }, value
}

func ptrTo(s string) *string { return &s }

// TestExportCommand: `frognano export` writes the named repository's runs (never another's)
// with their labels, keeps the operator's setup value out in every form, prints one summary
// line when stderr is not a terminal, and a second invocation continues the same files.
func TestExportCommand(t *testing.T) {
	t.Parallel()
	getenv, value := exportDB(t)
	out := filepath.Join(t.TempDir(), "runs.jsonl")
	var stdout, stderr bytes.Buffer
	args := []string{"export", "--repo", "octo/pager", "--format", "chat-jsonl", "--out", out, "--since", "2026-03-02"}
	if err := run(context.Background(), args, getenv, &stdout, &stderr); err != nil {
		t.Fatalf("frognano export: %v\n%s", err, stderr.String())
	}
	want := fmt.Sprintf("frognano: exported 2 run(s) to %s and %s", out, out+export.LabelsSuffix)
	if !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 || stdout.Len() != 0 {
		t.Errorf("output:\n%s%s\nwant one line starting %q", stdout.String(), stderr.String(), want)
	}
	recs, _ := os.ReadFile(out)
	labs, _ := os.ReadFile(out + export.LabelsSuffix)
	all := string(recs) + string(labs)
	for what, v := range map[string]string{"the operator's value": value, "its base64": base64.StdEncoding.EncodeToString([]byte(value)),
		"the unnamed repository": "ACME-PRIVATE-MARKER"} {
		if strings.Contains(all, v) {
			t.Errorf("the export holds %s", what)
		}
	}
	if strings.Count(string(recs), "\n") != 2 || strings.Count(string(labs), "\n") != 2 || !strings.Contains(string(recs), "MIRROR=[REDACTED]") {
		t.Errorf("records:\n%s\nlabels:\n%s", recs, labs)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the records file's mode: %v %v", st.Mode(), err)
	}
	// Again, without --since: the run before it is not added (the export continues after
	// its last run), and nothing is written twice.
	stderr.Reset()
	args = []string{"export", "--repo", "octo/pager", "--format", "chat-jsonl", "--out", out}
	if err := run(context.Background(), args, getenv, &stdout, &stderr); err != nil {
		t.Fatalf("frognano export again: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "exported 0 run(s)") || !strings.Contains(stderr.String(), "after the 2 already there") {
		t.Errorf("the second export said:\n%s", stderr.String())
	}
	if again, _ := os.ReadFile(out); string(again) != string(recs) {
		t.Error("the second export changed the records")
	}
	// The merged outcome alone.
	merged := filepath.Join(t.TempDir(), "merged.jsonl")
	stderr.Reset()
	args = []string{"export", "--repo", "octo/pager", "--format", "leaf", "--outcome", "merged", "--out", merged}
	if err := run(context.Background(), args, getenv, &stdout, &stderr); err != nil {
		t.Fatalf("frognano export --outcome merged: %v\n%s", err, stderr.String())
	}
	if labs, _ := os.ReadFile(merged + export.LabelsSuffix); strings.Count(string(labs), "\n") != 1 || !strings.Contains(string(labs), `"state":"merged"`) {
		t.Errorf("--outcome merged exported:\n%s", labs)
	}
}

// TestExportDryRun: --dry-run prints the runs per repository, the total and the estimated
// size, names a repository no run has, and writes no file.
func TestExportDryRun(t *testing.T) {
	t.Parallel()
	getenv, _ := exportDB(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "runs.jsonl")
	var stdout, stderr bytes.Buffer
	args := []string{"export", "--repo", "octo/pager", "--repo", "nobody/none", "--format", "leaf", "--out", out, "--dry-run"}
	if err := run(context.Background(), args, getenv, &stdout, &stderr); err != nil {
		t.Fatalf("frognano export --dry-run: %v\n%s", err, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{"REPOSITORY", "octo/pager  3", "total       3", " MB", "Dry run: nothing was written (format leaf, outcome any)."} {
		if !strings.Contains(got, want) {
			t.Errorf("the dry run does not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "acme") || !strings.Contains(stderr.String(), "no run of nobody/none is kept") {
		t.Errorf("dry run:\n%s\n%s", got, stderr.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the dry run wrote %v", entries)
	}
}

// TestExportBadFlags: each mistake is a usage error (exit 2) that says what to give; a file
// of another format is not continued.
func TestExportBadFlags(t *testing.T) {
	t.Parallel()
	db := func(string) string { return "" }
	out := filepath.Join(t.TempDir(), "runs.jsonl")
	base := []string{"--format", "leaf", "--out", out}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{append([]string{}, base...), "give --repo OWNER/REPO for each repository"},
		{append([]string{"--repo", "octo"}, base...), `--repo "octo" is not OWNER/REPO`},
		{append([]string{"--repo", "o/r", "--repo", " "}, base...), `invalid value " " for flag -repo`},
		{[]string{"--repo", "o/r", "--out", out}, "give --format leaf or --format chat-jsonl"},
		{[]string{"--repo", "o/r", "--format", "openai", "--out", out}, `--format "openai": use leaf or chat-jsonl`},
		{append([]string{"--repo", "o/r", "--outcome", "open"}, base...), `--outcome "open": use merged, closed or any`},
		{[]string{"--repo", "o/r", "--format", "leaf"}, "give --out FILE"},
		{append([]string{"--repo", "o/r", "--since", "last week"}, base...), `--since "last week" is neither a date`},
		{append(append([]string{"--repo", "o/r"}, base...), "extra"), `unexpected argument "extra"`},
		{append([]string{"--repo", "o/r"}, base...), "DATABASE_URL is not set"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"export"}, tt.args...), db, &stdout, &stderr)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("frognano export %v: %v (exit %d), want a usage error saying %q", tt.args, err, exitCode(err), tt.want)
		}
	}
	getenv, _ := exportDB(t)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"export", "--repo", "octo/pager", "--format", "leaf", "--out", out}, getenv, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"export", "--repo", "octo/pager", "--format", "chat-jsonl", "--out", out}, getenv, &stdout, &stderr)
	if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "holds leaf records") {
		t.Errorf("continuing a leaf file as chat-jsonl: %v", err)
	}
}

// TestExportProgress: on a terminal the progress line is drawn in place (carriage return,
// erase), at most ten times a second but always at the end, and erased before the summary;
// elsewhere nothing is drawn.
func TestExportProgress(t *testing.T) {
	t.Parallel()
	var tty bytes.Buffer
	p := &exportProgress{w: &tty, tty: true}
	p.show(export.Progress{Done: 1, Total: 3, Bytes: 2_500_000})
	p.show(export.Progress{Done: 2, Total: 3, Bytes: 5_000_000}) // within 100 ms: not drawn
	p.show(export.Progress{Done: 3, Total: 3, Bytes: 7_500_000})
	p.clear()
	want := "\r\x1b[Kfrognano: exporting 1/3 run(s), 2.5 MB\r\x1b[Kfrognano: exporting 3/3 run(s), 7.5 MB\r\x1b[K"
	if tty.String() != want {
		t.Errorf("on a terminal: %q, want %q", tty.String(), want)
	}
	var file bytes.Buffer
	q := newExportProgress(&file) // not a terminal
	q.show(export.Progress{Done: 1, Total: 1})
	q.clear()
	if file.Len() != 0 {
		t.Errorf("not on a terminal: %q", file.String())
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/frognano/frognano/doctor"
	"github.com/frognano/frognano/migrations/dbtest"
)

// TestConfigCheck pins `frognano config check`: a valid file prints FILE: valid and exits 0,
// an invalid one prints each problem as FILE:LINE:COL: message and exits 1, and with no
// argument the command reads .github/frognano.yml of the current directory.
func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yml", "attempts: 2\nprotected_paths: [migrations/**]\n")
	bad := write("bad.yml", "attempts: 2\ncolor: red\nfollow_ups: maybe\n")
	env := func(string) string { return "" }
	tests := []struct {
		name     string
		args     []string
		wantOut  string
		wantCode int
	}{
		{"valid", []string{"config", "check", good}, good + ": valid\n", 0},
		{"invalid", []string{"config", "check", bad},
			bad + `:2:1: unknown key "color" (allowed: label, permission, teams, base_branch, attempts, model, follow_ups, ci_feedback, protected_paths, pull_request, runs_per_day)` + "\n" +
				bad + ":3:13: follow_ups: got string, want boolean\n", 1},
		{"no subcommand", []string{"config"}, "", 2},
		{"two files", []string{"config", "check", good, bad}, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, env, &stdout, &stderr)
			if code := exitCode(err); err != nil && code != tt.wantCode || err == nil && tt.wantCode != 0 {
				t.Fatalf("exit %d (%v), want %d", code, err, tt.wantCode)
			}
			if stdout.String() != tt.wantOut {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), tt.wantOut)
			}
		})
	}

	t.Run("default file", func(t *testing.T) {
		write(".github/frognano.yml", "label: ai\n")
		t.Chdir(dir)
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{"config", "check"}, env, &stdout, &stderr); err != nil {
			t.Fatal(err)
		}
		if want := ".github/frognano.yml: valid\n"; stdout.String() != want {
			t.Errorf("stdout = %q, want %q", stdout.String(), want)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"config", "check", filepath.Join(dir, "none.yml")}, env, &stdout, &stderr)
		if !errors.Is(err, os.ErrNotExist) || exitCode(err) != 1 {
			t.Errorf("err = %v, want a missing file, exit 1", err)
		}
	})
}

// TestDoctorListsInvalidSettings: `frognano doctor`'s settings line warns about every
// repository whose settings file a run found invalid and none found valid since, with the
// first problem and the comment that named them, and passes when there is none.
func TestDoctorListsInvalidSettings(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	url := svcDatabaseURL(t, schema)
	if r := settingsResult(ctx, url); r.Status != doctor.Pass {
		t.Errorf("settings with no error recorded = %+v, want pass", r)
	}
	_, err := pool.Exec(ctx, `INSERT INTO settings_errors (repo_id, fingerprint, installation_id, owner, repo, problems, run_id, issue, comment_url, resolved_at)
		VALUES (42, 'a', 5, 'octo', 'pager', e'.github/frognano.yml:2:1: unknown key "colour"\n.github/frognano.yml:3:5: x', 1, 7, 'https://github.example/octo/pager/issues/7#issuecomment-9', NULL),
		       (43, 'b', 5, 'octo', 'ledger', '.github/frognano.yml:1:1: y', 2, 3, NULL, now())`)
	if err != nil {
		t.Fatal(err)
	}
	r := settingsResult(ctx, url)
	want := `1 repositories have an invalid settings file, and no run starts there: octo/pager: .github/frognano.yml:2:1: unknown key "colour" (https://github.example/octo/pager/issues/7#issuecomment-9)`
	if r.Status != doctor.Warn || r.Detail != want {
		t.Errorf("settings = %+v, want a warning: %s", r, want)
	}
}

package export_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/export"
	"github.com/frognano/frognano/internal/secretform"
)

// benchRuns is how many runs the benchmark exports: the figure issue 31 asks for.
const benchRuns = 1000

// seedMany seeds n finished runs of octo/pager, each with a trajectory of 15 steps of two
// calls (a Read of about 1.5 KB and a Bash), a tests event, and a merged pull request for
// every other one: about 60 KB of trajectory a run, as the service stores them.
func seedMany(b testing.TB, d *db, n int) {
	b.Helper()
	ctx := context.Background()
	var steps [][]call
	body := strings.Repeat("    x = compute(x, y)  # a line of the file\n", 32)
	for i := range 15 {
		steps = append(steps, []call{
			{fmt.Sprintf("call_r%d", i), "Read", fmt.Sprintf(`{"file_path":"src/mod%d.py"}`, i), "src/mod.py\n" + body},
			{fmt.Sprintf("call_b%d", i), "Bash", `{"command":"python -m pytest -q tests/"}`, "Exit code: 1\nSTDOUT:\n" + strings.Repeat(".", 200) + "F\n1 failed, 200 passed\nSTDERR:\n"},
		})
	}
	rows := make([][]any, n)
	for i := range n {
		traj := trajectory(int64(i+1), "Fix the bug in compute: it drops the last element.", steps, "Fixed compute.", 0)
		rows[i] = []any{"h", fmt.Sprintf("d%d", i), int64(7), int64(42), "octo", "pager", i + 1, "alice", "succeeded", "issue",
			day0.Add(time.Duration(i) * time.Minute), "default", "agent", 16, "b4se", i + 1, traj,
			[]byte(`{"Name":"frognano / tests","Conclusion":"success"}`)}
	}
	_, err := d.pool.CopyFrom(ctx, pgx.Identifier{"runs"}, []string{"hook_target", "delivery_id", "installation_id", "repo_id", "owner", "repo",
		"issue", "labeler", "state", "kind", "created_at", "model", "exit_reason", "steps", "base_sha", "pr_number", "trajectory", "check_run"},
		pgx.CopyFromRows(rows))
	if err != nil {
		b.Fatalf("seeding runs: %v", err)
	}
	_, err = d.pool.Exec(ctx, `INSERT INTO run_events (run_id, kind, data) SELECT id, 'tests', $1::jsonb FROM runs`, testsEvent)
	if err != nil {
		b.Fatal(err)
	}
	_, err = d.pool.Exec(ctx, `INSERT INTO pull_outcomes (repo_id, number, installation_id, owner, repo, ours, issue, first_run_id,
			last_run_id, opened_at, state, ended_at, people_commits, patch_lines, people_lines)
		SELECT 42, pr_number, 7, 'octo', 'pager', true, issue, id, id, created_at, 'merged', created_at + interval '1 day', 1, 30, 5
		FROM runs WHERE id % 2 = 0`)
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkExport exports 1,000 seeded runs (the same database each time) in each format,
// with an operator value to look for: runs/s, and MB/s of what it writes.
func BenchmarkExport(b *testing.B) {
	d := newDB(b)
	seedMany(b, d, benchRuns)
	secrets := []secretform.Secret{{Name: "MIRROR_TOKEN", Value: "mirror-token-value-0123456789"}}
	export.NewRedactor(secrets).Text("api_key = warm") // gitleaks' rules are compiled once a process, on first use
	for _, format := range []string{export.FormatChat, export.FormatLeaf} {
		b.Run(format, func(b *testing.B) {
			dir := b.TempDir()
			var written int64
			cpu0 := cpuTime(b)
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				out := filepath.Join(dir, fmt.Sprintf("runs-%d.jsonl", i))
				sum, err := export.Run(context.Background(), d.pool, export.Options{Repos: repos("octo/pager"), Format: format, Out: out, Secrets: secrets})
				if err != nil || sum.Written != benchRuns {
					b.Fatalf("export: %v, %d written", err, sum.Written)
				}
				written = sum.Bytes
				os.Remove(out)
				os.Remove(out + export.LabelsSuffix)
			}
			b.SetBytes(written)
			b.ReportMetric(float64(benchRuns*b.N)/time.Since(start).Seconds(), "runs/s")
			// This process's processor time a run, whatever else the machine is doing (the
			// database's is not in it).
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/1000/float64(benchRuns*b.N), "cpu-ms/run")
		})
	}
}

// cpuTime is the processor time this process has used (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

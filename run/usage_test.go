package run_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestUsageReport sums what runs used since a date by installation, repository (named by its
// latest name) or person (case folded), the largest token use first; a run passed its check
// counts as started.
func TestUsageReport(t *testing.T) {
	t.Parallel()
	p := runtest.New(t)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := p.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	worked := p.Label(t, 1) // 3,400 tokens, checked
	if r := p.Work(t, worked, 1); !r.Completed() {
		t.Fatal(r)
	}
	renamed := p.Request(t, runtest.Request{Issue: 2, Repo: "pager-next", Labeler: "Maintainer"})
	exec(`UPDATE runs SET prompt_tokens = 100, completion_tokens = 10, model_ms = 1000, sandbox_peak_bytes = 2048 WHERE id = $1`, renamed)
	other := p.Request(t, runtest.Request{Issue: 3, InstallationID: 6, RepoID: 43, Repo: "other", Labeler: "carol"})
	exec(`UPDATE runs SET prompt_tokens = 5000 WHERE id = $1`, other)
	old := p.Request(t, runtest.Request{Issue: 4, Labeler: "dave"})
	exec(`UPDATE runs SET created_at = now() - interval '2 days', prompt_tokens = 99999 WHERE id = $1`, old)

	since := time.Now().Add(-24 * time.Hour)
	for _, tt := range []struct {
		by      string
		keys    []string
		first   run.UsageRow
		started int64
	}{
		{run.ByInstallation, []string{"6", "5"}, run.UsageRow{Key: "6", Runs: 1, PromptTokens: 5000}, 0},
		{run.ByRepository, []string{"octo/other", "octo/pager-next"}, run.UsageRow{Key: "octo/other", Runs: 1, PromptTokens: 5000}, 0},
		{run.ByPerson, []string{"carol", "maintainer"}, run.UsageRow{Key: "carol", Runs: 1, PromptTokens: 5000}, 0},
	} {
		rows, err := p.Store.UsageReport(ctx, since, tt.by)
		if err != nil {
			t.Fatalf("by %s: %v", tt.by, err)
		}
		var keys []string
		for _, r := range rows {
			keys = append(keys, r.Key)
		}
		if !slices.Equal(keys, tt.keys) || rows[0] != tt.first {
			t.Errorf("by %s: keys %v, first %+v; want %v and %+v", tt.by, keys, rows[0], tt.keys, tt.first)
		}
		last := rows[len(rows)-1]
		if last.Runs != 2 || last.Started != 1 || last.PromptTokens != 3100 || last.CompletionTokens != 410 ||
			last.ModelMS != 41000 || last.SandboxPeakBytes != 2048 {
			t.Errorf("by %s: %+v, want installation 5's two runs (one started) summed", tt.by, last)
		}
	}
	if _, err := p.Store.UsageReport(ctx, since, "planet"); err == nil {
		t.Error("a report by an unknown grouping did not fail")
	}
}

// TestUsageLines: what `frognano runs show` and the run page print of a run's usage: each
// figure once, a missing one left out, and "not yet" in words for a run whose agent has not
// finished (issue 31: no "-" inside a sentence).
func TestUsageLines(t *testing.T) {
	t.Parallel()
	full := run.Record{State: run.StateSucceeded, PromptTokens: 3000, CompletionTokens: 400, Attempts: 2, ElapsedMS: 50_000,
		Usage: run.RunUsage{CachedTokens: 1200, ModelMS: 40_049, ToolMS: 5_000, TestMS: 3_000, SandboxCPUMS: 61_000,
			SandboxPeakBytes: 1536 << 20, AgentAttempts: 4, Model: "large"}}
	for _, tt := range []struct {
		name string
		r    run.Record
		want [][2]string
	}{
		{"Finished", full, [][2]string{
			{"tokens", "3000 prompt (1200 cached), 400 completion"},
			{"time", "50s in all: model 40s, tools 5s, tests 3s"},
			{"sandboxes", "1m1s CPU, peak memory 1.5 GiB"},
			{"attempts", "4 agent attempts in 2 tries"},
			{"model", "large"},
		}},
		// Before migration 0014: no cache, sandbox or agent attempt figures; one try.
		{"Older", run.Record{State: run.StateFailed, PromptTokens: 10, CompletionTokens: 2, Attempts: 1,
			Usage: run.RunUsage{ModelMS: 900}}, [][2]string{
			{"tokens", "10 prompt, 2 completion"},
			{"time", "model 900ms"},
			{"attempts", "1 try"},
		}},
		{"Running", run.Record{State: run.StateRunning, Attempts: 1}, [][2]string{
			{"tokens and time", "not yet: counted when the agent has finished"},
			{"attempts", "1 try"},
		}},
		{"Queued", run.Record{State: run.StateQueued}, [][2]string{
			{"tokens and time", "not yet: counted when the agent has finished"},
			{"attempts", "not tried yet"},
		}},
		// Refused before its agent ran: nothing was used, nothing is said.
		{"NeverRan", run.Record{State: run.StateSkipped}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := run.UsageLines(tt.r)
			if !slices.Equal(got, tt.want) {
				t.Errorf("UsageLines =\n%q, want\n%q", got, tt.want)
			}
			for _, l := range got {
				if strings.Contains(l[1], " - ") || strings.HasPrefix(l[1], "-") || strings.Contains(l[1], "(s)") {
					t.Errorf("%s: %q has a dash or an (s) for a figure", l[0], l[1])
				}
			}
		})
	}
}

// TestAuditOutcomeText: what the run page and `frognano runs show` say became of each write.
func TestAuditOutcomeText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		e    run.AuditEntry
		want string
	}{
		{run.AuditEntry{AuditEntry: githubapp.AuditEntry{Outcome: githubapp.OutcomeDone, Status: 201}}, "done (201)"},
		{run.AuditEntry{}, "done"},
		{run.AuditEntry{AuditEntry: githubapp.AuditEntry{Outcome: githubapp.OutcomeRefused, Status: 422}}, "refused (422)"},
		{run.AuditEntry{AuditEntry: githubapp.AuditEntry{Outcome: githubapp.OutcomeUnknown, Status: 502}}, "unknown (502): it may have happened; look on GitHub"},
		{run.AuditEntry{AuditEntry: githubapp.AuditEntry{Outcome: githubapp.OutcomeUnknown, Detail: "timed out while waiting for GitHub's answer"}},
			"unknown: timed out while waiting for GitHub's answer; it may have happened, look on GitHub"},
		{run.AuditEntry{AuditEntry: githubapp.AuditEntry{Outcome: githubapp.OutcomeNotSent, Detail: "cancelled before it was sent"}}, "not sent: cancelled before it was sent"},
		{run.AuditEntry{AuditEntry: githubapp.AuditEntry{Outcome: githubapp.OutcomeNotSent}}, "not sent"},
	} {
		if got := tt.e.OutcomeText(); got != tt.want {
			t.Errorf("OutcomeText(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
}

// TestParseBranch: BranchName's inverse, and nothing else is frognano's branch.
func TestParseBranch(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 7, 42, 1234567890} {
		if got, ok := run.ParseBranch(run.BranchName(n)); !ok || got != n {
			t.Errorf("ParseBranch(BranchName(%d)) = %d, %v", n, got, ok)
		}
	}
	for _, b := range []string{"main", "frognano/issue-0", "frognano/issue-07", "frognano/issue-7x", "x/frognano/issue-7",
		"frognano/issue-", "frognano/issue-12345678901", "Frognano/issue-7"} {
		if n, ok := run.ParseBranch(b); ok {
			t.Errorf("ParseBranch(%q) = %d: not a branch frognano made", b, n)
		}
	}
}

// TestUnfinished: waiting, queued and running runs may still run; the ends may not.
func TestUnfinished(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]bool{run.StateWaiting: true, run.StateQueued: true, run.StateRunning: true,
		run.StateSucceeded: false, run.StateFailed: false, run.StateCancelled: false, run.StateSkipped: false} {
		if got := run.Unfinished(state); got != want {
			t.Errorf("Unfinished(%s) = %v, want %v", state, got, want)
		}
	}
}

// TestCleanText: what PostgreSQL's text takes: valid UTF-8, no NUL.
func TestCleanText(t *testing.T) {
	t.Parallel()
	if got := run.CleanText("a\x00b\xffc é"); got != "ab\uFFFDc é" {
		t.Errorf("CleanText = %q", got)
	}
}

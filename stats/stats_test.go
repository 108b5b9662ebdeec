package stats_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/stats"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func ptr[T any](v T) *T { return &v }

// history is a small history in memory: a/one (id 1) with three pull requests (merged in 2h,
// patch 10 lines and people changed 3; merged in 4h, its change not measurable; gone) and
// b/two (id 2) with one closed; seven runs.
func history() *stats.History {
	return &stats.History{Since: at("2026-03-01T00:00:00Z"), Names: map[int64]string{1: "a/one", 2: "b/two"},
		Pulls: []stats.Pull{
			{RepoID: 1, Number: 1, Model: "m", Label: "frognano", OpenedAt: at("2026-03-02T10:00:00Z"), State: stats.StateMerged,
				EndedAt: ptr(at("2026-03-02T12:00:00Z")), PatchLines: ptr(10), PeopleLines: ptr(3), FollowUps: 1, Tokens: 100},
			{RepoID: 1, Number: 2, Model: "m", Label: "frognano", OpenedAt: at("2026-03-03T10:00:00Z"), State: stats.StateMerged,
				EndedAt: ptr(at("2026-03-03T14:00:00Z")), PatchLines: ptr(0), PeopleLines: ptr(5), Tokens: 300},
			{RepoID: 1, Number: 3, Model: "", Label: "", OpenedAt: at("2026-03-10T10:00:00Z"), State: "gone"},
			{RepoID: 2, Number: 9, Model: "m", Label: "mention", OpenedAt: at("2026-03-10T10:00:00Z"), State: stats.StateClosed, FollowUps: 2},
		},
		Runs: []stats.RunCount{
			{RepoID: 1, Model: "m", Week: at("2026-03-02T00:00:00Z"), Label: "frognano", Runs: 2},
			{RepoID: 1, Week: at("2026-03-09T00:00:00Z"), Runs: 1},
			{RepoID: 2, Model: "m", Week: at("2026-03-09T00:00:00Z"), Label: "mention", Runs: 4},
		}}
}

// TestFigures: the figures of a history computed by hand. Repository a/one: 3 runs; 3 pull
// requests opened, 2 merged (2h and 4h: median 3h; tokens (100+300)/2 = 200; people's share
// 3/10 = 0.3, the second not measured since its patch_lines is 0), 1 gone (opened only);
// acceptance 2/2; follow-ups 1/3. b/two: 4 runs; 1 closed: acceptance 0/1, no time, no
// tokens; follow-ups 2. Only a/one when keep accepts repository 1 alone.
func TestFigures(t *testing.T) {
	t.Parallel()
	h := history()
	if got := h.RepoIDs(); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("RepoIDs = %v", got)
	}
	rep, err := h.Figures(stats.ByRepository, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 2 {
		t.Fatalf("%d groups", len(rep.Groups))
	}
	one, two := rep.Groups[0], rep.Groups[1]
	if one.Key != "a/one" || one.RepoID != 1 || one.Runs != 3 || one.Opened != 3 || one.Merged != 2 || one.Closed != 0 || one.Open != 0 {
		t.Errorf("a/one: %+v", one)
	}
	if one.Acceptance == nil || one.Acceptance.Value != 1 || one.Acceptance.Decided != 2 {
		t.Errorf("a/one's acceptance: %+v", one.Acceptance)
	}
	if one.MedianTimeToMerge == nil || *one.MedianTimeToMerge != 3*time.Hour {
		t.Errorf("a/one's time to merge: %v", one.MedianTimeToMerge)
	}
	if one.MedianPeopleShare == nil || *one.MedianPeopleShare != 0.3 || one.ShareMeasured != 1 {
		t.Errorf("a/one's share: %v of %d", one.MedianPeopleShare, one.ShareMeasured)
	}
	if one.TokensPerMerged == nil || *one.TokensPerMerged != 200 || one.FollowUpsPerPull == nil || math.Abs(*one.FollowUpsPerPull-1.0/3) > 1e-12 {
		t.Errorf("a/one's tokens %v, follow-ups %v", one.TokensPerMerged, one.FollowUpsPerPull)
	}
	if two.Key != "b/two" || two.Runs != 4 || two.Closed != 1 || two.Acceptance == nil || two.Acceptance.Value != 0 ||
		two.MedianTimeToMerge != nil || two.TokensPerMerged != nil || two.MedianPeopleShare != nil || *two.FollowUpsPerPull != 2 {
		t.Errorf("b/two: %+v", two)
	}
	if rep.Total.Key != stats.TotalKey || rep.Total.Runs != 7 || rep.Total.Opened != 4 || rep.Total.Acceptance.Decided != 3 {
		t.Errorf("total: %+v", rep.Total)
	}

	kept, err := h.Figures(stats.ByLabel, func(id int64) bool { return id == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if len(kept.Groups) != 2 || kept.Groups[0].Key != stats.None || kept.Groups[1].Key != "frognano" || kept.Total.Runs != 3 || kept.Total.Opened != 3 {
		t.Errorf("a/one alone by label: %+v", kept)
	}
	if _, err := h.Figures("planet", nil); err == nil {
		t.Error("figures by an unknown grouping did not fail")
	}
}

// TestFiguresKeepRepositoriesOfOneNameApart: two repositories that held one name at different
// times are two groups (the id decides), each under the name.
func TestFiguresKeepRepositoriesOfOneNameApart(t *testing.T) {
	t.Parallel()
	h := &stats.History{Names: map[int64]string{1: "a/x", 2: "a/x"}, Runs: []stats.RunCount{{RepoID: 1, Runs: 1}, {RepoID: 2, Runs: 2}}}
	rep, err := h.Figures(stats.ByRepository, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 2 || rep.Groups[0].RepoID != 1 || rep.Groups[1].RepoID != 2 || rep.Groups[1].Key != "a/x" {
		t.Errorf("groups: %+v", rep.Groups)
	}
}

func TestWeek(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ at, want string }{
		{"2026-03-02T00:00:00Z", "2026-W10"},
		{"2026-03-08T23:59:59Z", "2026-W10"},
		{"2026-03-09T00:00:00Z", "2026-W11"},
		{"2027-01-01T10:00:00Z", "2026-W53"},      // a Friday: ISO week 53 of 2026
		{"2026-03-08T23:30:00-02:00", "2026-W11"}, // Monday 01:30 UTC
	} {
		if got := stats.Week(at(tt.at)); got != tt.want {
			t.Errorf("Week(%s) = %s, want %s", tt.at, got, tt.want)
		}
	}
}

func TestParseSince(t *testing.T) {
	t.Parallel()
	now := at("2026-03-20T15:30:00Z")
	for _, tt := range []struct {
		in   string
		want string // "" : an error
	}{
		{"", "2025-12-20T00:00:00Z"}, // 90 days before the start of today
		{"2026-03-01", "2026-03-01T00:00:00Z"},
		{"90d", "2025-12-20T15:30:00Z"},
		{"2w", "2026-03-06T15:30:00Z"},
		{"36h", "2026-03-19T03:30:00Z"},
		{" 1d ", "2026-03-19T15:30:00Z"},
		{"March", ""}, {"-3d", ""}, {"0d", ""}, {"99999999d", ""}, {"-1h", ""}, {"2026-13-01", ""}, {"d", ""},
	} {
		got, err := stats.ParseSince(tt.in, now)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParseSince(%q) = %v, want an error", tt.in, got)
		case tt.want != "" && (err != nil || !got.Equal(at(tt.want))):
			t.Errorf("ParseSince(%q) = %v, %v, want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestFormats(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0m", 45 * time.Minute: "45m", 5*time.Hour + 30*time.Minute: "5h30m", 27 * time.Hour: "27h",
		48 * time.Hour: "2d", 76*time.Hour + 20*time.Minute: "3d4h",
	} {
		if got := stats.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	for v, want := range map[float64]string{0: "0%", 0.045: "4.5%", 0.125: "13%", 2.0 / 3: "67%", 1: "100%", 1.5: "150%"} {
		if got := stats.Percent(v); got != want {
			t.Errorf("Percent(%v) = %q, want %q", v, got, want)
		}
	}
	if got := stats.AcceptanceText(&stats.Rate{Merged: 2, Decided: 3, Value: 2.0 / 3, Low: 0.2077, High: 0.9385}); got != "67% (21% to 94%), 2 of 3" {
		t.Errorf("AcceptanceText = %q", got)
	}
	if got := stats.AcceptanceText(nil); got != "none decided" {
		t.Errorf("AcceptanceText(nil) = %q", got)
	}
}

// TestStoreReadsTheTables: History reads frognano's own pull requests opened since the start
// (not a person's, not older ones) with the tokens of the runs that published to each, and the
// runs created since the start by repository, model, week and label; PullStates finds each
// asked pull request by repository id and number.
func TestStoreReadsTheTables(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO runs (id, hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler,
			state, created_at, trigger, trigger_label, model, pr_number, prompt_tokens, completion_tokens)
		VALUES
		(1, 'h', 'd1', 5, 42, 'octo', 'old-name', 1, 'a', 'succeeded', '2026-03-02T09:00:00Z', 'label', 'frognano', 'm', 7, 100, 10),
		(2, 'h', 'd2', 5, 42, 'octo', 'pager', 7, 'b', 'succeeded', '2026-03-03T09:00:00Z', 'followup', NULL, 'm', 7, 50, 5),
		(3, 'h', 'd3', 5, 43, 'octo', 'ledger', 7, 'c', 'succeeded', '2026-03-03T09:00:00Z', 'api', NULL, NULL, 7, 999, 0),
		(4, 'h', 'd4', 5, 42, 'octo', 'pager', 8, 'a', 'failed', '2026-02-03T09:00:00Z', NULL, NULL, NULL, NULL, NULL, NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO pull_outcomes (repo_id, number, installation_id, owner, repo, ours, issue, first_run_id,
			last_run_id, model, opened_at, state, ended_at, patch_lines, people_lines, followups)
		VALUES
		(42, 7, 5, 'octo', 'pager',  true,  1,    1, 2, 'm', '2026-03-02T10:00:00Z', 'merged', '2026-03-04T10:00:00Z', 12, 3, 1),
		(43, 7, 5, 'octo', 'ledger', false, NULL, 3, 3, NULL, '2026-03-03T10:00:00Z', 'open', NULL, NULL, NULL, 0),
		(42, 5, 5, 'octo', 'pager',  true,  5,    4, 4, 'm', '2026-02-03T10:00:00Z', 'closed', '2026-02-04T10:00:00Z', NULL, NULL, 0)`); err != nil {
		t.Fatal(err)
	}
	h, err := stats.NewStore(pool).History(ctx, at("2026-03-01T00:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Pulls) != 1 {
		t.Fatalf("pull requests: %+v", h.Pulls)
	}
	p := h.Pulls[0]
	if p.RepoID != 42 || p.Number != 7 || p.Label != "frognano" || p.Model != "m" || p.State != stats.StateMerged || p.EndedAt == nil ||
		*p.PatchLines != 12 || *p.PeopleLines != 3 || p.FollowUps != 1 || p.Tokens != 165 {
		t.Errorf("the pull request: %+v (tokens: 100+10 and 50+5 of runs 1 and 2, not run 3's of another repository)", p)
	}
	runs := map[int64]int{}
	for _, r := range h.Runs {
		runs[r.RepoID] += r.Runs
	}
	if runs[42] != 2 || runs[43] != 1 || len(h.Runs) != 3 {
		t.Errorf("the runs: %+v", h.Runs)
	}
	if h.Names[42] != "octo/pager" || h.Names[43] != "octo/ledger" {
		t.Errorf("names: %v (the newest run's)", h.Names)
	}
	rep, err := h.Figures(stats.ByLabel, nil)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]int{}
	for _, g := range rep.Groups {
		labels[g.Key] = g.Runs
	}
	if labels["frognano"] != 1 || labels["followup"] != 1 || labels["api"] != 1 || len(labels) != 3 {
		t.Errorf("runs by label: %v", labels)
	}
	states, err := stats.NewStore(pool).PullStates(ctx, []stats.PullKey{{RepoID: 42, Number: 7}, {RepoID: 43, Number: 7}, {RepoID: 42, Number: 6}})
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 2 || states[stats.PullKey{RepoID: 42, Number: 7}] != "merged" || states[stats.PullKey{RepoID: 43, Number: 7}] != "open" {
		t.Errorf("PullStates = %v", states)
	}
	if states, err := stats.NewStore(pool).PullStates(ctx, nil); err != nil || len(states) != 0 {
		t.Errorf("PullStates(nil) = %v, %v", states, err)
	}
}

// FuzzParseSince: the page's start is a signed-in person's text; whatever it is, ParseSince
// answers an error or a start no later than now, and never panics.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"", "90d", "12w", "36h", "2026-03-01", "-3d", "9999999999999999999d", "1e9h", "0x10d", "2026-02-30"} {
		f.Add(s)
	}
	now := at("2026-03-20T15:30:00Z")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := stats.ParseSince(s, now)
		if err == nil && got.After(now) && len(s) != len("2006-01-02") {
			t.Errorf("ParseSince(%q) = %v, after now", s, got)
		}
	})
}

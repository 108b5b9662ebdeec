package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/stats"
)

// statsDB is a migrated schema holding a known history, and the environment that points the
// commands at it. Three repositories: octo/pager (id 42), octo/ledger (43), acme/tool (77).
//
// Runs (created, repository, kind, trigger / trigger_label, model, pull request it published
// to, prompt + completion tokens):
//
//	r1  2026-03-02 pager  issue    label frognano  default  #101  1000+100 = 1100
//	r2  2026-03-03 pager  issue    label frognano  default  #102  2000+200 = 2200
//	r3  2026-03-04 pager  followup followup        default  #102   500+50  =  550
//	r4  2026-03-10 pager  issue    label ai-fix    large    #103  3000+300 = 3300
//	r5  2026-03-11 ledger issue    mention         large    #201  4000+400 = 4400
//	r6  2026-03-12 ledger issue    api             default  #202  1500+150 = 1650
//	r7  2026-03-16 tool   issue    label frognano  default  #301   700+70  =  770
//	r8  2026-02-20 tool   issue    label frognano  default  #302  9999     (before the period)
//	r9  2026-03-04 pager  followup mention         default  #104   100+10  (a person's pull request)
//	r10 2026-03-17 pager  issue    label frognano  (none)   -      (failed before its agent ran)
//	r11 2026-03-13 ledger followup followup        default  -       800+80  (on #202, published nothing)
//
// frognano's pull requests (pull_outcomes; opened, state, ended, patch/people lines, follow-ups):
//
//	P1 pager  #101 2026-03-02 10:00 merged 2026-03-02 16:00 (6h)   10/0  0  model default, first run r1
//	P2 pager  #102 2026-03-03 09:00 merged 2026-03-05 09:00 (48h)  20/5  2  model default, first run r2
//	P3 pager  #103 2026-03-10 12:00 closed 2026-03-11 12:00        -     1  model large,   first run r4
//	P4 ledger #201 2026-03-11 08:00 merged 2026-03-11 20:00 (12h)  8/not measured 0  large, r5
//	P5 ledger #202 2026-03-12 08:00 open                           -     1  model default, first run r6
//	P6 tool   #301 2026-03-16 08:00 gone (deleted while open)      -     0  model default, first run r7
//	P7 tool   #302 2026-02-20 merged (opened before the period: not counted)
//	P8 pager  #104 a person's pull request (ours false: not counted), merged
//
// The figures since 2026-03-01, computed by hand (Wilson's interval with z = 1.959964:
// centre (p + z²/2n)/(1 + z²/n), half-width z/(1 + z²/n)·sqrt(p(1-p)/n + z²/4n²)):
//
//	by repository
//	  octo/pager:  runs r1 r2 r3 r4 r9 r10 = 6; opened P1 P2 P3 = 3, merged 2, closed 1, open 0;
//	               acceptance 2/3 = 0.6667 [0.2077, 0.9385]; time to merge median(6h, 48h) = 27h;
//	               people's share median(0/10, 5/20) = median(0, 0.25) = 0.125 of 2;
//	               follow-ups (0+2+1)/3 = 1; tokens per merged (1100 + 2200+550)/2 = 1925
//	  octo/ledger: runs r5 r6 r11 = 3; opened 2, merged 1, closed 0, open 1; acceptance 1/1 = 1
//	               [0.2065, 1]; time to merge 12h; share none measured; follow-ups (0+1)/2 = 0.5;
//	               tokens per merged 4400/1 = 4400 (r11 published nothing)
//	  acme/tool:   runs r7 = 1 (r8 is before the period); opened 1 (gone: neither merged, closed
//	               nor open); no acceptance, no time, no share; follow-ups 0/1 = 0; no tokens
//	  all:         runs 10; opened 6, merged 3, closed 1, open 1; acceptance 3/4 = 0.75
//	               [0.3006, 0.9544]; time to merge median(6h, 48h, 12h) = 12h; share 0.125 of 2;
//	               follow-ups (0+2+1+0+1+0)/6 = 0.6667; tokens per merged (1100+2750+4400)/3 = 2750
//	by week (runs by creation, pull requests by opening, ISO weeks in UTC)
//	  2026-W10 (2 to 8 March): runs r1 r2 r3 r9 = 4; P1 P2: opened 2, merged 2; acceptance 2/2
//	               [0.3424, 1]; 27h; share 0.125; follow-ups 1; tokens 3850/2 = 1925
//	  2026-W11:    runs r4 r5 r6 r11 = 4; P3 P4 P5: opened 3, merged 1, closed 1, open 1;
//	               acceptance 1/2 = 0.5 [0.0945, 0.9055]; 12h; no share; follow-ups 2/3; tokens 4400
//	  2026-W12:    runs r7 r10 = 2; P6: opened 1; follow-ups 0; the rest none
//	by model
//	  -:       runs r10 = 1; no pull request
//	  default: runs r1 r2 r3 r6 r7 r9 r11 = 7; P1 P2 P5 P6: opened 4, merged 2, open 1;
//	           acceptance 2/2; 27h; share 0.125; follow-ups 3/4 = 0.75; tokens 1925
//	  large:   runs r4 r5 = 2; P3 P4: opened 2, merged 1, closed 1; acceptance 1/2; 12h;
//	           no share; follow-ups 1/2 = 0.5; tokens 4400
//	by label (the first run's label, else its trigger)
//	  ai-fix:   runs r4 = 1; P3: opened 1, closed 1; acceptance 0/1 = 0 [0, 0.7935]; follow-ups 1
//	  api:      runs r6 = 1; P5: opened 1, open 1; no acceptance; follow-ups 1
//	  followup: runs r3 r11 = 2; no pull request
//	  frognano: runs r1 r2 r7 r10 = 4; P1 P2 P6: opened 3, merged 2; acceptance 2/2; 27h;
//	            share 0.125; follow-ups 2/3; tokens 1925
//	  mention:  runs r5 r9 = 2; P4: opened 1, merged 1; acceptance 1/1; 12h; no share;
//	            follow-ups 0; tokens 4400
func statsDB(t *testing.T) func(string) string {
	t.Helper()
	pool := dbtest.New(t)
	ctx := context.Background()
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	_, err := pool.Exec(ctx, `INSERT INTO runs (id, hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler,
			state, created_at, kind, trigger, trigger_label, model, pr_number, prompt_tokens, completion_tokens)
		VALUES
		(1,  'h', 'd1',  5, 42, 'octo', 'pager',  1,   'alice', 'succeeded', '2026-03-02T09:50:00Z', 'issue',    'label',    'frognano', 'default', 101, 1000, 100),
		(2,  'h', 'd2',  5, 42, 'octo', 'pager',  2,   'alice', 'succeeded', '2026-03-03T08:50:00Z', 'issue',    'label',    'frognano', 'default', 102, 2000, 200),
		(3,  'h', 'd3',  5, 42, 'octo', 'pager',  102, 'bob',   'succeeded', '2026-03-04T10:00:00Z', 'followup', 'followup', NULL,       'default', 102, 500,  50),
		(4,  'h', 'd4',  5, 42, 'octo', 'pager',  3,   'alice', 'succeeded', '2026-03-10T11:50:00Z', 'issue',    'label',    'ai-fix',   'large',   103, 3000, 300),
		(5,  'h', 'd5',  5, 43, 'octo', 'ledger', 4,   'carol', 'succeeded', '2026-03-11T07:50:00Z', 'issue',    'mention',  NULL,       'large',   201, 4000, 400),
		(6,  'h', 'd6',  5, 43, 'octo', 'ledger', 5,   'token:ci', 'succeeded', '2026-03-12T07:50:00Z', 'issue', 'api',      NULL,       'default', 202, 1500, 150),
		(7,  'h', 'd7',  9, 77, 'acme', 'tool',   6,   'dave',  'succeeded', '2026-03-16T07:50:00Z', 'issue',    'label',    'frognano', 'default', 301, 700,  70),
		(8,  'h', 'd8',  9, 77, 'acme', 'tool',   7,   'dave',  'succeeded', '2026-02-20T07:50:00Z', 'issue',    'label',    'frognano', 'default', 302, 9000, 999),
		(9,  'h', 'd9',  5, 42, 'octo', 'pager',  104, 'erin',  'succeeded', '2026-03-04T12:00:00Z', 'followup', 'mention',  NULL,       'default', 104, 100,  10),
		(10, 'h', 'd10', 5, 42, 'octo', 'pager',  8,   'alice', 'failed',    '2026-03-17T07:50:00Z', 'issue',    'label',    'frognano', NULL,      NULL, NULL, NULL),
		(11, 'h', 'd11', 5, 43, 'octo', 'ledger', 202, 'carol', 'failed',    '2026-03-13T07:50:00Z', 'followup', 'followup', NULL,       'default', NULL, 800,  80)`)
	if err != nil {
		t.Fatal(err)
	}
	// A pull request deleted while open is recorded as gone by the outcome writer (issue 31);
	// the state must count as neither merged, closed nor open, whatever the constraint holds.
	if _, err := pool.Exec(ctx, `ALTER TABLE pull_outcomes DROP CONSTRAINT IF EXISTS pull_outcomes_state_check`); err != nil {
		t.Fatal(err)
	}
	_, err = pool.Exec(ctx, `INSERT INTO pull_outcomes (repo_id, number, installation_id, owner, repo, ours, issue, first_run_id,
			last_run_id, model, opened_at, state, ended_at, patch_lines, people_lines, followups)
		VALUES
		(42, 101, 5, 'octo', 'pager',  true,  1,    1, 1, 'default', '2026-03-02T10:00:00Z', 'merged', '2026-03-02T16:00:00Z', 10, 0,    0),
		(42, 102, 5, 'octo', 'pager',  true,  2,    2, 3, 'default', '2026-03-03T09:00:00Z', 'merged', '2026-03-05T09:00:00Z', 20, 5,    2),
		(42, 103, 5, 'octo', 'pager',  true,  3,    4, 4, 'large',   '2026-03-10T12:00:00Z', 'closed', '2026-03-11T12:00:00Z', NULL, NULL, 1),
		(43, 201, 5, 'octo', 'ledger', true,  4,    5, 5, 'large',   '2026-03-11T08:00:00Z', 'merged', '2026-03-11T20:00:00Z', 8,  NULL, 0),
		(43, 202, 5, 'octo', 'ledger', true,  5,    6, 6, 'default', '2026-03-12T08:00:00Z', 'open',   NULL,                   NULL, NULL, 1),
		(77, 301, 9, 'acme', 'tool',   true,  6,    7, 7, 'default', '2026-03-16T08:00:00Z', 'gone',   NULL,                   NULL, NULL, 0),
		(77, 302, 9, 'acme', 'tool',   true,  7,    8, 8, 'default', '2026-02-20T08:00:00Z', 'merged', '2026-02-21T08:00:00Z', 4,  1,    0),
		(42, 104, 5, 'octo', 'pager',  false, NULL, 9, 9, 'default', '2026-03-04T12:10:00Z', 'merged', '2026-03-05T12:00:00Z', NULL, NULL, 0)`)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": svcDatabaseURL(t, schema)}
	return func(k string) string { return env[k] }
}

// wantFigures are one group's hand-computed figures; NaN stands for none (JSON null).
type wantFigures struct {
	key                                string
	runs, opened, merged, closed, open int
	acc, lo, hi, hours, share          float64
	measured                           int
	follow, tokens                     float64
}

var none = math.NaN()

// TestStatsCommandFiguresAreTheHandComputedOnes checks `frognano stats --format json` for each
// grouping against the figures computed by hand in statsDB's comment.
func TestStatsCommandFiguresAreTheHandComputedOnes(t *testing.T) {
	t.Parallel()
	getenv := statsDB(t)
	all := wantFigures{"(all)", 10, 6, 3, 1, 1, 0.75, 0.3006, 0.9544, 12, 0.125, 2, 4.0 / 6, 2750}
	for _, tt := range []struct {
		by   string
		want []wantFigures
	}{
		{"repository", []wantFigures{
			{"acme/tool", 1, 1, 0, 0, 0, none, none, none, none, none, 0, 0, none},
			{"octo/ledger", 3, 2, 1, 0, 1, 1, 0.2065, 1, 12, none, 0, 0.5, 4400},
			{"octo/pager", 6, 3, 2, 1, 0, 2.0 / 3, 0.2077, 0.9385, 27, 0.125, 2, 1, 1925},
		}},
		{"week", []wantFigures{
			{"2026-W10", 4, 2, 2, 0, 0, 1, 0.3424, 1, 27, 0.125, 2, 1, 1925},
			{"2026-W11", 4, 3, 1, 1, 1, 0.5, 0.0945, 0.9055, 12, none, 0, 2.0 / 3, 4400},
			{"2026-W12", 2, 1, 0, 0, 0, none, none, none, none, none, 0, 0, none},
		}},
		{"model", []wantFigures{
			{"-", 1, 0, 0, 0, 0, none, none, none, none, none, 0, none, none},
			{"default", 7, 4, 2, 0, 1, 1, 0.3424, 1, 27, 0.125, 2, 0.75, 1925},
			{"large", 2, 2, 1, 1, 0, 0.5, 0.0945, 0.9055, 12, none, 0, 0.5, 4400},
		}},
		{"label", []wantFigures{
			{"ai-fix", 1, 1, 0, 1, 0, 0, 0, 0.7935, none, none, 0, 1, none},
			{"api", 1, 1, 0, 0, 1, none, none, none, none, none, 0, 1, none},
			{"followup", 2, 0, 0, 0, 0, none, none, none, none, none, 0, none, none},
			{"frognano", 4, 3, 2, 0, 0, 1, 0.3424, 1, 27, 0.125, 2, 2.0 / 3, 1925},
			{"mention", 2, 1, 1, 0, 0, 1, 0.2065, 1, 12, none, 0, 0, 4400},
		}},
	} {
		t.Run(tt.by, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), []string{"stats", "--since", "2026-03-01", "--by", tt.by, "--format", "json"}, getenv, &stdout, &stderr); err != nil {
				t.Fatalf("frognano stats --by %s: %v\n%s", tt.by, err, stderr.String())
			}
			var got struct {
				Since  string      `json:"since"`
				By     string      `json:"by"`
				Groups []statsJSON `json:"groups"`
				Total  statsJSON   `json:"total"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("the JSON does not parse: %v\n%s", err, stdout.String())
			}
			if got.Since != "2026-03-01T00:00:00Z" || got.By != tt.by {
				t.Errorf("since %q by %q", got.Since, got.By)
			}
			if len(got.Groups) != len(tt.want) {
				t.Fatalf("%d groups, want %d:\n%s", len(got.Groups), len(tt.want), stdout.String())
			}
			for i, w := range tt.want {
				checkFigures(t, got.Groups[i], w)
			}
			checkFigures(t, got.Total, all)
		})
	}
}

func checkFigures(t *testing.T, g statsJSON, w wantFigures) {
	t.Helper()
	if g.Key != w.key {
		t.Errorf("group %q, want %q", g.Key, w.key)
		return
	}
	if g.Runs != w.runs || g.Opened != w.opened || g.Merged != w.merged || g.Closed != w.closed || g.Open != w.open {
		t.Errorf("%s: runs %d opened %d merged %d closed %d open %d, want %d %d %d %d %d", w.key,
			g.Runs, g.Opened, g.Merged, g.Closed, g.Open, w.runs, w.opened, w.merged, w.closed, w.open)
	}
	near := func(name string, got *float64, want float64, tol float64) {
		switch {
		case math.IsNaN(want) && got != nil:
			t.Errorf("%s: %s %v, want none", w.key, name, *got)
		case !math.IsNaN(want) && got == nil:
			t.Errorf("%s: %s none, want %v", w.key, name, want)
		case got != nil && math.Abs(*got-want) > tol:
			t.Errorf("%s: %s %v, want %v", w.key, name, *got, want)
		}
	}
	near("acceptance", g.Acceptance, w.acc, 1e-9)
	near("acceptance_low", g.AcceptanceLow, w.lo, 5e-5)
	near("acceptance_high", g.AcceptanceHigh, w.hi, 5e-5)
	near("median_hours_to_merge", g.MedianHoursToMerge, w.hours, 1e-9)
	near("median_people_share", g.MedianPeopleShare, w.share, 1e-9)
	near("followups_per_pr", g.FollowUpsPerPR, w.follow, 1e-9)
	near("tokens_per_merged_pr", g.TokensPerMergedPR, w.tokens, 1e-9)
	if g.ShareMeasured != w.measured {
		t.Errorf("%s: share of %d pull requests, want %d", w.key, g.ShareMeasured, w.measured)
	}
}

// TestStatsCommandTableAndCSV: the table shows the same figures for people ("-" where there
// is none), with the row of all; the CSV has one column per figure, empty where there is none.
func TestStatsCommandTableAndCSV(t *testing.T) {
	t.Parallel()
	getenv := statsDB(t)
	cli := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append([]string{"stats", "--since", "2026-03-01"}, args...), getenv, &stdout, &stderr); err != nil {
			t.Fatalf("frognano stats %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	table := cli()
	for _, want := range []string{
		"octo/pager     6       3       2       1     0      67% (21%-94%)           27h       13% of 2            1.00           1925",
		"acme/tool     1       1       0       0     0                      -             -               -           0.00              -",
		"(all)    10       6       3       1     1      75% (30%-95%)           12h       13% of 2            0.67           2750",
	} {
		if !strings.Contains(strings.Join(strings.Fields(table), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(cli("--by", "week", "--format", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		append([]string{"week"}, statsColumns...),
		{"2026-W10", "4", "2", "2", "0", "0", "1.0000", "0.3424", "1.0000", "27.00", "0.1250", "1.00", "1925"},
		{"2026-W11", "4", "3", "1", "1", "1", "0.5000", "0.0945", "0.9055", "12.00", "", "0.67", "4400"},
		{"2026-W12", "2", "1", "0", "0", "0", "", "", "", "", "", "0.00", ""},
		{"(all)", "10", "6", "3", "1", "1", "0.7500", "0.3006", "0.9544", "12.00", "0.1250", "0.67", "2750"},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d CSV rows, want %d: %q", len(rows), len(want), rows)
	}
	for i := range want {
		if strings.Join(rows[i], ",") != strings.Join(want[i], ",") {
			t.Errorf("CSV row %d: %q, want %q", i, rows[i], want[i])
		}
	}
}

// TestStatsCommandBadFlags: each mistake is a usage error (exit 2) that says what to give.
func TestStatsCommandBadFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "March"}, `--since "March" is neither a date (YYYY-MM-DD) nor a duration (90d, 12w, 36h)`},
		{[]string{"--since", "-3d"}, `--since "-3d" is neither a date`},
		{[]string{"--by", "team"}, `--by "team": use repository, model, week or label`},
		{[]string{"--format", "xml"}, `--format "xml": use table, csv or json`},
		{[]string{"--limit", "3"}, "flag provided but not defined: -limit"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{nil, "DATABASE_URL is not set"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), append([]string{"stats"}, tt.args...), func(string) string { return "" }, &stdout, &stderr)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("frognano stats %v: %v, want a usage error saying %q", tt.args, err, tt.want)
		}
	}
}

// TestStatsCommandUnreachableDatabase: a database that does not answer is a broken set-up
// (exit 3), said in one line, as docs/stats.md promises.
func TestStatsCommandUnreachableDatabase(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	env := map[string]string{"DATABASE_URL": "postgres://frognano@" + addr + "/frognano?connect_timeout=2"}
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"stats"}, func(k string) string { return env[k] }, &stdout, &stderr)
	if err == nil || exitCode(err) != 3 {
		t.Errorf("frognano stats without a database: %v (exit %d), want exit 3", err, exitCode(err))
	}
}

// TestStatsTableAndCSVKeepKeysInert: a label is a person's text: the table shows its control
// characters as escapes (a tab would shift the columns), and the CSV writes a key that a
// spreadsheet would take for a formula after a quote mark; "-" (none recorded) stays as is.
func TestStatsTableAndCSVKeepKeysInert(t *testing.T) {
	t.Parallel()
	rep := stats.Report{By: stats.ByLabel, Groups: []stats.Figures{{Key: "-", Runs: 1}, {Key: "=HYPERLINK(\"http://x\")", Runs: 2},
		{Key: "bug\tfix\u202e", Runs: 3}, {Key: "@mention", Runs: 4}}, Total: stats.Figures{Key: stats.TotalKey, Runs: 10}}
	var csvOut, table bytes.Buffer
	if err := writeStats(&csvOut, rep, "csv"); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range rows[1:] {
		keys = append(keys, r[0])
	}
	if got := strings.Join(keys, "|"); got != "-|'=HYPERLINK(\"http://x\")|bug\tfix\u202e|'@mention|(all)" {
		t.Errorf("CSV keys: %q", got)
	}
	if err := writeStats(&table, rep, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), `"bug\tfix\u202e"`) || strings.Contains(table.String(), "\u202e") {
		t.Errorf("the table shows a label's controls as they are:\n%s", table.String())
	}
}

// TestReadingCommandsRefuseAnUnmigratedDatabase: the commands that read or write frognano's
// tables say what to run on a database this binary's migrations have not reached, instead of
// failing on a missing table.
func TestReadingCommandsRefuseAnUnmigratedDatabase(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": doctorEmptyDatabase(t)}
	out := filepath.Join(t.TempDir(), "export.jsonl")
	for _, args := range [][]string{{"stats"}, {"runs"}, {"runs", "show", "1"}, {"usage"}, {"budget", "show", "--installation", "1"},
		{"tokens", "list"}, {"export", "--repo", "o/r", "--format", "leaf", "--out", out}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, func(k string) string { return env[k] }, &stdout, &stderr)
		if err == nil || exitCode(err) != 3 || !strings.Contains(err.Error(), "run `frognano migrate` first") {
			t.Errorf("frognano %v on an unmigrated database: %v (exit %d), want exit 3 naming frognano migrate", args, err, exitCode(err))
		}
	}
}

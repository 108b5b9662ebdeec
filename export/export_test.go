package export_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/export"
	"github.com/frognano/frognano/internal/secretform"
	"github.com/frognano/frognano/internal/secrettest"
	"github.com/frognano/frognano/runner/leaf"
)

// history is a seeded database: runs of three repositories (two named by the tests, one
// never), with pull requests merged, closed and open, a follow-up, a run that broke on a tool,
// runs that must never be exported, and the ids of each.
type history struct {
	*db
	ids map[string]int64
}

const testsEvent = `{"environment":"python 3.12","per_test":true,
	"before":{"command":"pytest -q","exit_code":1,"duration_ms":900,"passed":3,"failed":1,"tail":"1 failed"},
	"after":{"command":"pytest -q","exit_code":0,"duration_ms":800,"passed":5,"failed":0,"tail":"5 passed"},
	"tests":[{"name":"tests/test_f.py::test_neg","before":"fail","after":"pass","change":"fixed"},
		{"name":"tests/test_f.py::test_new","before":"","after":"pass","change":"new"},
		{"name":"tests/test_f.py::test_pos","before":"pass","after":"pass"}]}`

func newHistory(t *testing.T) *history {
	t.Helper()
	h := &history{db: newDB(t), ids: map[string]int64{}}
	pager := func(r run) run { r.repoID, r.owner, r.repo = 42, "octo", "pager"; return r }
	// Before a rename: the same repository (id 42) under its old name.
	h.ids["renamed"] = h.seed(run{repoID: 42, owner: "octo", repo: "old-pager", issue: 9, steps: plainSteps(1), check: "neutral"})
	// Another repository once held the name octo/pager, and has since been renamed.
	h.ids["other-id"] = h.seed(run{repoID: 99, owner: "octo", repo: "pager", issue: 1, steps: plainSteps(1)})
	h.seed(run{repoID: 99, owner: "octo", repo: "pager-archive", issue: 2, steps: plainSteps(1)})
	h.ids["merged"] = h.seed(pager(run{issue: 1, pr: 10, steps: plainSteps(2), check: "success", model: "default", tests: raw(testsEvent)}))
	h.ids["followup"] = h.seed(pager(run{kind: "followup", issue: 10, steps: plainSteps(1), check: "success", model: "large",
		request: "please also handle negative numbers"}))
	h.ids["closed"] = h.seed(pager(run{issue: 2, pr: 11, steps: plainSteps(1), check: "failure", unanswered: 2, state: "failed"}))
	h.ids["nopr"] = h.seed(pager(run{issue: 3, steps: plainSteps(1), state: "failed"}))
	h.ids["open"] = h.seed(pager(run{issue: 4, pr: 12, steps: plainSteps(3), check: "success"}))
	// Never exported: a running run, a run whose model never answered (no turn), and a
	// repository nobody named.
	h.ids["running"] = h.seed(pager(run{issue: 5, steps: plainSteps(1), state: "running"}))
	h.ids["noturn"] = h.seed(pager(run{issue: 6, traj: mustJSON(t, (&leaf.Result{Messages: []leaf.Message{text("system", "s"), text("user", "u")},
		ExitReason: leaf.ExitLLMError}).Trajectory("run-x", "octo/pager#6", 0, "", false))}))
	h.ids["ledger"] = h.seed(run{repoID: 43, owner: "octo", repo: "ledger", issue: 7, pr: 20, steps: plainSteps(1), check: "success"})
	h.ids["acme"] = h.seed(run{repoID: 77, owner: "acme", repo: "private", issue: 8, steps: [][]call{{{"c1", "Read", `{"file_path":"ACME-PRIVATE-MARKER"}`, "ACME-PRIVATE-MARKER"}}}})
	h.outcome(outcome{repoID: 42, owner: "octo", repo: "pager", number: 10, issue: 1, firstRun: h.ids["merged"], lastRun: h.ids["followup"],
		state: "merged", ours: true, peopleCommits: 2, patchLines: intp(40), peopleLines: intp(10), mergeSHA: "m3rge", followups: 1})
	h.outcome(outcome{repoID: 42, owner: "octo", repo: "pager", number: 11, issue: 2, firstRun: h.ids["closed"], lastRun: h.ids["closed"], state: "closed", ours: true})
	h.outcome(outcome{repoID: 42, owner: "octo", repo: "pager", number: 12, issue: 4, firstRun: h.ids["open"], lastRun: h.ids["open"], state: "open", ours: true})
	h.outcome(outcome{repoID: 43, owner: "octo", repo: "ledger", number: 20, issue: 7, firstRun: h.ids["ledger"], lastRun: h.ids["ledger"], state: "merged", ours: true})
	return h
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func repos(names ...string) []export.Repo {
	var out []export.Repo
	for _, n := range names {
		r, err := export.ParseRepo(n)
		if err != nil {
			panic(err)
		}
		out = append(out, r)
	}
	return out
}

// exportTo runs an export of h with opt to a new file, and returns its path.
func (h *history) exportTo(t *testing.T, opt export.Options) (string, export.Summary) {
	t.Helper()
	if opt.Out == "" {
		opt.Out = filepath.Join(t.TempDir(), "runs.jsonl")
	}
	sum, err := export.Run(context.Background(), h.pool, opt)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	return opt.Out, sum
}

func runIDs(e exported) []int64 {
	var ids []int64
	for _, l := range e.labels {
		ids = append(ids, l.RunID)
	}
	return ids
}

func (h *history) idsOf(names ...string) []int64 {
	var ids []int64
	for _, n := range names {
		ids = append(ids, h.ids[n])
	}
	slices.Sort(ids)
	return ids
}

// TestChatExportIsTheFineTuningFormat: every record of a chat-jsonl export is accepted by the
// fine-tuning format's schema, holds nothing else, pairs each call with its answer (the run
// that broke on a tool is cut before its unanswered turn, which its labels count), carries
// Leaf's tools in the model's property order, and has its labels on the same line number.
func TestChatExportIsTheFineTuningFormat(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	out, sum := h.exportTo(t, export.Options{Repos: repos("octo/pager", "octo/ledger"), Format: export.FormatChat})
	e := readBack(t, out, export.FormatChat)
	want := h.idsOf("renamed", "merged", "followup", "closed", "nopr", "open", "ledger")
	if got := runIDs(e); !slices.Equal(got, want) {
		t.Fatalf("exported runs %v, want %v", got, want)
	}
	if sum.Written != len(want) || sum.LastID != want[len(want)-1] || len(sum.Skipped) != 0 {
		t.Errorf("summary %+v", sum)
	}
	tools := mustJSON(t, leaf.ToolSchemas())
	for i, line := range e.records {
		var rec struct {
			Messages []map[string]any `json:"messages"`
			Tools    json.RawMessage  `json:"tools"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		if string(rec.Tools) != string(tools) {
			t.Errorf("record %d's tools are not Leaf's, in order:\n%s", i+1, rec.Tools)
		}
		if rec.Messages[0]["content"] != leaf.SystemPrompt || rec.Messages[1]["content"] != "Fix the bug in f." {
			t.Errorf("record %d starts %v", i+1, rec.Messages[:2])
		}
		for _, m := range rec.Messages {
			if _, ok := m["reasoning_content"]; ok {
				t.Errorf("record %d keeps the reasoning, which the format lacks", i+1)
			}
		}
		l := e.labels[i]
		if l.RunID == h.ids["closed"] {
			if l.CutMessages != 1 {
				t.Errorf("the run that broke on a tool: %d messages cut, want 1 (its unanswered turn)", l.CutMessages)
			}
			// system, user, one step (assistant + 2 tool answers); nothing after.
			if len(rec.Messages) != 5 {
				t.Errorf("the run that broke on a tool keeps %d messages, want 5", len(rec.Messages))
			}
		} else if l.CutMessages != 0 {
			t.Errorf("run %d: %d messages cut", l.RunID, l.CutMessages)
		}
	}
	// The renamed repository's earlier run is exported under its latest name.
	if e.labels[0].Repository != "octo/pager" {
		t.Errorf("the run before the rename is labelled %q", e.labels[0].Repository)
	}
}

// TestLeafExportReadsBackAsTrajectories: a leaf export is one trajectory document per line, in
// the reference's field order, each call answered by its observation in the messages and in
// the steps, the reasoning kept, and the run that broke on a tool kept whole.
func TestLeafExportReadsBackAsTrajectories(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	out, _ := h.exportTo(t, export.Options{Repos: repos("octo/pager"), Format: export.FormatLeaf})
	e := readBack(t, out, export.FormatLeaf)
	want := h.idsOf("renamed", "merged", "followup", "closed", "nopr", "open")
	if got := runIDs(e); !slices.Equal(got, want) {
		t.Fatalf("exported runs %v, want %v", got, want)
	}
	for i, line := range e.records {
		var tr leaf.Trajectory
		if err := json.Unmarshal(line, &tr); err != nil {
			t.Fatal(err)
		}
		if got := mustJSON(t, tr.Tools); string(got) != string(mustJSON(t, leaf.ToolSchemas())) {
			t.Errorf("record %d's tools are not in Leaf's order", i+1)
		}
		if tr.Messages[2].ReasoningContent == "" {
			t.Errorf("record %d lost the model's reasoning", i+1)
		}
		if e.labels[i].RunID == h.ids["closed"] && (tr.ExitReason != leaf.ExitToolError || len(tr.Messages[len(tr.Messages)-1].ToolCalls) != 2) {
			t.Errorf("the run that broke on a tool is not kept whole: %s", tr.ExitReason)
		}
	}
}

// TestLabels pins the labels of the merged run and of its follow-up against the seeded rows:
// tests per test, verified, the pull request's outcome, people's share, the follow-up request.
func TestLabels(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	out, _ := h.exportTo(t, export.Options{Repos: repos("octo/pager"), Format: export.FormatChat})
	e := readBack(t, out, export.FormatChat)
	byID := map[int64]export.Labels{}
	for _, l := range e.labels {
		byID[l.RunID] = l
	}
	m := byID[h.ids["merged"]]
	if m.Repository != "octo/pager" || m.Kind != "issue" || m.Issue == nil || *m.Issue != 1 || m.PullRequest == nil || *m.PullRequest != 10 ||
		m.Model != "default" || m.State != "succeeded" || m.BaseCommit != "b4se" || m.Check != "success" || !m.Verified {
		t.Errorf("the merged run's labels: %+v", m)
	}
	if m.Tests == nil || !m.Tests.PerTest || m.Tests.Before.Failed != 1 || m.Tests.After.Passed != 5 || len(m.Tests.Tests) != 3 ||
		m.Tests.Tests[0] != (export.TestRow{Name: "tests/test_f.py::test_neg", Before: "fail", After: "pass", Change: "fixed"}) {
		t.Errorf("the merged run's tests: %+v", m.Tests)
	}
	o := m.Outcome
	if o == nil || o.State != "merged" || !o.Ours || o.LastRun || o.PeopleCommits != 2 || *o.PatchLines != 40 || *o.PeopleLines != 10 ||
		o.PeopleShare == nil || *o.PeopleShare != 0.25 || o.MergeCommit != "m3rge" || o.EndedAt == nil || !o.Ready || o.FollowUps != 1 {
		t.Errorf("the merged run's outcome: %+v", o)
	}
	if len(m.FollowUps) != 1 || m.FollowUps[0] != (export.FollowUp{RunID: h.ids["followup"], Request: "please also handle negative numbers"}) {
		t.Errorf("the merged run's follow-ups: %+v", m.FollowUps)
	}
	f := byID[h.ids["followup"]]
	if f.Kind != "followup" || f.Issue == nil || *f.Issue != 1 || f.PullRequest == nil || *f.PullRequest != 10 || f.Model != "large" ||
		f.Outcome == nil || !f.Outcome.LastRun || len(f.FollowUps) != 0 || f.Tests != nil {
		t.Errorf("the follow-up's labels: %+v", f)
	}
	c := byID[h.ids["closed"]]
	if c.Outcome == nil || c.Outcome.State != "closed" || c.Verified || c.Check != "failure" || c.Outcome.PatchLines != nil || c.Outcome.PeopleShare != nil {
		t.Errorf("the closed run's labels: %+v %+v", c, c.Outcome)
	}
	if n := byID[h.ids["nopr"]]; n.Outcome != nil || n.PullRequest != nil || n.Check != "" || n.Verified {
		t.Errorf("the run without a pull request: %+v", n)
	}
	if labs, _ := os.ReadFile(out + export.LabelsSuffix); strings.Contains(string(labs), "alice") || strings.Contains(string(labs), "bob") {
		t.Errorf("the labels name a person:\n%s", labs)
	}
}

// TestOutcomeFilter: --outcome merged keeps the runs whose pull request was merged (a
// follow-up's too), closed those closed without merge, any every run.
func TestOutcomeFilter(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	for _, tt := range []struct {
		outcome string
		want    []int64
	}{
		{export.OutcomeMerged, h.idsOf("merged", "followup", "ledger")},
		{export.OutcomeClosed, h.idsOf("closed")},
		{export.OutcomeAny, h.idsOf("renamed", "merged", "followup", "closed", "nopr", "open", "ledger")},
		{"", h.idsOf("renamed", "merged", "followup", "closed", "nopr", "open", "ledger")},
	} {
		t.Run(tt.outcome, func(t *testing.T) {
			for _, format := range []string{export.FormatChat, export.FormatLeaf} {
				out, _ := h.exportTo(t, export.Options{Repos: repos("octo/pager", "octo/ledger"), Format: format, Outcome: tt.outcome})
				if got := runIDs(readBack(t, out, format)); !slices.Equal(got, tt.want) {
					t.Errorf("%s, %s: runs %v, want %v", tt.outcome, format, got, tt.want)
				}
			}
		})
	}
}

// TestOnlyNamedRepositories: a repository nobody named never appears (not a run, not a
// text of it); a name matches whatever its case and by the repository's latest name, so a
// repository that once held the name under another id stays out; no repository named is an
// error, not "all"; a name no run has is reported.
func TestOnlyNamedRepositories(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	for _, format := range []string{export.FormatChat, export.FormatLeaf} {
		out, sum := h.exportTo(t, export.Options{Repos: repos("OCTO/Pager", "nobody/nothing"), Format: format})
		e := readBack(t, out, format)
		if got, want := runIDs(e), h.idsOf("renamed", "merged", "followup", "closed", "nopr", "open"); !slices.Equal(got, want) {
			t.Errorf("%s: runs %v, want %v", format, got, want)
		}
		noValue(t, out, map[string]string{"the unnamed repository's text": "ACME-PRIVATE-MARKER", "the unnamed repository's name": "acme/private",
			"the other repository's name": "pager-archive"})
		if !slices.Equal(sum.Missing, []string{"nobody/nothing"}) || sum.Repos["octo/pager"] != 6 {
			t.Errorf("%s: summary %+v", format, sum)
		}
	}
	_, err := export.Run(context.Background(), h.pool, export.Options{Format: export.FormatChat, Out: filepath.Join(t.TempDir(), "x")})
	if err == nil || !strings.Contains(err.Error(), "no repository named") {
		t.Errorf("an export naming no repository: %v", err)
	}
}

// TestSinceKeepsNewerRuns: runs created before --since are left out.
func TestSinceKeepsNewerRuns(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	var since time.Time
	if err := h.pool.QueryRow(context.Background(), `SELECT created_at FROM runs WHERE id = $1`, h.ids["closed"]).Scan(&since); err != nil {
		t.Fatal(err)
	}
	out, _ := h.exportTo(t, export.Options{Repos: repos("octo/pager"), Format: export.FormatChat, Since: since})
	if got, want := runIDs(readBack(t, out, export.FormatChat)), h.idsOf("closed", "nopr", "open"); !slices.Equal(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
}

// TestNoSecretLeaves: a stored trajectory (an old row, never redacted) holds a GitHub token, a
// value gitleaks' rules find, a URL's password and an operator's value, as written, in a tool
// call's arguments, in an observation and base64-encoded, and a follow-up's request holds the
// operator's value; neither file of either format holds any of them, in any form.
func TestNoSecretLeaves(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	token := "ghp_" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)
	generic := secrettest.GenericSecret(t, 40)
	operator := "mirror-" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 24)
	password := "pw-" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 20)
	b64 := base64.StdEncoding.EncodeToString([]byte("token=" + operator))
	steps := [][]call{
		{{"c1", "Bash", `{"command":"curl -H 'Authorization: token ` + token + `' https://api.github.com"}`, "Exit code: 0\nSTDOUT:\n" + token + "\nSTDERR:\n"}},
		{{"c2", "Read", `{"file_path":"settings.py"}`, "settings.py\n1. api_key = \"" + generic + "\"\n2. MIRROR = \"" + operator + "\"\n3. # " + b64}},
		{{"c3", "Bash", `{"command":"pip download --index-url https://user:` + password + `@mirror.internal/simple x"}`, "Exit code: 1\nSTDOUT:\n\nSTDERR:\n" + operator}},
	}
	id := d.seed(run{repoID: 1, owner: "octo", repo: "pager", pr: 3, steps: steps, final: "I used " + operator, check: "success"})
	d.seed(run{repoID: 1, owner: "octo", repo: "pager", kind: "followup", issue: 3, steps: plainSteps(1),
		request: "the mirror token is " + operator + ", use it"})
	secrets := []secretform.Secret{{Name: "MIRROR_TOKEN", Value: operator}}
	matcher := secretform.New(secrets)
	for _, format := range []string{export.FormatChat, export.FormatLeaf} {
		out := filepath.Join(t.TempDir(), "runs.jsonl")
		if _, err := export.Run(context.Background(), d.pool, export.Options{Repos: repos("octo/pager"), Format: format, Out: out, Secrets: secrets}); err != nil {
			t.Fatal(err)
		}
		e := readBack(t, out, format)
		if len(e.records) != 2 || e.labels[0].RunID != id {
			t.Fatalf("%s: %d records", format, len(e.records))
		}
		noValue(t, out, map[string]string{"the GitHub token": token, "the gitleaks value": generic, "the URL's password": password,
			"the operator's value": operator, "the operator's value base64-encoded": b64})
		for _, p := range []string{out, out + export.LabelsSuffix} {
			b, _ := os.ReadFile(p)
			if m, found := matcher.Find(b); found {
				t.Errorf("%s: %s holds %s", format, p, m.What())
			}
		}
		all, _ := os.ReadFile(out)
		if !strings.Contains(string(all), "[REDACTED]") || !strings.Contains(string(all), "[secret: ") {
			t.Errorf("%s: the redactions are not marked", format)
		}
	}
}

// TestResumeAfterATornWrite: an export killed anywhere (the records file ahead of the labels,
// behind them, a line torn in either, nothing written at all) and run again ends with the
// same bytes as one export that was never stopped; records and labels stay paired.
func TestResumeAfterATornWrite(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	for _, format := range []string{export.FormatChat, export.FormatLeaf} {
		opt := export.Options{Repos: repos("octo/pager", "octo/ledger"), Format: format, BatchSize: 2}
		ref, _ := h.exportTo(t, opt)
		recs, _ := os.ReadFile(ref)
		labs, _ := os.ReadFile(ref + export.LabelsSuffix)
		recLines, labLines := lineStarts(recs), lineStarts(labs)
		cuts := []struct {
			name     string
			rec, lab int // bytes kept of each file
		}{
			{"Nothing", 0, 0},
			{"RecordTorn", recLines[3] + 17, labLines[3]},
			{"LabelsTorn", recLines[3], labLines[2] + 5},
			{"RecordsAhead", recLines[5], labLines[2]},
			{"LabelsAhead", recLines[1], labLines[4] + 3},
			{"BothTornAfterTheLast", len(recs) - 1, len(labs) - 2},
			{"Whole", len(recs), len(labs)},
		}
		for _, c := range cuts {
			out := filepath.Join(t.TempDir(), "runs.jsonl")
			write(t, out, recs[:c.rec])
			write(t, out+export.LabelsSuffix, labs[:c.lab])
			opt.Out = out
			sum, err := export.Run(context.Background(), h.pool, opt)
			if err != nil {
				t.Fatalf("%s, %s: %v", format, c.name, err)
			}
			got, _ := os.ReadFile(out)
			gotLabs, _ := os.ReadFile(out + export.LabelsSuffix)
			if string(got) != string(recs) || string(gotLabs) != string(labs) {
				t.Errorf("%s, %s: the resumed export differs from the whole one (kept %d, wrote %d)", format, c.name, sum.Kept, sum.Written)
			}
			if sum.Kept+sum.Written != len(recLines) {
				t.Errorf("%s, %s: kept %d + wrote %d, want %d", format, c.name, sum.Kept, sum.Written, len(recLines))
			}
			readBack(t, out, format)
		}
	}
}

// TestResumeAfterACancel: an export cancelled in the middle keeps whole pairs; the same
// command again finishes it, and the files are the uninterrupted export's.
func TestResumeAfterACancel(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	opt := export.Options{Repos: repos("octo/pager", "octo/ledger"), Format: export.FormatChat, BatchSize: 1}
	ref, _ := h.exportTo(t, opt)
	out := filepath.Join(t.TempDir(), "runs.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	opt.Out = out
	opt.Progress = func(p export.Progress) {
		if p.Done == 3 {
			cancel()
		}
	}
	sum, err := export.Run(ctx, h.pool, opt)
	if !errors.Is(err, context.Canceled) || sum.Written != 3 {
		t.Fatalf("cancelled export: %v, wrote %d", err, sum.Written)
	}
	readBack(t, out, export.FormatChat)
	opt.Progress = nil
	sum, err = export.Run(context.Background(), h.pool, opt)
	if err != nil || sum.Kept != 3 || sum.Written != 4 {
		t.Fatalf("resumed export: %v, kept %d, wrote %d", err, sum.Kept, sum.Written)
	}
	for _, suffix := range []string{"", export.LabelsSuffix} {
		a, _ := os.ReadFile(ref + suffix)
		b, _ := os.ReadFile(out + suffix)
		if string(a) != string(b) {
			t.Errorf("the resumed %q differs from the uninterrupted one", "runs.jsonl"+suffix)
		}
	}
}

// TestResumeRefusesAnotherFormat: a file of leaf records is not continued with chat-jsonl
// ones; nothing is written.
func TestResumeRefusesAnotherFormat(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	out, _ := h.exportTo(t, export.Options{Repos: repos("octo/ledger"), Format: export.FormatLeaf})
	before, _ := os.ReadFile(out)
	_, err := export.Run(context.Background(), h.pool, export.Options{Repos: repos("octo/pager"), Format: export.FormatChat, Out: out})
	var re *export.ResumeError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "holds leaf records: continue it with --format leaf") {
		t.Fatalf("err = %v", err)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Error("the refused export changed the file")
	}
}

// TestPlanWritesNothing: the dry run counts the runs per repository and their size, says where
// an existing file would continue, and creates no file.
func TestPlanWritesNothing(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	dir := t.TempDir()
	opt := export.Options{Repos: repos("octo/pager", "octo/ledger", "nobody/nothing"), Format: export.FormatChat, Out: filepath.Join(dir, "runs.jsonl")}
	d, err := export.Plan(context.Background(), h.pool, opt)
	if err != nil {
		t.Fatal(err)
	}
	if d.Runs != 7 || len(d.Repos) != 2 || d.Repos[0].Repo != "octo/pager" || d.Repos[0].Runs != 6 || d.Repos[1].Runs != 1 ||
		d.Kept != 0 || !slices.Equal(d.Missing, []string{"nobody/nothing"}) {
		t.Errorf("dry run: %+v", d)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the dry run wrote %v", entries)
	}
	// The estimate is within a factor of two of what the export writes.
	out, sum := h.exportTo(t, export.Options{Repos: opt.Repos, Format: export.FormatChat})
	if d.Bytes < sum.Bytes/2 || d.Bytes > sum.Bytes*2 {
		t.Errorf("estimated %d bytes, the export wrote %d", d.Bytes, sum.Bytes)
	}
	// Against a finished export, it would continue after its last run and write nothing.
	opt.Out = out
	d, err = export.Plan(context.Background(), h.pool, opt)
	if err != nil || d.Kept != 7 || d.After != h.ids["ledger"] || d.Runs != 0 {
		t.Errorf("dry run after the export: %+v, %v", d, err)
	}
}

// TestSameDatabaseSameBytes: two exports of the same runs are byte for byte the same.
func TestSameDatabaseSameBytes(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	for _, format := range []string{export.FormatChat, export.FormatLeaf} {
		opt := export.Options{Repos: repos("octo/pager", "octo/ledger"), Format: format}
		a, _ := h.exportTo(t, opt)
		opt.BatchSize = 3
		b, _ := h.exportTo(t, opt)
		for _, suffix := range []string{"", export.LabelsSuffix} {
			x, _ := os.ReadFile(a + suffix)
			y, _ := os.ReadFile(b + suffix)
			if string(x) != string(y) || len(x) == 0 {
				t.Errorf("%s: two exports differ (%s)", format, suffix)
			}
		}
	}
}

func lineStarts(b []byte) []int {
	var starts []int
	for i := range b {
		if i == 0 || b[i-1] == '\n' {
			starts = append(starts, i)
		}
	}
	return starts
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustJSONValue(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestLabelsReplacedByNoneIsNull: outcome's replaced_by 0 (nothing to look for: the
// repository or the issue is gone) is no pull request, and the labels say null, not #0.
func TestLabelsReplacedByNoneIsNull(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	if _, err := h.pool.Exec(context.Background(), `UPDATE pull_outcomes SET replaced_by = 0 WHERE repo_id = 42 AND number = 11`); err != nil {
		t.Fatal(err)
	}
	out, _ := h.exportTo(t, export.Options{Repos: repos("octo/pager"), Format: export.FormatChat})
	for _, l := range readBack(t, out, export.FormatChat).labels {
		if l.RunID == h.ids["closed"] && (l.Outcome == nil || l.Outcome.ReplacedBy != nil) {
			t.Errorf("the closed run's outcome: %+v, want replaced_by null", l.Outcome)
		}
	}
}

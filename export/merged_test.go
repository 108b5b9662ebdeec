package export_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/export"
)

// TestMergedPullRequests: each merged pull request with a merge commit comes once, its
// statement an issue run's task (a follow-up that came first gives way to it) without the
// repository's instructions; closed, open and unmeasured ones, and a torn last pair, do not.
func TestMergedPullRequests(t *testing.T) {
	t.Parallel()
	record := func(task string) string {
		return `{"messages":[{"role":"system","content":"s"},{"role":"user","content":` + jsonString(task) + `},{"role":"assistant","content":"done"}],"tools":[]}`
	}
	labels := func(id int, kind string, pr int, state, merge string) string {
		return `{"run_id":` + itoa(id) + `,"repository":"octo/pager","kind":"` + kind + `","issue":1,"pull_request":` + itoa(pr) +
			`,"outcome":{"state":"` + state + `","merge_commit":"` + merge + `"},"followups":[]}`
	}
	recs := []string{
		record("please also handle negatives"), // a follow-up on PR 10, before its issue run's record
		record("Average is wrong\n\nIt divides by one too few.\n\nRepository instructions (AGENTS.md):\n\nBe brief.\n"),
		record("Closed one"),
		record("Merged, not measured"),
		record("Second merged"),
		record("Torn"),
	}
	labs := []string{
		labels(3, "followup", 10, "merged", "aaaaaaa1"),
		labels(4, "issue", 10, "merged", "aaaaaaa1"),
		labels(5, "issue", 11, "closed", ""),
		labels(6, "issue", 12, "merged", ""),
		labels(7, "issue", 13, "merged", "bbbbbbb2"),
		labels(8, "issue", 14, "merged", "ccccccc3"),
	}
	out := filepath.Join(t.TempDir(), "runs.jsonl")
	write(t, out, []byte(strings.Join(recs, "\n")+"\n"))
	l := strings.Join(labs, "\n")
	write(t, out+export.LabelsSuffix, []byte(l[:len(l)-3])) // the last labels line torn
	got, err := export.MergedPullRequests(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []export.Merged{
		{Repository: "octo/pager", PullRequest: 10, RunID: 4, MergeCommit: "aaaaaaa1", Statement: "Average is wrong\n\nIt divides by one too few."},
		{Repository: "octo/pager", PullRequest: 13, RunID: 7, MergeCommit: "bbbbbbb2", Statement: "Second merged"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func jsonString(s string) string { return string(mustJSONValue(s)) }

func itoa(n int) string { return string(mustJSONValue(n)) }

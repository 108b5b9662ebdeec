package patch

import (
	"context"
	"slices"
	"testing"
)

// TestChangedPathsThroughLinks: ChangedPaths lists what git's tree changes, both sides of a
// rename, and every path a link of the base or the patched tree shows a changed file at; links
// that reach their own folder (a cycle) show each path once through each of them, in a bounded
// list.
func TestChangedPathsThroughLinks(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{
		"deploy":            "->infra/prod",
		"infra/prod/app.sh": "echo prod\n",
		"config/prod.yml":   "->../shared/prod.yml",
		"shared/prod.yml":   "replicas: 3\n",
		"self":              "->.",
		"sub/up":            "->..",
		"out":               "->../elsewhere",
		"old.txt":           "moved\n",
	})
	r.write("infra/prod/app.sh", "echo changed\n")
	r.write("shared/prod.yml", "replicas: 0\n")
	r.remove("old.txt")
	r.write("new.txt", "moved\n")
	diff, _ := r.diff()
	got, err := ChangedPaths(context.Background(), HostGit(r.dir), r.base, diff)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"infra/prod/app.sh", "deploy/app.sh", "shared/prod.yml", "config/prod.yml", "old.txt", "new.txt",
		"self/deploy/app.sh", "sub/up/config/prod.yml", "self/sub/up/infra/prod/app.sh", "sub/up/self/new.txt",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("ChangedPaths lacks %q: %q", want, got)
		}
	}
	for _, not := range []string{"self/self/new.txt", "README", "sub/up/sub/up/new.txt"} {
		if slices.Contains(got, not) {
			t.Errorf("ChangedPaths holds %q", not)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("ChangedPaths is not sorted: %q", got)
	}
}

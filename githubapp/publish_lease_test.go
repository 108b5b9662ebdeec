package githubapp

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/fault"
)

// TestFastForwardOnlyFromItsBase: a follow-up's push must land only on the commit the
// run started from. A reviewer who rewinds the branch during the run (a force-push that drops
// a commit, or deleting the branch) has moved it too: a plain push would be a fast-forward
// from the older commit and put back what the reviewer removed.
func TestFastForwardOnlyFromItsBase(t *testing.T) {
	t.Parallel()
	b, in := cloned(t)
	ctx := context.Background()
	if _, err := b.client.Publish(ctx, in); err != nil {
		t.Fatal(err)
	}
	first := b.gh.Branch(b.repo, in.Branch)
	dropped := b.gh.PushCommit(b.repo, in.Branch, "BAD.md", "a commit the reviewer will drop\n", "Unwanted")

	for _, tc := range []struct {
		name   string
		rewind []string // git arguments run in the fake's bare repository during the "run"
		want   string   // the branch's commit afterwards ("" deleted)
	}{
		{"ForcePushedBack", []string{"update-ref", "refs/heads/" + in.Branch, first.SHA}, first.SHA},
		{"Deleted", []string{"update-ref", "-d", "refs/heads/" + in.Branch}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The run starts from the branch's head (the unwanted commit)...
			if err := exec.Command("git", "-C", b.repo.Dir, "update-ref", "refs/heads/"+in.Branch, dropped).Run(); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "clone")
			head, _, err := b.client.CloneBranch(ctx, dir, in.Branch, in.BaseBranch)
			if err != nil || head != dropped {
				t.Fatalf("CloneBranch = %s, %v; want %s", head, err, dropped)
			}
			// ...and the reviewer moves the branch back while it works.
			if out, err := exec.Command("git", append([]string{"-C", b.repo.Dir}, tc.rewind...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v: %s", tc.rewind, err, out)
			}
			f := PublishInput{Dir: dir, BaseSHA: head, Branch: in.Branch, BaseBranch: in.BaseBranch, Title: in.Title, Body: "again",
				Patch: []byte(strings.ReplaceAll(testPatch, "add_test.go", "mul_test.go")), IssueNumber: 12, FastForward: true}
			_, err = b.client.Publish(ctx, f)
			if !errors.Is(err, ErrBranchMoved) || fault.IsTransient(err) {
				t.Errorf("Publish after the reviewer moved the branch back: %v, want a permanent ErrBranchMoved", err)
			}
			got, _ := exec.Command("git", "-C", b.repo.Dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+in.Branch).Output()
			if strings.TrimSpace(string(got)) != tc.want {
				t.Errorf("the branch is at %q, want the reviewer's %q (the dropped commit %s must stay dropped)", strings.TrimSpace(string(got)), tc.want, dropped)
			}
		})
	}
}

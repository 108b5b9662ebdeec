package queue

import (
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp"
)

// TestReviewCIOutputRedactedAfterHiddenTextGoes: CI's output is the patch's (the model's)
// doing. A token that CI prints with invisible characters inside it is not one to the
// redactor; the task then removes the invisible characters, and the whole token would reach
// the model (and through it the patch). Redaction must come after the text is cleaned, as
// oneLine and the review comments do.
func TestReviewCIOutputRedactedAfterHiddenTextGoes(t *testing.T) {
	t.Parallel()
	token := "ghs_" + strings.Repeat("A1b2C3d4E5", 4)
	split := token[:20] + "\u200b" + token[20:]
	// What githubapp.FailedChecks hands over: already redacted, which misses the split token.
	in := githubapp.Redact(split)
	if in != split {
		t.Fatalf("the redactor already sees the split token: %q", in)
	}
	checks := []githubapp.FailedCheck{{
		Name: "test", App: "github-actions", Conclusion: "failure",
		Summary: "summary " + in, Text: "text " + in, Log: "log " + in,
		Annotations: []githubapp.Annotation{{Path: "a.py", StartLine: 1, Level: "failure", Message: "message " + in, RawDetails: "details " + in}},
	}}
	out := RenderFailedChecks(strings.Repeat("a", 40), checks, 1)
	if strings.Contains(out, token) {
		t.Errorf("a whole token reached the task:\n%s", out)
	}
	for _, where := range []string{"summary", "text", "log", "message", "details"} {
		if !strings.Contains(out, where+" "+githubapp.Redacted) {
			t.Errorf("the %s's token is not redacted:\n%s", where, out)
		}
	}
}

// TestReviewForkWithFrognanosBranchName: a pull request from a fork whose branch is named
// frognano/issue-N (anyone can open one) is not frognano's: neither a writer's request on it
// nor its failed CI clones, runs or pushes anything, and nothing is said on it.
func TestReviewForkWithFrognanosBranchName(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{KindFollowUp, KindCI} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.repo.pr.HeadRepo = "mallory/pager"
			b.repo.pr.HeadSHA = ciSHA
			var res Accepted
			if kind == KindCI {
				res = b.acceptCI(t, ciSHA)
			} else {
				res = b.acceptFollowUp(t, "reviewer", "@frognano fix this")
			}
			if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != StateSkipped {
				t.Fatalf("%v %s", r, b.row(t, res.RunID).State)
			}
			if b.runner.calls.Load() != 0 || b.repo.clones != 0 || len(b.repo.publishes) != 0 || len(b.repo.comments) != 0 {
				t.Errorf("a fork's pull request got %d runs, %d clones, %d publishes, comments %q",
					b.runner.calls.Load(), b.repo.clones, len(b.repo.publishes), b.repo.comments)
			}
		})
	}
}

// TestReviewReaderRequestSwallowsNoWritersRequestSilently: a request on a pull request that has
// an active run is counted on that run, not started. A reader's request is such a run until
// the worker refuses it, so a writer's request (or CI's failure) that comes meanwhile was
// dropped without a word: the refusal spoke to the reader only. It must say that other
// requests came and were not run.
func TestReviewReaderRequestSwallowsNoWritersRequestSilently(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.repo.perm = "read"
	res := b.acceptFollowUp(t, "reader", "@frognano do something")
	if w := b.acceptFollowUp(t, "maintainer", "@frognano please rename x"); !w.AlreadyActive || w.RunID != res.RunID {
		t.Fatalf("the writer's request: %+v, want it counted on the reader's run %d", w, res.RunID)
	}
	if r := b.work(t, res, 1); !r.completed() || b.row(t, res.RunID).State != StateSkipped {
		t.Fatalf("%v %s", r, b.row(t, res.RunID).State)
	}
	if b.runner.calls.Load() != 0 {
		t.Error("the reader's request reached the model")
	}
	said := strings.Join(b.repo.comments, "\n")
	if !strings.Contains(said, "1 more request") || !strings.Contains(said, "not run") {
		t.Errorf("nothing says the other request was not run: %q", b.repo.comments)
	}
}

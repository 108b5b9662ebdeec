package githubapp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp/githubtest"
)

// trail is an AuditSink that keeps what it is given.
type trail struct {
	mu      sync.Mutex
	entries []AuditEntry
}

func (tr *trail) record(_ context.Context, e AuditEntry) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.entries = append(tr.entries, e)
	return nil
}

func (tr *trail) all() []AuditEntry {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]AuditEntry(nil), tr.entries...)
}

// only returns the one entry of action, failing the test when there is not exactly one.
func (tr *trail) only(t *testing.T, action string) AuditEntry {
	t.Helper()
	var found []AuditEntry
	for _, e := range tr.all() {
		if e.Action == action {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %s entries, want 1: %+v", len(found), action, tr.all())
	}
	return found[0]
}

// audited is setup with an audit trail, and HTTPTimeout short enough for a test to outwait.
func audited(t *testing.T) (*bundle, *trail) {
	t.Helper()
	tr := &trail{}
	b := setup(t, func(c *Config) { c.Audit = tr.record; c.HTTPTimeout = 3 * time.Second })
	return b, tr
}

const auditRunID = 4711

// TestAuditRecordsWritesWhoseAnswerWasLost: a write that reached GitHub and got no answer
// (the connection ended, the time ran out, the run's context was cancelled while it waited)
// or a 5xx that can follow a committed write is in the trail once, as "unknown"; a write
// GitHub refused is there with its status; one that never left is "not sent". Each write
// below happened on the fake (but the refused and the unsent), whatever the client saw.
func TestAuditRecordsWritesWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	comment := func(t *testing.T, b *bundle, ctx context.Context) error {
		_, err := b.client.Comment(WithAuditRun(ctx, auditRunID), 12, "Working on it.")
		return err
	}
	for _, tc := range []struct {
		name    string
		fault   func(b *bundle, cancel context.CancelFunc)
		outcome string
		status  int
		detail  string
		applied bool
	}{
		{"ConnectionDropped", func(b *bundle, _ context.CancelFunc) {
			b.gh.DropNextResponse("POST", "/repos/*/*/issues/12/comments", 1)
		},
			OutcomeUnknown, 0, "failed while waiting for GitHub's answer (no answer)", true},
		{"TimedOut", func(b *bundle, _ context.CancelFunc) {
			b.gh.HoldNextResponse("POST", "/repos/*/*/issues/12/comments", 1, nil)
		},
			OutcomeUnknown, 0, "timed out while waiting for GitHub's answer", true},
		{"CancelledAfterSending", func(b *bundle, cancel context.CancelFunc) {
			b.gh.HoldNextResponse("POST", "/repos/*/*/issues/12/comments", 1, cancel)
		}, OutcomeUnknown, 0, "cancelled while waiting for GitHub's answer", true},
		{"BadGatewayAfterApplying", func(b *bundle, _ context.CancelFunc) {
			b.gh.LoseNextResponse("POST", "/repos/*/*/issues/12/comments", 502, 1)
		}, OutcomeUnknown, 502, "GitHub answered 502, which can follow a write it made", true},
		{"Refused", func(b *bundle, _ context.CancelFunc) {
			b.gh.FailNext("POST", "/repos/*/*/issues/12/comments", 410, nil, 1)
		},
			OutcomeRefused, 410, "GitHub answered 410", false},
		{"CancelledBeforeSending", func(_ *bundle, cancel context.CancelFunc) { cancel() },
			OutcomeNotSent, 0, "cancelled before it was sent", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, tr := audited(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tc.fault(b, cancel)
			if err := comment(t, b, ctx); err == nil {
				t.Fatal("the write succeeded")
			}
			e := tr.only(t, "comment.created")
			if e.RunID != auditRunID || e.Outcome != tc.outcome || e.Status != tc.status || e.Detail != tc.detail ||
				e.Method != "POST" || e.Path != "/repos/"+testOwner+"/"+testRepo+"/issues/12/comments" {
				t.Errorf("entry %+v, want %s (%d, %q)", e, tc.outcome, tc.status, tc.detail)
			}
			if got := len(b.gh.Comments(b.repo, 12)); (got == 1) != tc.applied {
				t.Errorf("%d comment(s) on GitHub; applied %v", got, tc.applied)
			}
			if n := len(tr.all()); n != 1 {
				t.Errorf("%d entries for one write: %+v", n, tr.all())
			}
		})
	}
	t.Run("RetriedUntilAnswered", func(t *testing.T) {
		// An edit is safe to repeat: retryTransport sends it again after a 502 that followed
		// the edit, and the trail holds one entry with the final answer.
		t.Parallel()
		b, tr := audited(t)
		id := b.gh.AddComment(b.repo, 12, githubtest.AppSlug+"[bot]", "Starting.")
		b.gh.LoseNextResponse("PATCH", "/repos/*/*/issues/comments/*", 502, 1)
		if err := b.client.EditComment(WithAuditRun(context.Background(), auditRunID), id, "Done."); err != nil {
			t.Fatal(err)
		}
		e := tr.only(t, "comment.edited")
		if e.Outcome != OutcomeDone || e.Status != 200 || e.ObjectID != fmt.Sprint(id) || e.RequestID == "" {
			t.Errorf("entry %+v", e)
		}
	})
}

// TestAuditNamesTheObject: a review request names who was asked (the logins of the body the
// transport sent, nothing else of it), a ref write names the branch and the commit, a label
// removal the issue and the label; also when GitHub refused the write or its answer was lost.
func TestAuditNamesTheObject(t *testing.T) {
	t.Parallel()
	t.Run("ReviewRequested", func(t *testing.T) {
		t.Parallel()
		tr := &trail{}
		b, in := cloned(t, func(c *Config) { c.Audit = tr.record })
		b.gh.SetPermission(b.repo, "alice", "write")
		in.CoAuthor = Person{Login: "alice"}
		pub, err := b.client.Publish(WithAuditRun(context.Background(), auditRunID), in)
		number := pub.Number
		if err != nil {
			t.Fatal(err)
		}
		e := tr.only(t, "review.requested")
		if e.ObjectID != fmt.Sprintf("#%d @alice", number) || e.Outcome != OutcomeDone {
			t.Errorf("review request %+v", e)
		}
		ref := tr.only(t, "branch.created")
		if head := b.gh.Branch(b.repo, in.Branch); ref.ObjectID != in.Branch || head == nil || ref.ObjectSHA != head.SHA {
			t.Errorf("branch entry %+v; the branch's head %+v", ref, head)
		}
	})
	t.Run("ReviewRefused", func(t *testing.T) {
		t.Parallel()
		tr := &trail{}
		b, in := cloned(t, func(c *Config) { c.Audit = tr.record })
		b.gh.UserID("mallory") // a GitHub user without access: GitHub answers 422
		in.CoAuthor = Person{Login: "mallory"}
		pub, err := b.client.Publish(WithAuditRun(context.Background(), auditRunID), in)
		number := pub.Number
		if err != nil {
			t.Fatal(err)
		}
		if e := tr.only(t, "review.requested"); e.ObjectID != fmt.Sprintf("#%d @mallory", number) || e.Outcome != OutcomeRefused || e.Status != 422 {
			t.Errorf("refused review request %+v", e)
		}
	})
	t.Run("ReviewAnswerLost", func(t *testing.T) {
		t.Parallel()
		tr := &trail{}
		b, in := cloned(t, func(c *Config) { c.Audit = tr.record })
		b.gh.SetPermission(b.repo, "alice", "write")
		b.gh.DropNextResponse("POST", "/repos/*/*/pulls/*/requested_reviewers", 1)
		in.CoAuthor = Person{Login: "alice"}
		pub, err := b.client.Publish(WithAuditRun(context.Background(), auditRunID), in)
		number := pub.Number
		if err != nil {
			t.Fatal(err)
		}
		if e := tr.only(t, "review.requested"); e.ObjectID != fmt.Sprintf("#%d @alice", number) || e.Outcome != OutcomeUnknown {
			t.Errorf("review request without an answer %+v", e)
		}
		if got := b.gh.RequestedReviewers(b.repo, number); len(got) != 1 || got[0] != "alice" {
			t.Errorf("GitHub's reviewers %v: the request happened", got)
		}
	})
	t.Run("BranchAnswerLost", func(t *testing.T) {
		t.Parallel()
		tr := &trail{}
		b, in := cloned(t, func(c *Config) { c.Audit = tr.record })
		b.gh.DropNextResponse("POST", "/repos/*/*/git/refs", 1)
		_, _ = b.client.Publish(WithAuditRun(context.Background(), auditRunID), in)
		var lost []AuditEntry
		for _, e := range tr.all() {
			if e.Action == "branch.created" && e.Outcome == OutcomeUnknown {
				lost = append(lost, e)
			}
		}
		head := b.gh.Branch(b.repo, in.Branch)
		if len(lost) != 1 || head == nil || lost[0].ObjectID != in.Branch || lost[0].ObjectSHA == "" {
			t.Fatalf("entries %+v; branch %+v", tr.all(), head)
		}
	})
	t.Run("LabelRemoved", func(t *testing.T) {
		t.Parallel()
		b, tr := audited(t)
		b.gh.AddLabel(b.repo, 12, "frognano fix")
		b.gh.FailNext("DELETE", "/repos/*/*/issues/12/labels/*", 503, nil, 4)
		_ = b.client.RemoveLabel(WithAuditRun(context.Background(), auditRunID), 12, "frognano fix")
		if e := tr.only(t, "label.removed"); e.ObjectID != "#12 frognano fix" || e.Outcome != OutcomeUnknown || e.Status != 503 {
			t.Errorf("label entry %+v", e)
		}
	})
	t.Run("NoBodyText", func(t *testing.T) {
		t.Parallel()
		b, tr := audited(t)
		b.gh.DropNextResponse("POST", "/repos/*/*/issues/12/comments", 1)
		_, _ = b.client.Comment(WithAuditRun(context.Background(), auditRunID), 12, "a body with reviewers and sha: @mallory")
		for _, e := range tr.all() {
			if s := fmt.Sprintf("%+v", e); strings.Contains(s, "mallory") || strings.Contains(s, "a body") {
				t.Errorf("the entry holds the body's text: %s", s)
			}
		}
	})
}

// TestAuditOnBehalfOfSeveralRuns: a write on behalf of several runs (the reply to a stop
// request that stopped two) is in each run's trail, once.
func TestAuditOnBehalfOfSeveralRuns(t *testing.T) {
	t.Parallel()
	b, tr := audited(t)
	if _, err := b.client.Comment(WithAuditRuns(context.Background(), 7, 8, 7, 0), 12, "Stopped."); err != nil {
		t.Fatal(err)
	}
	got := tr.all()
	if len(got) != 2 || got[0].RunID != 7 || got[1].RunID != 8 || got[0].RequestID != got[1].RequestID || got[0].Outcome != OutcomeDone {
		t.Errorf("entries %+v", got)
	}
	if AuditRun(context.Background()) != 0 || len(AuditRuns(WithAuditRun(context.Background(), 0))) != 0 {
		t.Error("a context without a run names one")
	}
}

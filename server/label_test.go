package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/run"
)

// knowLabel records that the settings of repository repoID named label ("": none) age ago, as a
// run or the label check records it.
func knowLabel(t testing.TB, b *bundle, repoID int64, label string, age time.Duration) {
	t.Helper()
	if _, err := b.pool.Exec(context.Background(), `INSERT INTO repo_labels (repo_id, installation_id, label, read_at)
		VALUES ($1, 5, $2, now() - $3::interval) ON CONFLICT (repo_id) DO UPDATE SET label = $2, read_at = now() - $3::interval`,
		repoID, label, age.String()); err != nil {
		t.Fatal(err)
	}
}

// labelChecks counts the label checks queued, and returns the label of the last one.
func labelChecks(t testing.TB, b *bundle) (n int, last string) {
	t.Helper()
	err := b.pool.QueryRow(context.Background(), `SELECT count(*), coalesce(max(args->'request'->>'TriggerLabel'), '')
		FROM river_job WHERE kind = 'frognano_label_check'`).Scan(&n, &last)
	if err != nil {
		t.Fatal(err)
	}
	return n, last
}

// TestWebhookRepositorysOwnTriggerLabel: a repository whose settings name `label: ai-fix` is
// started by that label, case-insensitively, and no longer by the operator's; removing its
// label stops its run, removing the operator's does nothing there.
func TestWebhookRepositorysOwnTriggerLabel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	knowLabel(t, b, 186853002, "ai-fix", time.Minute)

	rec := b.send(t, "issues", labeled(t)) // the operator's label
	if rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "ignored" {
		t.Fatalf("operator's label on a repository with its own: %d %s, want 202 ignored", rec.Code, rec.Body.String())
	}
	if c := b.stored(t); c != (counts{}) {
		t.Errorf("stored %+v after the operator's label", c)
	}
	rec = b.send(t, "issues", labeled(t, label("AI-Fix")))
	res := decodeResponse(t, rec)
	if rec.Code != http.StatusOK || res.Status != "queued" || len(res.RunIDs) != 1 {
		t.Fatalf("the repository's label: %d %s, want queued", rec.Code, rec.Body.String())
	}
	var trigger, triggerLabel string
	if err := b.pool.QueryRow(context.Background(), `SELECT trigger, trigger_label FROM runs WHERE id = $1`, res.RunIDs[0]).Scan(&trigger, &triggerLabel); err != nil {
		t.Fatal(err)
	}
	if trigger != run.TriggerLabel || triggerLabel != "AI-Fix" {
		t.Errorf("run's trigger %q, trigger_label %q; want label, AI-Fix", trigger, triggerLabel)
	}
	if n, _ := labelChecks(t, b); n != 0 {
		t.Errorf("%d label checks queued for labels whose meaning was known", n)
	}

	// The operator's label coming off is only a label coming off here.
	rec = b.send(t, "issues", labeled(t, action("unlabeled")))
	if rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "ignored" {
		t.Errorf("operator's label removed: %d %s, want 202 ignored", rec.Code, rec.Body.String())
	}
	rec = b.send(t, "issues", labeled(t, label("ai-fix"), action("unlabeled")))
	if got := decodeResponse(t, rec); rec.Code != http.StatusOK || got.Status != "cancelled" {
		t.Errorf("the repository's label removed: %d %s, want cancelled", rec.Code, rec.Body.String())
	}
}

// TestWebhookLabelOfUnknownMeaningIsChecked: a label that may be a repository's own trigger
// label, on a repository whose settings were never read or not lately, queues one check that
// reads them (queue/labelcheck.go), and records no delivery and no run yet; the operator's
// label on a repository never read, or read and naming none, starts the run at once.
func TestWebhookLabelOfUnknownMeaningIsChecked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := b.send(t, "issues", labeled(t, label("ai-fix"), issueNumber(7)))
	if rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "label_check" {
		t.Fatalf("a label on a repository never read: %d %s, want 202 label_check", rec.Code, rec.Body.String())
	}
	if n, last := labelChecks(t, b); n != 1 || last != "ai-fix" {
		t.Errorf("label checks: %d (last %q), want 1 for ai-fix", n, last)
	}
	if c := b.stored(t); c != (counts{}) {
		t.Errorf("stored %+v before the check", c)
	}
	rec = b.send(t, "issues", labeled(t)) // the operator's, on a repository never read
	if res := decodeResponse(t, rec); rec.Code != http.StatusOK || res.Status != "queued" {
		t.Fatalf("operator's label on a repository never read: %d %s, want queued", rec.Code, rec.Body.String())
	}

	// Read long ago and naming another label: the operator's label is checked first.
	b2 := setup(t)
	knowLabel(t, b2, 186853002, "ai-fix", time.Hour)
	rec = b2.send(t, "issues", labeled(t))
	if rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "label_check" {
		t.Errorf("operator's label, settings read an hour ago naming ai-fix: %d %s, want label_check", rec.Code, rec.Body.String())
	}
	// Read lately and naming none: another label is nothing, the operator's starts a run.
	b3 := setup(t)
	knowLabel(t, b3, 186853002, "", time.Minute)
	rec = b3.send(t, "issues", labeled(t, label("ai-fix")))
	if rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "ignored" {
		t.Errorf("another label, settings naming none: %d %s, want ignored", rec.Code, rec.Body.String())
	}
	if n, _ := labelChecks(t, b3); n != 0 {
		t.Errorf("%d checks queued for a label known to be nothing", n)
	}
}

// TestWebhookLabelRemovedStopsWhatItStarted: removing the label that started a run stops it even
// when the repository's settings have named another label since (the run keeps its label,
// runs.trigger_label); removing a label whose check is still queued withdraws the check, so
// that a label added and removed before its check ran starts nothing.
func TestWebhookLabelRemovedStopsWhatItStarted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	knowLabel(t, b, 186853002, "ai-fix", time.Minute)
	rec := b.send(t, "issues", labeled(t, label("ai-fix")))
	if res := decodeResponse(t, rec); rec.Code != http.StatusOK || res.Status != "queued" {
		t.Fatalf("the repository's label: %d %s, want queued", rec.Code, rec.Body.String())
	}
	knowLabel(t, b, 186853002, "bot-fix", time.Minute) // the settings changed, and were read again
	rec = b.send(t, "issues", labeled(t, label("AI-fix"), action("unlabeled")))
	if got := decodeResponse(t, rec); rec.Code != http.StatusOK || got.Status != "cancelled" {
		t.Errorf("the label that started the run removed, after the settings named another: %d %s, want cancelled", rec.Code, rec.Body.String())
	}

	b2 := setup(t) // settings never read: the label is checked first
	rec = b2.send(t, "issues", labeled(t, label("ai-fix"), issueNumber(7)))
	if rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "label_check" {
		t.Fatalf("a label on a repository never read: %d %s, want 202 label_check", rec.Code, rec.Body.String())
	}
	b2.send(t, "issues", labeled(t, label("ai-fix"), issueNumber(7), action("unlabeled")))
	var pending int
	if err := b2.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'frognano_label_check'
		AND state NOT IN ('cancelled', 'discarded', 'completed')`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Errorf("%d label checks still to run after their label was removed, want none", pending)
	}
}

// TestWebhookClosedIssueWithdrawsItsLabelChecks: an issue closed (or deleted, or transferred)
// while the check of a label on it is still queued starts no run when the check would have
// found the label to be the trigger label.
func TestWebhookClosedIssueWithdrawsItsLabelChecks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := b.send(t, "issues", labeled(t, label("ai-fix"), issueNumber(7)))
	if rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "label_check" {
		t.Fatalf("a label on a repository never read: %d %s, want 202 label_check", rec.Code, rec.Body.String())
	}
	b.send(t, "issues", labeled(t, label("ai-fix"), issueNumber(8))) // another issue's check stays
	b.send(t, "issues", labeled(t, issueNumber(7), action("closed")))
	rows, err := b.pool.Query(context.Background(), `SELECT (args->'request'->>'Issue')::int FROM river_job
		WHERE kind = 'frognano_label_check' AND state NOT IN ('cancelled', 'discarded', 'completed')`)
	if err != nil {
		t.Fatal(err)
	}
	pending, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0] != 8 {
		t.Errorf("label checks still to run of issues %v, want issue 8's alone", pending)
	}
}

// TestWebhookLabelCheckRedeliveredIsOneCheck: a delivery redelivered (or sent 10 times at once)
// while its label's check is queued is that one check, not one more each: the check's
// arguments are the same JSON each time (River's unique jobs by arguments).
func TestWebhookLabelCheckRedeliveredIsOneCheck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	raw := labeled(t, label("ai-fix"), issueNumber(7))
	id := b.nextDelivery()
	done := make(chan int, 10)
	for range 10 {
		go func() { done <- b.do(t, request{event: "issues", delivery: id, raw: raw}).Code }()
	}
	for range 10 {
		if code := <-done; code != http.StatusAccepted {
			t.Errorf("a label check's delivery answered %d, want 202", code)
		}
	}
	if n, last := labelChecks(t, b); n != 1 || last != "ai-fix" {
		t.Errorf("label checks: %d (last %q), want 1 for ai-fix", n, last)
	}
}

// TestWebhookLabelRemovedKeepsOtherLabelsChecks: the trigger label coming off withdraws its own
// checks, not those of another label of the issue still queued (the settings may name that one
// now: `label:` changed from ai-fix to bot-fix, and both labels moved at once).
func TestWebhookLabelRemovedKeepsOtherLabelsChecks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	knowLabel(t, b, 186853002, "ai-fix", time.Hour) // read long ago
	rec := b.send(t, "issues", labeled(t, label("bot-fix"), issueNumber(7)))
	if rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "label_check" {
		t.Fatalf("a label, settings read long ago: %d %s, want 202 label_check", rec.Code, rec.Body.String())
	}
	b.send(t, "issues", labeled(t, label("ai-fix"), issueNumber(7), action("unlabeled")))
	var pending int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'frognano_label_check'
		AND state NOT IN ('cancelled', 'discarded', 'completed') AND args->'request'->>'TriggerLabel' = 'bot-fix'`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 1 {
		t.Errorf("bot-fix's check withdrawn when ai-fix came off (%d still to run, want 1)", pending)
	}
}

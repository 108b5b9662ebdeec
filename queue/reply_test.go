package queue

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// TestMentionWhileActiveIsAnsweredWithTheRun: a mention on an issue whose run is active starts
// no second run; its job answers the requester with the active run and its page. A label
// applied again meanwhile gets no such answer (it has nobody to answer).
func TestMentionWhileActiveIsAnsweredWithTheRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	active := b.accept(t, 7)
	if _, err := b.client.Accept(context.Background(), b.delivery("issues", "labeled"), request(7)); err != nil {
		t.Fatal(err)
	}
	req := request(7)
	req.Labeler, req.Trigger, req.Request = "asker", run.TriggerMention, "again please"
	res, err := b.client.Accept(context.Background(), b.delivery("issue_comment", "created"), req)
	if err != nil || !res.AlreadyActive || res.RunID != active.RunID {
		t.Fatalf("Accept = %+v, %v", res, err)
	}
	var args []activeReplyArgs
	rows, err := b.pool.Query(context.Background(), `SELECT args FROM river_job WHERE kind = 'frognano_active_reply'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a activeReplyArgs
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		args = append(args, a)
	}
	if len(args) != 1 || args[0].RunID != active.RunID || args[0].Requester != "asker" || args[0].Issue != 7 {
		t.Fatalf("reply jobs %+v", args)
	}
	w := &activeReplyWorker{gh: runtest.GitHubOf(b.repo), publicURL: "https://frognano.example/", log: slog.New(slog.DiscardHandler)}
	if r := workJob(t, b, args[0], 1, river.Worker[activeReplyArgs](w)); !r.completed() {
		t.Fatal(r)
	}
	want := "[run " + strconv.FormatInt(active.RunID, 10) + "](https://frognano.example/runs/" + strconv.FormatInt(active.RunID, 10) + ") is already working on this issue"
	if c := b.repo.Comments(); len(c) != 1 || !strings.HasPrefix(c[0], "@asker: ") || !strings.Contains(c[0], want) {
		t.Errorf("comments %q, want one with %q", c, want)
	}
}

// TestStopOnAnIssueCancelsItsRun: a writer's `@APP stop` on an issue cancels the issue's queued
// run and says so; with nothing left to stop it says that.
func TestStopOnAnIssueCancelsItsRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.accept(t, 7)
	sw := &stopWorker{pool: b.pool, gh: runtest.GitHubOf(b.repo), log: slog.New(slog.DiscardHandler)}
	args := StopArgs{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", PR: 7, Requester: "maintainer", OnIssue: true}
	for i, want := range []string{"frognano stopped run " + strconv.FormatInt(res.RunID, 10) + " at your request",
		"there is no queued or running frognano run on this issue"} {
		if r := workJob(t, b, args, 1, river.Worker[StopArgs](sw)); !r.completed() {
			t.Fatal(r)
		}
		if c := b.repo.Comments(); len(c) != i+1 || !strings.Contains(c[i], want) {
			t.Errorf("comments %q, want %q", c, want)
		}
	}
	if got := b.row(t, res.RunID).State; got != run.StateCancelled {
		t.Errorf("state %s", got)
	}
}

package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/outcome"
)

const (
	prRepoID  = 1296269
	prHead    = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	prMerge   = "e5bd3914e2e596debea16f433f57875b5b90bcd6"
	prInstall = 5
)

// pullEventBody is a pull_request delivery shaped as GitHub sends it (the parts frognano
// reads, and some it does not), edited by edits.
func pullEventBody(t testing.TB, action string, number int, edits ...func(m map[string]any)) []byte {
	t.Helper()
	m := map[string]any{
		"action": action, "number": number,
		"pull_request": map[string]any{
			"url": "https://api.github.com/repos/octo/pager/pulls/12", "id": 1, "number": number, "state": "open",
			"draft": true, "merged": false, "merged_by": nil, "merge_commit_sha": nil, "merged_at": nil, "closed_at": nil,
			"updated_at": "2026-03-01T10:00:00Z", "commits": 2, "title": "frognano: fix",
			"head": map[string]any{"ref": "frognano/issue-7", "sha": prHead},
			"base": map[string]any{"ref": "main", "sha": prMerge},
			"user": map[string]any{"login": "frognano[bot]", "type": "Bot"},
		},
		"repository":   map[string]any{"id": prRepoID, "name": "pager", "owner": map[string]any{"login": "octo"}},
		"sender":       map[string]any{"login": "carol", "type": "User"},
		"installation": map[string]any{"id": prInstall},
	}
	for _, e := range edits {
		e(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func merged(by string) func(m map[string]any) {
	return func(m map[string]any) {
		pr := m["pull_request"].(map[string]any)
		pr["state"], pr["merged"], pr["merge_commit_sha"] = "closed", true, prMerge
		pr["merged_at"], pr["closed_at"] = "2026-03-01T11:00:00Z", "2026-03-01T11:00:00Z"
		pr["merged_by"] = map[string]any{"login": by, "type": "User"}
	}
}

// follow makes frognano follow pull request number of the test repository: a run that
// published to it, recorded as the run's end records it.
func (b *bundle) follow(t testing.TB, number int) {
	t.Helper()
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var id int64
		if err := tx.QueryRow(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo, issue, labeler, state, pr_number)
			VALUES ('t', 'followed', $1, $2, 'octo', 'pager', 7, 'alice', 'succeeded', $3) RETURNING id`, prInstall, prRepoID, number).Scan(&id); err != nil {
			return err
		}
		return outcome.NewStore(b.pool).Published(ctx, tx, outcome.Publication{RunID: id, Number: number, Ours: true, Issue: 7, Head: strings.Repeat("a", 40), Commits: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) measureJobs(t testing.TB) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'frognano_outcome_measure'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPullRequestEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.follow(t, 12)

	// A pull request frognano does not follow: 202, nothing stored.
	before := b.stored(t)
	if rec := b.send(t, "pull_request", pullEventBody(t, "closed", 13, merged("dave"))); rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "ignored" {
		t.Fatalf("another pull request: %d %s", rec.Code, rec.Body)
	}
	// An action frognano does not record: 202.
	if rec := b.send(t, "pull_request", pullEventBody(t, "labeled", 12)); rec.Code != http.StatusAccepted {
		t.Fatalf("labeled: %d %s", rec.Code, rec.Body)
	}
	if after := b.stored(t); after != before {
		t.Fatalf("ignored events stored %+v -> %+v", before, after)
	}

	// A person's push, then the merge, with its measure job in the same transaction.
	push := pullEventBody(t, "synchronize", 12, func(m map[string]any) { m["after"], m["before"] = prHead, strings.Repeat("a", 40) })
	if rec := b.send(t, "pull_request", push); rec.Code != http.StatusOK || decodeResponse(t, rec).Status != "recorded" {
		t.Fatalf("synchronize: %d %s", rec.Code, rec.Body)
	}
	delivery := b.nextDelivery()
	body := pullEventBody(t, "closed", 12, merged("dave"))
	if rec := b.do(t, request{event: "pull_request", delivery: delivery, raw: body}); rec.Code != http.StatusOK {
		t.Fatalf("merged: %d %s", rec.Code, rec.Body)
	}
	if rec := b.do(t, request{event: "pull_request", delivery: delivery, raw: body}); rec.Code != http.StatusOK || decodeResponse(t, rec).Status != "duplicate" {
		t.Fatalf("the same delivery again: %d %s", rec.Code, rec.Body)
	}
	r, err := outcome.NewStore(b.pool).Get(context.Background(), prRepoID, 12)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != outcome.StateMerged || r.EndedBy != "dave" || r.MergeSHA != prMerge || r.PeopleCommits != 1 || r.HeadSHA != prHead {
		t.Errorf("row after the merge: %+v", r)
	}
	if n := b.measureJobs(t); n != 1 {
		t.Errorf("%d measure jobs, want 1", n)
	}
	if after := b.stored(t); after.deliveries != before.deliveries+2 {
		t.Errorf("deliveries %d -> %d, want two more", before.deliveries, after.deliveries)
	}
}

// TestPullRequestEventRefusedPayloads: what does not hold up is a 400 with nothing stored.
func TestPullRequestEventRefusedPayloads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.follow(t, 12)
	for name, edit := range map[string]func(m map[string]any){
		"NoInstallation": func(m map[string]any) { delete(m, "installation") },
		"NoRepository":   func(m map[string]any) { delete(m, "repository") },
		"NoPullRequest":  func(m map[string]any) { delete(m, "pull_request") },
		"OtherNumber":    func(m map[string]any) { m["number"] = 13 },
		"BadHead":        func(m map[string]any) { m["after"] = "HEAD~1" },
		"BadLogin":       func(m map[string]any) { m["sender"].(map[string]any)["login"] = "not a login" },
		"BadMerger":      func(m map[string]any) { merged("dave; DROP")(m) },
		"NoUpdatedAt":    func(m map[string]any) { delete(m["pull_request"].(map[string]any), "updated_at") },
		"NumberAsText":   func(m map[string]any) { m["pull_request"].(map[string]any)["number"] = "12" },
	} {
		t.Run(name, func(t *testing.T) {
			before := b.stored(t)
			if rec := b.send(t, "pull_request", pullEventBody(t, "synchronize", 12, edit)); rec.Code != http.StatusBadRequest {
				t.Errorf("%d %s, want 400", rec.Code, rec.Body)
			}
			if after := b.stored(t); after != before {
				t.Errorf("stored %+v -> %+v", before, after)
			}
		})
	}
	if r, err := outcome.NewStore(b.pool).Get(context.Background(), prRepoID, 12); err != nil || r.EventAt != nil || r.PeopleCommits != 0 {
		t.Errorf("the refused events changed the row: %+v, %v", r, err)
	}
}

// FuzzPullRequestPayload: any body either decodes to an event whose every field frognano
// records holds up (ids positive, commit ids hex, logins logins), or is refused; never a panic.
func FuzzPullRequestPayload(f *testing.F) {
	for _, a := range []string{"closed", "reopened", "ready_for_review", "converted_to_draft", "synchronize"} {
		f.Add(pullEventBody(f, a, 12))
	}
	f.Add(pullEventBody(f, "closed", 12, merged("dave")))
	f.Add(pullEventBody(f, "synchronize", 12, func(m map[string]any) { m["after"] = strings.Repeat("b", 64) }))
	f.Add([]byte(`{"action":"closed","pull_request":{"number":1,"updated_at":"2026-01-01T00:00:00Z","merged":true,"merged_by":null},"repository":{"id":1},"installation":{"id":1},"sender":{"login":"x"}}`))
	f.Add([]byte(`{"pull_request":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p pullRequestPayload
		if decode(body, &p) != nil {
			return
		}
		ev, installation, err := p.event("frognano[bot]")
		if err != nil {
			return
		}
		switch {
		case installation <= 0 || ev.RepoID <= 0 || ev.Number <= 0 || ev.At.IsZero():
			t.Fatalf("accepted an event without its ids or time: %+v", ev)
		case ev.HeadSHA != "" && !shaPattern.MatchString(ev.HeadSHA), ev.MergeSHA != "" && !shaPattern.MatchString(ev.MergeSHA):
			t.Fatalf("accepted a commit id that is not one: %+v", ev)
		case !loginPattern.MatchString(ev.Sender), ev.MergedBy != "" && !loginPattern.MatchString(ev.MergedBy):
			t.Fatalf("accepted a login that is not one: %+v", ev)
		case ev.Commits < 0:
			t.Fatalf("negative commits: %+v", ev)
		}
	})
}

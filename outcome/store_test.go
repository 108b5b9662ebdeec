package outcome

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/migrations/dbtest"
)

const (
	testRepoID       = 42
	testInstallation = 7
)

// twoLines changes two lines of calc.py; threeLines adds three to util.py.
const (
	twoLines   = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n-a = 1\n+a = 2\n b = 3\n"
	threeLines = "diff --git a/util.py b/util.py\nnew file mode 100644\n--- /dev/null\n+++ b/util.py\n@@ -0,0 +1,3 @@\n+x\n+y\n+z\n"
)

// env is one test's migrated schema and Store, with the outcomes it counted (OnEnd).
type env struct {
	t     testing.TB
	pool  *pgxpool.Pool
	store *Store
	mu    sync.Mutex
	ended []string
}

func setup(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, pool: dbtest.New(t)}
	e.store = NewStore(e.pool).OnEnd(func(state string) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.ended = append(e.ended, state)
	})
	return e
}

func (e *env) endedStates() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.ended)
}

// succeeded records a succeeded run of kind on issue (a follow-up's: the pull request) with
// model and patch, as the run's Store leaves it, and returns its id.
func (e *env) succeeded(kind string, issue int, model, patch string) int64 {
	e.t.Helper()
	var id int64
	err := e.pool.QueryRow(context.Background(), `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo,
			issue, labeler, state, kind, model, patch, finished_at, checked_at)
		VALUES ('test', $1, $2, $3, 'octo', 'pager', $4, 'alice', 'succeeded', $5, nullif($6, ''), $7, now(), now()) RETURNING id`,
		fmt.Sprintf("d-%d", time.Now().UnixNano()), testInstallation, testRepoID, issue, kind, model, []byte(patch)).Scan(&id)
	if err != nil {
		e.t.Fatalf("recording a run: %v", err)
	}
	return id
}

// publish hands p to Published in a transaction of its own and links the run to the pull
// request (runs.pr_number), as the run's end does.
func (e *env) publish(p Publication) {
	e.t.Helper()
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE runs SET pr_number = $2 WHERE id = $1`, p.RunID, p.Number); err != nil {
			return err
		}
		return e.store.Published(ctx, tx, p)
	})
	if err != nil {
		e.t.Fatalf("Published: %v", err)
	}
}

func (e *env) row(number int) Row {
	e.t.Helper()
	r, err := e.store.Get(context.Background(), testRepoID, number)
	if err != nil {
		e.t.Fatalf("reading #%d: %v", number, err)
	}
	return r
}

// apply applies ev as the queue's intake does (Follows, then ApplyEvent, in one transaction).
func (e *env) apply(ev Event) (Applied, bool) {
	e.t.Helper()
	ctx := context.Background()
	var a Applied
	var found bool
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		var err error
		if found, err = e.store.Follows(ctx, tx, ev.RepoID, ev.Number); err != nil || !found {
			return err
		}
		a, err = e.store.ApplyEvent(ctx, tx, ev)
		return err
	})
	if err != nil {
		e.t.Fatalf("applying %s: %v", ev.Action, err)
	}
	e.store.Count(a)
	return a, found
}

func sha(c byte) string { return string(slices.Repeat([]byte{c}, 40)) }

func TestPublishedMakesTheRowAndEveryRunMovesIt(t *testing.T) {
	t.Parallel()
	e := setup(t)
	first := e.succeeded("issue", 7, "frog-4b", twoLines)
	e.publish(Publication{RunID: first, Number: 12, Ours: true, Issue: 7, Head: sha('a'), Commits: 1})
	r := e.row(12)
	if r.State != StateOpen || !r.Ours || r.Issue != 7 || r.FirstRunID != first || r.LastRunID != first || r.Model != "frog-4b" ||
		r.BotHeadSHA != sha('a') || r.HeadSHA != sha('a') || r.BotCommits == nil || *r.BotCommits != 1 ||
		r.PatchLines == nil || *r.PatchLines != 2 || r.Followups != 0 || !r.Draft || r.InstallationID != testInstallation || r.Owner != "octo" {
		t.Fatalf("after the first run: %+v", r)
	}
	// A person pushes one commit; then a follow-up run adds its own on top.
	e.apply(Event{Action: "synchronize", RepoID: testRepoID, Number: 12, Sender: "bob", At: time.Now(), HeadSHA: sha('b'), Commits: 2})
	second := e.succeeded("followup", 12, "frog-8b", threeLines)
	e.publish(Publication{RunID: second, Number: 12, Ours: true, Issue: 7, Head: sha('c'), Commits: 3})
	r = e.row(12)
	if r.FirstRunID != first || r.LastRunID != second || r.Model != "frog-8b" || r.Followups != 1 || *r.PatchLines != 5 ||
		r.BotHeadSHA != sha('c') || r.PeopleCommits != 1 || *r.BotCommits != 2 {
		t.Fatalf("after the follow-up: %+v", r)
	}
	// People's commits on top of it count on top of the one they pushed before; a reviewer's
	// request that failed counts as a follow-up asked on it, one still waiting for its check
	// does not.
	if _, err := e.pool.Exec(context.Background(), `UPDATE runs SET state = 'failed', pr_number = NULL WHERE id = $1`, e.succeeded("followup", 12, "", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(context.Background(), `UPDATE runs SET state = 'waiting', checked_at = NULL WHERE id = $1`, e.succeeded("ci", 12, "", "")); err != nil {
		t.Fatal(err)
	}
	e.apply(Event{Action: "synchronize", RepoID: testRepoID, Number: 12, Sender: "bob", At: time.Now(), HeadSHA: sha('d'), Commits: 5})
	if r = e.row(12); r.PeopleCommits != 3 || r.HeadSHA != sha('d') || r.Followups != 2 {
		t.Fatalf("after two more commits by people and a failed follow-up: people_commits %d, head %s, followups %d", r.PeopleCommits, r.HeadSHA, r.Followups)
	}
}

func TestEventsFollowThePullRequestToItsEnd(t *testing.T) {
	t.Parallel()
	e := setup(t)
	id := e.succeeded("issue", 7, "", twoLines)
	e.publish(Publication{RunID: id, Number: 12, Ours: true, Issue: 7, Head: sha('a'), Commits: 1})
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ev := func(action string, min int) Event {
		return Event{Action: action, RepoID: testRepoID, Number: 12, Sender: "carol", At: at.Add(time.Duration(min) * time.Minute), HeadSHA: sha('a'), Commits: 1}
	}

	if _, found := e.apply(Event{Action: "closed", RepoID: testRepoID, Number: 99, At: at}); found {
		t.Fatal("a pull request frognano does not follow was found")
	}
	// frognano's own push (the App's synchronize) is not people's, whatever the head.
	own := ev("synchronize", 1)
	own.ByApp, own.HeadSHA, own.Commits = true, sha('z'), 2
	if a, _ := e.apply(own); a.Changed {
		t.Errorf("the App's own synchronize changed the row: %+v", a)
	}
	if a, _ := e.apply(ev("ready_for_review", 2)); !a.Changed {
		t.Errorf("ready_for_review: %+v", a)
	}
	r := e.row(12)
	if r.Draft || r.ReadyAt == nil || !r.ReadyAt.Equal(at.Add(2*time.Minute)) || r.ReadyBy != "carol" || r.PeopleCommits != 0 {
		t.Fatalf("after ready_for_review: %+v", r)
	}
	closed := ev("closed", 3)
	if a, _ := e.apply(closed); a.Measure {
		t.Error("a close without merge asked for a measure")
	}
	if r = e.row(12); r.State != StateClosed || r.EndedBy != "carol" || r.EndedAt == nil || !r.EndedAt.Equal(at.Add(3*time.Minute)) {
		t.Fatalf("after closed: %+v", r)
	}
	// An event older than the last one applied (delivered late) changes nothing.
	if a, _ := e.apply(ev("converted_to_draft", 1)); !a.Stale || a.Changed {
		t.Errorf("a late event: %+v", a)
	}
	e.apply(ev("reopened", 4))
	if r = e.row(12); r.State != StateOpen || r.Reopened != 1 || r.EndedAt != nil || r.EndedBy != "" {
		t.Fatalf("after reopened: %+v", r)
	}
	merged := ev("closed", 5)
	merged.Merged, merged.MergedBy, merged.MergeSHA = true, "dave", sha('m')
	if a, _ := e.apply(merged); !a.Measure {
		t.Error("a merge asked for no measure")
	}
	if r = e.row(12); r.State != StateMerged || r.EndedBy != "dave" || r.MergeSHA != sha('m') || r.Reopened != 1 || r.ReadyBy != "carol" {
		t.Fatalf("after the merge: %+v", r)
	}
	// A second delivery of the merge (another id) is applied again but counted once.
	e.apply(merged)
	if got := e.endedStates(); !slices.Equal(got, []string{StateClosed, StateMerged}) {
		t.Errorf("ends counted: %v, want closed then merged", got)
	}
}

func TestApplyEventRefusesAnActionItDoesNotRecord(t *testing.T) {
	t.Parallel()
	e := setup(t)
	id := e.succeeded("issue", 7, "", twoLines)
	e.publish(Publication{RunID: id, Number: 12, Ours: true, Issue: 7, Head: sha('a'), Commits: 1})
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		_, err := e.store.ApplyEvent(ctx, tx, Event{Action: "labeled", RepoID: testRepoID, Number: 12, At: time.Now()})
		return err
	})
	if err == nil {
		t.Fatal("ApplyEvent took the action labeled")
	}
	if r := e.row(12); r.EventAt != nil {
		t.Errorf("the refused event changed the row: %+v", r)
	}
}

func TestPatchStats(t *testing.T) {
	t.Parallel()
	rename := "diff --git a/old.go b/new.go\nsimilarity index 90%\nrename from old.go\nrename to new.go\n--- a/old.go\n+++ b/new.go\n@@ -1 +1 @@\n-x\n+y\n"
	binary := "diff --git a/img.png b/img.png\nnew file mode 100644\nBinary files /dev/null and b/img.png differ\n"
	for _, c := range []struct {
		name, patch string
		files       []string
		lines       int
	}{
		{"Modified", twoLines, []string{"calc.py"}, 2},
		{"Added", threeLines, []string{"util.py"}, 3},
		{"Two", twoLines + threeLines, []string{"calc.py", "util.py"}, 5},
		{"Renamed", rename, []string{"new.go", "old.go"}, 2},
		{"BinaryCountsNoLine", binary, []string{"img.png"}, 0},
		{"HunkLinesThatLookLikeHeaders", "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n---- x\n++++ y\n", []string{"a"}, 2},
		{"Empty", "", nil, 0},
		// git quotes a path with bytes >= 0x80 (core.quotePath), a tab, a newline, '"' or '\\'.
		{"QuotedPath", "diff --git \"a/\\303\\274.txt\" \"b/\\303\\274.txt\"\nindex 7898192..6178079 100644\n--- \"a/\\303\\274.txt\"\n+++ \"b/\\303\\274.txt\"\n@@ -1 +1 @@\n-a\n+b\n", []string{"ü.txt"}, 2},
		{"QuotedRename", "diff --git \"a/a\\tb\" b/c\nsimilarity index 100%\nrename from \"a\\tb\"\nrename to c\n", []string{"a\tb", "c"}, 0},
		// A binary file is touched (the measure compares it, counting one), with no line.
		{"GitBinaryPatch", "diff --git a/bin.dat b/bin.dat\nindex bdc955b..8835708 100644\nGIT binary patch\nliteral 2\nJcmZQz0ssI600RI3\n\nliteral 2\nJcmZQz1ONa700IC2\n\n", []string{"bin.dat"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			files, lines := patchStats([]byte(c.patch))
			if !slices.Equal(files, c.files) || lines != c.lines {
				t.Errorf("patchStats = %q, %d; want %q, %d", files, lines, c.files, c.lines)
			}
		})
	}
}

// An end is counted (frognano_pull_requests_ended_total) once it is committed: a transaction
// that rolls back after ApplyEvent (the measure job could not be queued, the commit failed)
// counts nothing, and the redelivery that follows counts it once.
func TestAnEndIsCountedWhenCommitted(t *testing.T) {
	t.Parallel()
	e := setup(t)
	id := e.succeeded("issue", 7, "", twoLines)
	e.publish(Publication{RunID: id, Number: 12, Ours: true, Issue: 7, Head: sha('a'), Commits: 1})
	closed := Event{Action: "closed", RepoID: testRepoID, Number: 12, Sender: "carol", At: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	ctx := context.Background()
	failed := errors.New("the commit failed")
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		if _, err := e.store.ApplyEvent(ctx, tx, closed); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatal(err)
	}
	if got := e.endedStates(); len(got) != 0 {
		t.Errorf("a close that rolled back was counted: %v", got)
	}
	e.apply(closed)
	if got := e.endedStates(); !slices.Equal(got, []string{StateClosed}) {
		t.Errorf("ends counted %v, want one close", got)
	}
}

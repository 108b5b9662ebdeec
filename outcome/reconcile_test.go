package outcome

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/githubapp"
)

// fakeGitHub answers the Reconciler from memory and records what it was asked.
type fakeGitHub struct {
	mu        sync.Mutex
	pulls     map[int]githubapp.PullState // by number
	goneRepo  bool
	remaining int // X-RateLimit-Remaining of each answer; 0: none sent
	replaced  int
	// replacedErr, when set, is MergedReplacement's answer (the issue's timeline refused).
	replacedErr error
	timelines   int
	lines       int
	linesErr    error // PeopleLines' answer when set
	opened      int
	asked       []int
	measured    [][2]string
}

func (f *fakeGitHub) ForRepo(context.Context, int64, int64, string, string) (Repo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened++
	if f.goneRepo {
		return nil, &github.ErrorResponse{Response: &http.Response{StatusCode: http.StatusNotFound}, Message: "Not Found"}
	}
	return f, nil
}

func (f *fakeGitHub) PullState(_ context.Context, number int) (githubapp.PullState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, number)
	st, ok := f.pulls[number]
	if !ok {
		return githubapp.PullState{RateRemaining: -1}, &github.ErrorResponse{Response: &http.Response{StatusCode: http.StatusNotFound}, Message: "Not Found"}
	}
	st.RateRemaining = -1
	if f.remaining > 0 {
		st.RateRemaining = f.remaining
	}
	return st, nil
}

func (f *fakeGitHub) MergedReplacement(context.Context, int, time.Time) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.timelines++
	if f.replacedErr != nil {
		return 0, f.replacedErr
	}
	return f.replaced, nil
}

func (f *fakeGitHub) PeopleLines(_ context.Context, _ string, _ int, from, to string, files []string, _ time.Time) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.measured = append(f.measured, [2]string{from, to + " " + strings.Join(files, ",")})
	if f.linesErr != nil {
		return 0, f.linesErr
	}
	return f.lines, nil
}

func (e *env) opened(numbers ...int) {
	e.t.Helper()
	for _, n := range numbers {
		id := e.succeeded("issue", n+100, "m", twoLines)
		e.publish(Publication{RunID: id, Number: n, Ours: true, Issue: n + 100, Head: sha('a'), Commits: 1})
	}
}

func TestRoundRecordsWhatEventsMissed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.opened(1, 2, 3)
	merged := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	gh := &fakeGitHub{pulls: map[int]githubapp.PullState{
		1: {State: "closed", Merged: true, MergedBy: "dave", MergedAt: merged, MergeSHA: sha('m'), HeadSHA: sha('b'), Commits: 3},
		2: {State: "closed", ClosedAt: merged, HeadSHA: sha('a'), Commits: 1, Draft: true},
		3: {State: "open", HeadSHA: sha('a'), Commits: 1},
	}, lines: 4, replaced: 40}
	rec := NewReconciler(e.store, gh, Config{Budget: 100})
	rep, err := rec.Round(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Asked != 3 || rep.Calls != CostOpen+3*CostPull || rep.Stopped != "" || gh.opened != 1 {
		t.Errorf("round = %+v, repositories opened %d; want 3 asked in %d calls, one opening", rep, gh.opened, CostOpen+3*CostPull)
	}
	r1 := e.row(1)
	if r1.State != StateMerged || r1.EndedBy != "dave" || !r1.EndedAt.Equal(merged) || r1.PeopleCommits != 2 || r1.HeadSHA != sha('b') ||
		r1.PeopleLines == nil || *r1.PeopleLines != 4 || r1.SyncedAt == nil {
		t.Errorf("#1 (merged after two commits by people) = %+v", r1)
	}
	if len(gh.measured) != 1 || gh.measured[0] != [2]string{sha('a'), sha('b') + " calc.py"} {
		t.Errorf("measured %v, want frognano's head against the merged one on calc.py", gh.measured)
	}
	if r2 := e.row(2); r2.State != StateClosed || r2.EndedBy != "" || r2.PeopleCommits != 0 || r2.ReplacedBy != nil {
		t.Errorf("#2 (closed) = %+v", r2)
	}
	if r3 := e.row(3); r3.State != StateOpen || r3.Draft || r3.ReadyAt == nil {
		t.Errorf("#3 (open, marked ready) = %+v", r3)
	}
	if got := e.endedStates(); !slices.Equal(got, []string{StateMerged, StateClosed}) {
		t.Errorf("ends counted %v", got)
	}
	// The next round asks about the open one and looks for what replaced the closed one.
	rep, err = rec.Round(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Asked != 2 || rep.Calls != CostOpen+CostPull+CostTimeline {
		t.Errorf("second round = %+v", rep)
	}
	if r2 := e.row(2); r2.ReplacedBy == nil || *r2.ReplacedBy != 40 {
		t.Errorf("#2 replaced_by = %v, want 40", r2.ReplacedBy)
	}
}

func TestRoundStaysWithinItsBudgetOldestSyncedFirst(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.opened(1, 2, 3, 4, 5)
	gh := &fakeGitHub{pulls: map[int]githubapp.PullState{}}
	for n := 1; n <= 5; n++ {
		gh.pulls[n] = githubapp.PullState{State: "open", HeadSHA: sha('a'), Commits: 1, Draft: true}
	}
	rec := NewReconciler(e.store, gh, Config{Budget: CostOpen + 2*CostPull})
	var asked []int
	for range 3 {
		rep, err := rec.Round(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Calls > CostOpen+2*CostPull || rep.Stopped != "budget" {
			t.Fatalf("round = %+v, over its budget or not stopped by it", rep)
		}
	}
	asked = gh.asked
	if want := []int{1, 2, 3, 4, 5, 1}; !slices.Equal(asked, want) {
		t.Errorf("asked %v, want %v (never-synced first, then the oldest synced)", asked, want)
	}
}

func TestRoundStopsWhenTheRateLimitRunsLow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.opened(1, 2, 3)
	gh := &fakeGitHub{pulls: map[int]githubapp.PullState{}, remaining: 120}
	for n := 1; n <= 3; n++ {
		gh.pulls[n] = githubapp.PullState{State: "open", HeadSHA: sha('a'), Commits: 1, Draft: true}
	}
	rep, err := NewReconciler(e.store, gh, Config{Budget: 100, MinRateRemaining: 200}).Round(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stopped != "rate limit" || rep.Asked != 1 || len(gh.asked) != 1 {
		t.Errorf("round = %+v after %v; want it to stop after the first answer", rep, gh.asked)
	}
}

func TestGoneIsAskedOnceNeverAgain(t *testing.T) {
	t.Parallel()
	t.Run("Repository", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.opened(1, 2)
		gh := &fakeGitHub{goneRepo: true}
		rec := NewReconciler(e.store, gh, Config{Budget: 100})
		for range 3 {
			if _, err := rec.Round(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if gh.opened != 1 {
			t.Errorf("the deleted repository was opened %d times, want once", gh.opened)
		}
		for _, n := range []int{1, 2} {
			if r := e.row(n); r.State != StateGone || r.EndedAt == nil {
				t.Errorf("#%d = %+v, want gone", n, r)
			}
		}
		if got := e.endedStates(); !slices.Equal(got, []string{StateGone, StateGone}) {
			t.Errorf("ends counted %v", got)
		}
	})
	t.Run("PullRequest", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		e.opened(1)
		gh := &fakeGitHub{pulls: map[int]githubapp.PullState{}}
		rec := NewReconciler(e.store, gh, Config{Budget: 100})
		for range 3 {
			if _, err := rec.Round(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(gh.asked, []int{1}) {
			t.Errorf("asked %v, want #1 once", gh.asked)
		}
		if r := e.row(1); r.State != StateGone {
			t.Errorf("#1 = %+v, want gone", r)
		}
	})
}

func TestMeasureMergedAsIsNeedsNoGit(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.opened(1)
	merged := Event{Action: "closed", RepoID: testRepoID, Number: 1, Sender: "dave", Merged: true, MergedBy: "dave", At: time.Now(), HeadSHA: sha('a'), Commits: 1}
	e.apply(merged)
	gh := &fakeGitHub{}
	if err := NewReconciler(e.store, gh, Config{}).Measure(context.Background(), testRepoID, 1); err != nil {
		t.Fatal(err)
	}
	if r := e.row(1); r.PeopleLines == nil || *r.PeopleLines != 0 || gh.opened != 0 {
		t.Errorf("people_lines %v after %d openings; want 0 without asking GitHub", r.PeopleLines, gh.opened)
	}
}

// TestOneRoundAtATime: while another round (another process's) holds the lock, a round asks
// GitHub nothing and says so.
func TestOneRoundAtATime(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.opened(1)
	conn, err := e.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_lock($1::int4, hashtext(current_schema()))`, roundLock); err != nil {
		t.Fatal(err)
	}
	gh := &fakeGitHub{pulls: map[int]githubapp.PullState{1: {State: "open"}}}
	rep, err := NewReconciler(e.store, gh, Config{}).Round(context.Background())
	if err != nil || rep.Stopped != "busy" || gh.opened != 0 || len(gh.asked) != 0 {
		t.Errorf("round while another holds the lock = %+v, %v; opened %d, asked %v", rep, err, gh.opened, gh.asked)
	}
	if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1::int4, hashtext(current_schema()))`, roundLock); err != nil {
		t.Fatal(err)
	}
	if rep, err = NewReconciler(e.store, gh, Config{}).Round(context.Background()); err != nil || rep.Asked != 1 {
		t.Errorf("round after the lock was given back = %+v, %v", rep, err)
	}
}

// brokenRepoGitHub is fakeGitHub except that one repository cannot be opened (GitHub answers
// 500 for it: not gone, just failing for now).
type brokenRepoGitHub struct {
	*fakeGitHub
	broken int64
}

func (b brokenRepoGitHub) ForRepo(ctx context.Context, installationID, repoID int64, owner, repo string) (Repo, error) {
	if repoID == b.broken {
		return nil, &github.ErrorResponse{Response: &http.Response{StatusCode: http.StatusInternalServerError}, Message: "Server Error"}
	}
	return b.fakeGitHub.ForRepo(ctx, installationID, repoID, owner, repo)
}

// A repository GitHub keeps failing to open must not hold the head of the queue: when it has
// as many candidates as the budget, rounds would list only its rows, fail, and never ask about
// any other repository's pull requests.
func TestRoundDoesNotStarveBehindARepositoryThatFailsToOpen(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	const broken = testRepoID + 1
	for n := 1; n <= 10; n++ {
		var id int64
		if err := e.pool.QueryRow(ctx, `INSERT INTO runs (hook_target, delivery_id, installation_id, repo_id, owner, repo,
				issue, labeler, state, kind, patch, finished_at, checked_at)
			VALUES ('test', $1, $2, $3, 'octo', 'broken', $4, 'alice', 'succeeded', 'issue', $5, now(), now()) RETURNING id`,
			fmt.Sprintf("broken-%d", n), testInstallation, broken, n+100, []byte(twoLines)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		e.publish(Publication{RunID: id, Number: n, Ours: true, Issue: n + 100, Head: sha('a'), Commits: 1})
	}
	time.Sleep(10 * time.Millisecond) // the working repository's pull request is opened later
	e.opened(50)
	gh := &fakeGitHub{pulls: map[int]githubapp.PullState{50: {State: "open", HeadSHA: sha('a'), Commits: 1}}}
	rec := NewReconciler(e.store, brokenRepoGitHub{gh, broken}, Config{Budget: 10})
	for range 3 {
		if _, err := rec.Round(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Contains(gh.asked, 50) {
		t.Errorf("three rounds asked about %v: the working repository's #50 never, behind the failing one's rows", gh.asked)
	}
}

// An event older than what a round recorded is as stale as one older than an event: a
// reopened delivered late (an operator's redelivery of one that got a 5xx) after the round
// recorded the later close must not reopen the row, count a reopening, or make the next round
// count the close a second time.
func TestAnEventOlderThanWhatARoundRecordedChangesNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.opened(1)
	closedAt := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	gh := &fakeGitHub{pulls: map[int]githubapp.PullState{1: {State: "closed", ClosedAt: closedAt, HeadSHA: sha('a'), Commits: 1}}}
	rec := NewReconciler(e.store, gh, Config{Budget: 100})
	if _, err := rec.Round(context.Background()); err != nil {
		t.Fatal(err)
	}
	late := Event{Action: "reopened", RepoID: testRepoID, Number: 1, Sender: "carol", At: closedAt.Add(-time.Hour), HeadSHA: sha('a'), Commits: 1}
	if a, _ := e.apply(late); a.Changed || !a.Stale {
		t.Errorf("a reopened from before the close the round recorded: %+v", a)
	}
	if r := e.row(1); r.State != StateClosed || r.Reopened != 0 {
		t.Errorf("after the late reopened: state %s, reopened %d; want closed, 0", r.State, r.Reopened)
	}
	if got := e.endedStates(); !slices.Equal(got, []string{StateClosed}) {
		t.Errorf("ends counted %v, want one close", got)
	}
}

// An issue GitHub answers 404 for (deleted, or transferred to another repository) has no
// timeline to read: its closed pull request is not asked about again at every round until it
// is older than the maximum age.
func TestRoundStopsLookingForTheReplacementOfAGoneIssue(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.opened(1)
	closedAt := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	gh := &fakeGitHub{pulls: map[int]githubapp.PullState{1: {State: "closed", ClosedAt: closedAt, HeadSHA: sha('a'), Commits: 1}},
		replacedErr: &github.ErrorResponse{Response: &http.Response{StatusCode: http.StatusNotFound}, Message: "Not Found"}}
	rec := NewReconciler(e.store, gh, Config{Budget: 100})
	for range 4 {
		if _, err := rec.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if gh.timelines != 1 {
		t.Errorf("the gone issue's timeline was asked for %d times in 3 rounds after the close, want once", gh.timelines)
	}
}

// A merged pull request whose frognano head people force-pushed away cannot be measured, now
// or later: the measure job ends without an error (River would retry it, fetching the
// repository each time) and the lines stay unknown.
func TestMeasureOfAHeadForcePushedAwayIsNotRetried(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.opened(1)
	merged := Event{Action: "closed", RepoID: testRepoID, Number: 1, Sender: "dave", Merged: true, MergedBy: "dave", MergeSHA: sha('m'),
		At: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), HeadSHA: sha('f'), Commits: 1}
	if a, _ := e.apply(merged); !a.Measure {
		t.Fatal("the merge asked for no measure")
	}
	gh := &fakeGitHub{linesErr: fmt.Errorf("measuring: %w", githubapp.ErrNotFetched)}
	if err := NewReconciler(e.store, gh, Config{}).Measure(context.Background(), testRepoID, 1); err != nil {
		t.Errorf("Measure = %v, want nil: nothing a retry could change", err)
	}
	if r := e.row(1); r.PeopleLines != nil {
		t.Errorf("people_lines = %d, want unknown", *r.PeopleLines)
	}
}

package export

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// repoIDs are the ids of the repositories the operator named, with the name each is exported
// under. A repository is found by its latest name in runs (its id decides, not a name someone
// else can register after a rename). missing lists the names no run has.
func repoIDs(ctx context.Context, pool *pgxpool.Pool, repos []Repo) (ids []int64, names map[int64]string, missing []string, err error) {
	names = map[int64]string{}
	for _, r := range repos {
		rows, err := pool.Query(ctx, `SELECT repo_id, owner, repo FROM (
				SELECT DISTINCT ON (repo_id) repo_id, owner, repo FROM runs ORDER BY repo_id, id DESC) latest
			WHERE lower(owner) = lower($1) AND lower(repo) = lower($2) ORDER BY repo_id`, r.Owner, r.Name)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("finding the repository %s: %w", r, err)
		}
		found := false
		for rows.Next() {
			var id int64
			var owner, name string
			if err := rows.Scan(&id, &owner, &name); err != nil {
				rows.Close()
				return nil, nil, nil, fmt.Errorf("finding the repository %s: %w", r, err)
			}
			found = true
			if _, dup := names[id]; !dup {
				ids = append(ids, id)
				names[id] = owner + "/" + name
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, nil, fmt.Errorf("finding the repository %s: %w", r, err)
		}
		if !found {
			missing = append(missing, r.String())
		}
	}
	return ids, names, missing, nil
}

// selection is the WHERE clause of the runs an export writes: finished runs of the named
// repositories (by id) with a trajectory, created since $3, after run $2, whose pull request
// ended as the outcome asks. $1 is the repositories' ids. The pull request of a run: an issue
// run's pr_number; a follow-up's or a CI run's issue. Only the runs' columns are read, not
// their trajectories: hasTurn is that part of the choice (at least one model turn), which
// reading a trajectory costs, applied once to the runs selection picks.
func selection(outcome string) string {
	w := `r.repo_id = ANY($1) AND r.id > $2 AND r.created_at >= $3
		AND r.state IN ('succeeded', 'failed', 'cancelled', 'skipped') AND r.trajectory IS NOT NULL`
	switch outcome {
	case OutcomeMerged:
		w += ` AND po.state = 'merged'`
	case OutcomeClosed:
		w += ` AND po.state = 'closed'`
	}
	return w
}

// hasTurn keeps the trajectories with at least one model turn (more than the system and user
// messages): a run whose setup failed, or whose model never answered, has nothing to learn from.
const hasTurn = ` AND jsonb_typeof(r.trajectory -> 'messages') = 'array' AND jsonb_array_length(r.trajectory -> 'messages') > 2`

const fromRuns = `FROM runs r
	CROSS JOIN LATERAL (SELECT CASE WHEN r.kind = 'issue' THEN r.pr_number ELSE r.issue END AS number) pr
	LEFT JOIN pull_outcomes po ON po.repo_id = r.repo_id AND po.number = pr.number`

// planRow is what the dry run counts of one repository.
type planRow struct {
	repoID    int64
	runs      int
	leafBytes int64
	chatBytes int64
}

func countRuns(ctx context.Context, pool *pgxpool.Pool, ids []int64, after int64, since time.Time, outcome string) ([]planRow, error) {
	rows, err := pool.Query(ctx, `SELECT r.repo_id, count(*), coalesce(sum(octet_length(r.trajectory::text)), 0),
			coalesce(sum(octet_length((r.trajectory -> 'messages')::text)), 0)
		`+fromRuns+` WHERE `+selection(outcome)+hasTurn+` GROUP BY r.repo_id ORDER BY r.repo_id`, ids, after, since)
	if err != nil {
		return nil, fmt.Errorf("counting the runs to export: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (planRow, error) {
		var p planRow
		err := row.Scan(&p.repoID, &p.runs, &p.leafBytes, &p.chatBytes)
		return p, err
	})
}

// runIDs are the ids of the runs selection picks, in order: one pass over the runs' columns
// (no trajectory read), so that each batch then reads its runs by primary key, whatever
// index the planner would choose to find a repository's runs.
func runIDs(ctx context.Context, pool *pgxpool.Pool, ids []int64, after int64, since time.Time, outcome string) ([]int64, error) {
	rows, err := pool.Query(ctx, `SELECT r.id `+fromRuns+` WHERE `+selection(outcome)+` ORDER BY r.id`, ids, after, since)
	if err != nil {
		return nil, fmt.Errorf("listing the runs to export: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("listing the runs to export: %w", err)
	}
	return out, nil
}

// source is one run as an export reads it: the runs row, its last tests event, its pull
// request's outcome and the follow-up requests after it.
type source struct {
	id, repoID            int64
	issue                 int
	kind, model, state    string
	exitReason, baseSHA   string
	createdAt             time.Time
	steps                 int
	check                 string
	prNumber              *int
	trajectory            []byte
	tests                 []byte // the tests event's data, or nil
	poState               *string
	poOurs, poDraft       bool
	poReady               bool
	poIssue               *int
	poLastRun             int64
	poOpenedAt, poEndedAt *time.Time
	poReopened, poPeople  int
	poPatch, poPeopleL    *int
	poMerge               string
	poReplaced            *int
	poFollowups           int
}

// batch reads the runs of ids that have a model turn (hasTurn), in id order.
func batch(ctx context.Context, pool *pgxpool.Pool, ids []int64) ([]source, error) {
	rows, err := pool.Query(ctx, `SELECT r.id, r.repo_id, r.issue, r.kind, coalesce(r.model, ''), r.state,
			coalesce(r.exit_reason, ''), coalesce(r.base_sha, ''), r.created_at, coalesce(r.steps, 0),
			coalesce(r.check_run ->> 'Conclusion', ''), pr.number, r.trajectory,
			(SELECT e.data FROM run_events e WHERE e.run_id = r.id AND e.kind = 'tests' ORDER BY e.id DESC LIMIT 1),
			po.state, coalesce(po.ours, false), coalesce(po.draft, false), po.ready_at IS NOT NULL, po.issue,
			coalesce(po.last_run_id, 0), po.opened_at, po.ended_at, coalesce(po.reopened, 0),
			coalesce(po.people_commits, 0), po.patch_lines, po.people_lines, coalesce(po.merge_sha, ''),
			nullif(po.replaced_by, 0), coalesce(po.followups, 0)
		`+fromRuns+` WHERE r.id = ANY($1)`+hasTurn+` ORDER BY r.id`, ids)
	if err != nil {
		return nil, fmt.Errorf("reading the runs to export: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (source, error) {
		var s source
		err := row.Scan(&s.id, &s.repoID, &s.issue, &s.kind, &s.model, &s.state, &s.exitReason, &s.baseSHA,
			&s.createdAt, &s.steps, &s.check, &s.prNumber, &s.trajectory, &s.tests,
			&s.poState, &s.poOurs, &s.poDraft, &s.poReady, &s.poIssue, &s.poLastRun, &s.poOpenedAt, &s.poEndedAt,
			&s.poReopened, &s.poPeople, &s.poPatch, &s.poPeopleL, &s.poMerge, &s.poReplaced, &s.poFollowups)
		return s, err
	})
}

// pullKey names a pull request: its repository's id and its number.
type pullKey struct {
	repoID int64
	number int
}

// followUps reads the requests of every follow-up run of the repositories ids, by pull
// request, oldest first: one pass over runs (no index finds a pull request's runs by id), held
// for the whole export.
func followUps(ctx context.Context, pool *pgxpool.Pool, ids []int64) (map[pullKey][]FollowUp, error) {
	rows, err := pool.Query(ctx, `SELECT repo_id, issue, id, request FROM runs
		WHERE repo_id = ANY($1) AND kind = 'followup' AND request IS NOT NULL ORDER BY id`, ids)
	if err != nil {
		return nil, fmt.Errorf("reading the follow-up requests: %w", err)
	}
	defer rows.Close()
	out := map[pullKey][]FollowUp{}
	for rows.Next() {
		var k pullKey
		var f FollowUp
		if err := rows.Scan(&k.repoID, &k.number, &f.RunID, &f.Request); err != nil {
			return nil, fmt.Errorf("reading the follow-up requests: %w", err)
		}
		out[k] = append(out[k], f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the follow-up requests: %w", err)
	}
	return out, nil
}

// labelsOf builds the labels of s (redacting every text of it with red); fus are the
// follow-up requests of its repositories.
func labelsOf(s source, repo string, fus map[pullKey][]FollowUp, red *Redactor) (Labels, error) {
	l := Labels{RunID: s.id, Repository: repo, Kind: s.kind, Model: red.Text(s.model), CreatedAt: s.createdAt.UTC(),
		State: s.state, ExitReason: s.exitReason, Steps: s.steps, BaseCommit: s.baseSHA, Check: s.check,
		Verified: s.check == "success", PullRequest: s.prNumber, FollowUps: []FollowUp{}}
	if s.kind == "issue" {
		issue := s.issue
		l.Issue = &issue
	} else {
		l.Issue = s.poIssue
	}
	if s.tests != nil {
		t, err := testsOf(s.tests, red)
		if err != nil {
			return l, fmt.Errorf("reading run %d's tests: %w", s.id, err)
		}
		l.Tests = t
	}
	if s.poState != nil && s.poOpenedAt != nil {
		o := &Outcome{State: *s.poState, Ours: s.poOurs, LastRun: s.poLastRun == s.id, Draft: s.poDraft, Ready: s.poReady,
			OpenedAt: s.poOpenedAt.UTC(), Reopened: s.poReopened, PeopleCommits: s.poPeople,
			PatchLines: s.poPatch, PeopleLines: s.poPeopleL, MergeCommit: s.poMerge, ReplacedBy: s.poReplaced, FollowUps: s.poFollowups}
		if s.poEndedAt != nil {
			e := s.poEndedAt.UTC()
			o.EndedAt = &e
		}
		if o.PatchLines != nil && o.PeopleLines != nil && *o.PatchLines > 0 {
			share := float64(*o.PeopleLines) / float64(*o.PatchLines)
			o.PeopleShare = &share
		}
		l.Outcome = o
	}
	if s.prNumber != nil {
		for _, f := range fus[pullKey{s.repoID, *s.prNumber}] {
			if f.RunID > s.id {
				l.FollowUps = append(l.FollowUps, FollowUp{RunID: f.RunID, Request: red.Text(f.Request)})
			}
		}
	}
	return l, nil
}

// testsOf reads a tests event (run.TestsEvent's JSON) into Tests, its texts redacted and the
// output's tail left out.
func testsOf(data []byte, red *Redactor) (*Tests, error) {
	var e struct {
		Before  *TestRun  `json:"before"`
		After   *TestRun  `json:"after"`
		PerTest bool      `json:"per_test"`
		Tests   []TestRow `json:"tests"`
		More    int       `json:"more_tests"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, err
	}
	t := &Tests{Before: e.Before, After: e.After, PerTest: e.PerTest, Tests: e.Tests, More: e.More}
	if t.Tests == nil {
		t.Tests = []TestRow{}
	}
	for _, r := range []*TestRun{t.Before, t.After} {
		if r != nil {
			r.Command, r.Error = red.Text(r.Command), red.Text(r.Error)
		}
	}
	for i := range t.Tests {
		t.Tests[i].Name = red.Text(t.Tests[i].Name)
	}
	return t, nil
}

package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The Store's reads and updates that only follow-ups make: the pull request's earlier runs,
// the request's source, the CI budget and the requests counted on a refused run.

// earlierRuns lists, oldest first, one line of fact for each finished run on the pull
// request of follow-up r: the issue's runs and the follow-ups before r. They are found by the
// repository's id: runs stored under the same name may be another repository's (the name
// changed hands), whose headlines must not reach this one's task.
func (s *Store) earlierRuns(ctx context.Context, r *row, issue int) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, kind, state, coalesce(exit_reason, ''), coalesce(headline, '')
		FROM runs WHERE repo_id = $1 AND id < $2 AND state IN ('succeeded', 'failed')
			AND ((kind = 'issue' AND issue = $3) OR (kind IN ('followup', 'ci') AND issue = $4))
		ORDER BY id DESC LIMIT 10`, r.RepoID, r.ID, issue, r.Issue)
	if err != nil {
		return nil, fmt.Errorf("listing earlier runs: %w", err)
	}
	type row struct {
		id                                int64
		kind, state, exitReason, headline string
	}
	list, err := pgx.CollectRows(rows, func(cr pgx.CollectableRow) (row, error) {
		var x row
		err := cr.Scan(&x.id, &x.kind, &x.state, &x.exitReason, &x.headline)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing earlier runs: %w", err)
	}
	out := make([]string, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		x := list[i]
		what := "the first run, on the issue"
		switch x.kind {
		case KindFollowUp:
			what = "a follow-up"
		case KindCI:
			what = "a follow-up after CI failed"
		}
		line := fmt.Sprintf("Run %d (%s): %s, exit reason %s.", x.id, what, x.state, x.exitReason)
		if x.headline != "" {
			line += " " + x.headline
		}
		out = append(out, line)
	}
	return out, nil
}

// sourceID is the run's review or check suite (runs.source_id; 0: none).
func (s *Store) sourceID(ctx context.Context, id int64) (int64, error) {
	var src int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(source_id, 0) FROM runs WHERE id = $1`, id).Scan(&src); err != nil {
		return 0, fmt.Errorf("reading the source of run %d: %w", id, err)
	}
	return src, nil
}

// earlierRunOfSource returns an earlier, not skipped follow-up of the same pull request that
// came from the same review (a review and its line comments arrive as several events), or 0.
func (s *Store) earlierRunOfSource(ctx context.Context, r *row, source int64) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT id FROM runs WHERE repo_id = $1 AND issue = $2 AND kind = $3
		AND source_id = $4 AND id < $5 AND state <> 'skipped' ORDER BY id LIMIT 1`,
		r.RepoID, r.Issue, r.Kind, source, r.ID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("looking for an earlier run of the same review: %w", err)
	}
	return id, nil
}

// ciUsed counts the CI follow-ups of r's pull request that started before r (skipped ones do
// not count). By the repository's id: a rename does not reset the budget, and a new
// repository of an old name does not inherit another's count.
func (s *Store) ciUsed(ctx context.Context, r *row) (int, error) {
	var used int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE repo_id = $1 AND issue = $2
		AND kind = 'ci' AND id < $3 AND state <> 'skipped'`, r.RepoID, r.Issue, r.ID).Scan(&used)
	if err != nil {
		return 0, fmt.Errorf("counting CI follow-ups: %w", err)
	}
	return used, nil
}

// extraRequests reads how many requests are counted on run id (runs.extra_requests).
func (s *Store) extraRequests(ctx context.Context, id int64) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT extra_requests FROM runs WHERE id = $1`, id).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading the requests counted on run %d: %w", id, err)
	}
	return n, nil
}

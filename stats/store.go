package stats

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Reader is what `frognano stats`, the stats page and the runs list read: a *Store is one.
type Reader interface {
	// History returns the runs created and frognano's pull requests opened at or after since.
	History(ctx context.Context, since time.Time) (*History, error)
	// PullStates returns the state (pull_outcomes.state) of each pull request of keys that
	// has an outcome recorded; a pull request with none is left out.
	PullStates(ctx context.Context, keys []PullKey) (map[PullKey]string, error)
}

// PullKey names a pull request by its repository's id and its number.
type PullKey struct {
	RepoID int64
	Number int
}

// Store reads runs and pull_outcomes with plain SELECTs; it writes nothing.
type Store struct{ pool *pgxpool.Pool }

var _ Reader = (*Store)(nil)

// NewStore reads the database of pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// History returns the runs created and frognano's pull requests opened at or after since.
func (s *Store) History(ctx context.Context, since time.Time) (*History, error) {
	h := &History{Since: since, Names: map[int64]string{}}
	// Tokens of the runs that published to each pull request (runs.pr_number: an issue run
	// that opened or updated it, a follow-up that added a commit), whenever they ran.
	rows, err := s.pool.Query(ctx, `WITH spent AS (
			SELECT repo_id, pr_number, sum(coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0))::bigint AS tokens
			FROM runs WHERE pr_number IS NOT NULL GROUP BY repo_id, pr_number)
		SELECT p.repo_id, p.number, p.owner || '/' || p.repo, coalesce(p.model, ''),
			coalesce(nullif(f.trigger_label, ''), nullif(f.trigger, ''), ''), p.opened_at, p.state, p.ended_at,
			p.patch_lines, p.people_lines, p.followups, coalesce(spent.tokens, 0)
		FROM pull_outcomes p
			LEFT JOIN runs f ON f.id = p.first_run_id
			LEFT JOIN spent ON spent.repo_id = p.repo_id AND spent.pr_number = p.number
		WHERE p.ours AND p.opened_at >= $1
		ORDER BY p.opened_at, p.repo_id, p.number`, since)
	if err != nil {
		return nil, fmt.Errorf("reading the pull requests' outcomes: %w", err)
	}
	for rows.Next() {
		var p Pull
		if err := rows.Scan(&p.RepoID, &p.Number, &p.Name, &p.Model, &p.Label, &p.OpenedAt, &p.State, &p.EndedAt,
			&p.PatchLines, &p.PeopleLines, &p.FollowUps, &p.Tokens); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading a pull request's outcome: %w", err)
		}
		h.Pulls = append(h.Pulls, p)
		h.Names[p.RepoID] = p.Name
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the pull requests' outcomes: %w", err)
	}
	// Runs counted by repository, model, week and label: a few rows per repository and week
	// however many runs there were.
	rows, err = s.pool.Query(ctx, `SELECT repo_id, (array_agg(owner || '/' || repo ORDER BY id DESC))[1], max(id), coalesce(model, ''),
			date_trunc('week', created_at AT TIME ZONE 'UTC') AS week,
			coalesce(nullif(trigger_label, ''), nullif(trigger, ''), '') AS label, count(*)
		FROM runs WHERE created_at >= $1
		GROUP BY repo_id, coalesce(model, ''), week, label
		ORDER BY week, repo_id`, since)
	if err != nil {
		return nil, fmt.Errorf("counting the runs: %w", err)
	}
	defer rows.Close()
	newest := map[int64]int64{} // the newest run's id per repository: its name is the latest
	for rows.Next() {
		var r RunCount
		var name string
		var last int64
		if err := rows.Scan(&r.RepoID, &name, &last, &r.Model, &r.Week, &r.Label, &r.Runs); err != nil {
			return nil, fmt.Errorf("counting the runs: %w", err)
		}
		// A repository's newest run in the period names it, over pull_outcomes' record.
		if last > newest[r.RepoID] {
			newest[r.RepoID] = last
			h.Names[r.RepoID] = name
		}
		h.Runs = append(h.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("counting the runs: %w", err)
	}
	return h, nil
}

// PullStates returns the state of each pull request of keys that has an outcome recorded.
func (s *Store) PullStates(ctx context.Context, keys []PullKey) (map[PullKey]string, error) {
	out := map[PullKey]string{}
	if len(keys) == 0 {
		return out, nil
	}
	ids, numbers := make([]int64, len(keys)), make([]int32, len(keys))
	for i, k := range keys {
		ids[i], numbers[i] = k.RepoID, int32(k.Number)
	}
	rows, err := s.pool.Query(ctx, `SELECT p.repo_id, p.number, p.state FROM pull_outcomes p
		JOIN unnest($1::bigint[], $2::integer[]) AS k(repo_id, number) ON k.repo_id = p.repo_id AND k.number = p.number`, ids, numbers)
	if err != nil {
		return nil, fmt.Errorf("reading the pull requests' states: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k PullKey
		var state string
		if err := rows.Scan(&k.RepoID, &k.Number, &state); err != nil {
			return nil, fmt.Errorf("reading a pull request's state: %w", err)
		}
		out[k] = state
	}
	return out, rows.Err()
}

package outcome

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/githubapp"
)

// The Store's writes for reconciliation (Reconciler).

// gone records pull request number of repository repoID as gone (GitHub answered 404 or 410
// for it while it was open): it is never asked about again.
func (s *Store) gone(ctx context.Context, repoID int64, number int) error {
	tag, err := s.pool.Exec(ctx, `UPDATE pull_outcomes SET state = 'gone', ended_at = now(), synced_at = now(), updated_at = now()
		WHERE repo_id = $1 AND number = $2 AND state = 'open'`, repoID, number)
	if err != nil {
		return fmt.Errorf("recording pull request #%d of repository %d as gone: %w", number, repoID, err)
	}
	if tag.RowsAffected() > 0 {
		s.end(StateGone)
	}
	return nil
}

// goneRepo records every open pull request of repository repoID as gone (GitHub no longer
// has the repository for this installation), and stops looking for the replacements of its
// closed ones; it returns how many were open.
func (s *Store) goneRepo(ctx context.Context, repoID int64) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE pull_outcomes SET state = 'gone', ended_at = now(), synced_at = now(), updated_at = now()
			WHERE repo_id = $1 AND state = 'open'`, repoID)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		_, err = tx.Exec(ctx, `UPDATE pull_outcomes SET replaced_by = 0, synced_at = now(), updated_at = now()
			WHERE repo_id = $1 AND state = 'closed' AND replaced_by IS NULL`, repoID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("recording the pull requests of repository %d as gone: %w", repoID, err)
	}
	for range n {
		s.end(StateGone)
	}
	return n, nil
}

// synced records what GitHub said of open pull request row (st): merged or closed (only from
// open: a close an event recorded meanwhile stays), ready or draft again, people's commits;
// it returns what changed, in words.
func (s *Store) synced(ctx context.Context, row Row, st githubapp.PullState) ([]string, error) {
	var state string
	var ended *string
	switch {
	case st.Merged:
		state = StateMerged
		ended = &st.MergedBy
	case st.State == "closed":
		state = StateClosed
	default:
		state = StateOpen
	}
	endedAt := st.ClosedAt
	if st.Merged {
		endedAt = st.MergedAt
	}
	var after Row
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE pull_outcomes SET synced_at = now(), updated_at = now(), followups = `+followupsOf(`$1`, `$2`)+`,
				`+peopleCommits(`$3`, `$4`)+`,
				draft = $5,
				ready_at = CASE WHEN NOT $5 AND draft THEN coalesce(ready_at, now()) ELSE ready_at END
			WHERE repo_id = $1 AND number = $2`, row.RepoID, row.Number, st.HeadSHA, st.Commits, st.Draft)
		if err != nil {
			return err
		}
		if state != StateOpen {
			var at any
			if !endedAt.IsZero() {
				at = endedAt
			}
			// The end is an event as ApplyEvent's are: one delivered later that happened
			// before it (event_at) changes nothing.
			_, err = tx.Exec(ctx, `UPDATE pull_outcomes SET state = $3, ended_at = coalesce($4, now()), ended_by = $5,
					event_at = greatest(event_at, coalesce($4, now())),
					merge_sha = nullif($6, ''), head_sha = coalesce(nullif($7, ''), head_sha)
				WHERE repo_id = $1 AND number = $2 AND state = 'open'`, row.RepoID, row.Number, state, at, ended, st.MergeSHA, st.HeadSHA)
			if err != nil {
				return err
			}
		}
		after, err = scanRow(tx.QueryRow(ctx, `SELECT `+rowColumns+` FROM pull_outcomes WHERE repo_id = $1 AND number = $2`, row.RepoID, row.Number))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("recording what GitHub says of pull request #%d of %s/%s: %w", row.Number, row.Owner, row.Repo, err)
	}
	var changes []string
	if after.State != row.State {
		what := after.State
		if after.EndedBy != "" {
			what += " by " + after.EndedBy
		}
		changes = append(changes, what)
		s.end(after.State)
	}
	if after.PeopleCommits != row.PeopleCommits {
		changes = append(changes, fmt.Sprintf("%d commit(s) by people", after.PeopleCommits))
	}
	if after.Draft != row.Draft {
		changes = append(changes, map[bool]string{true: "draft again", false: "ready for review"}[after.Draft])
	}
	return changes, nil
}

// touch records that pull request number was asked about (synced_at), for the order of rounds.
func (s *Store) touch(ctx context.Context, repoID int64, number int) error {
	if _, err := s.pool.Exec(ctx, `UPDATE pull_outcomes SET synced_at = now() WHERE repo_id = $1 AND number = $2`, repoID, number); err != nil {
		return fmt.Errorf("recording that pull request #%d was asked about: %w", number, err)
	}
	return nil
}

// touchRepo records that the pull requests of repository repoID were asked about (its
// opening failed): they go after the others in the next round's order.
func (s *Store) touchRepo(ctx context.Context, repoID int64) error {
	if _, err := s.pool.Exec(ctx, `UPDATE pull_outcomes SET synced_at = now() WHERE repo_id = $1 AND state IN ('open', 'closed')`, repoID); err != nil {
		return fmt.Errorf("recording that the pull requests of repository %d were asked about: %w", repoID, err)
	}
	return nil
}

// replaced records that pull request number (closed without merge) was replaced by the merged
// pull request by (0: none found yet, asked again in a later round).
func (s *Store) replaced(ctx context.Context, repoID int64, number, by int) error {
	if by == 0 || by == number {
		return s.touch(ctx, repoID, number)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE pull_outcomes SET replaced_by = $3, synced_at = now(), updated_at = now()
		WHERE repo_id = $1 AND number = $2 AND state = 'closed'`, repoID, number, by); err != nil {
		return fmt.Errorf("recording that #%d replaced pull request #%d: %w", by, number, err)
	}
	return nil
}

// noReplacement records that no replacement of closed pull request number will be looked
// for (replaced_by 0, as for a gone repository's): its issue is gone.
func (s *Store) noReplacement(ctx context.Context, repoID int64, number int) error {
	if _, err := s.pool.Exec(ctx, `UPDATE pull_outcomes SET replaced_by = 0, synced_at = now(), updated_at = now()
		WHERE repo_id = $1 AND number = $2 AND state = 'closed' AND replaced_by IS NULL`, repoID, number); err != nil {
		return fmt.Errorf("recording that pull request #%d's issue is gone: %w", number, err)
	}
	return nil
}

// measured records people_lines of merged pull request number.
func (s *Store) measured(ctx context.Context, repoID int64, number, lines int) error {
	if _, err := s.pool.Exec(ctx, `UPDATE pull_outcomes SET people_lines = $3, updated_at = now()
		WHERE repo_id = $1 AND number = $2 AND state = 'merged'`, repoID, number, lines); err != nil {
		return fmt.Errorf("recording the lines people changed on pull request #%d: %w", number, err)
	}
	return nil
}

// patchFiles are the files the patches of frognano's runs on pull request number touched.
func (s *Store) patchFiles(ctx context.Context, repoID int64, number int) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT patch FROM runs WHERE repo_id = $1 AND pr_number = $2 AND state = 'succeeded' AND patch IS NOT NULL ORDER BY id`, repoID, number)
	if err != nil {
		return nil, fmt.Errorf("reading the patches of pull request #%d: %w", number, err)
	}
	patches, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("reading the patches of pull request #%d: %w", number, err)
	}
	seen := map[string]bool{}
	var files []string
	for _, p := range patches {
		fs, _ := patchStats(p)
		for _, f := range fs {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	return files, nil
}

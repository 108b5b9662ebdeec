package outcome

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Event is a pull_request event as the webhook server decoded and checked it: only what this
// package records, and of a person only their login.
type Event struct {
	// Action is one of Actions.
	Action string
	RepoID int64
	Number int
	// Sender is who did it (the event's sender: who closed, reopened, marked ready, pushed).
	Sender string
	// Merged, MergedBy and MergeSHA: a closed pull request that was merged, by whom, into what.
	Merged   bool
	MergedBy string
	MergeSHA string
	// At is when it happened: the pull request's merged_at or closed_at for closed, its
	// updated_at otherwise. An event older than the last one applied changes nothing.
	At time.Time
	// HeadSHA is the pull request's head after the event, and Commits its count of commits
	// (0: not said).
	HeadSHA string
	Commits int
	Draft   bool
	// ByApp: the App itself caused it (a synchronize of frognano's own push, which may come
	// before the run's end has recorded its head): not people's commits.
	ByApp bool
}

// Actions are the pull_request actions ApplyEvent records; the webhook server ignores the others.
var Actions = map[string]bool{
	"closed": true, "reopened": true, "ready_for_review": true, "converted_to_draft": true, "synchronize": true,
}

// Applied says what ApplyEvent did.
type Applied struct {
	// Changed: the row changed. Stale: the event was older than the last one applied (or the
	// row is gone), and changed nothing.
	Changed, Stale bool
	// Measure: the pull request was merged; its people_lines wait for Reconciler.Measure.
	Measure bool
	// Ended is the state the pull request ended in (StateMerged, StateClosed), "" when it did
	// not end: the caller counts it with Store.Count once its transaction has committed.
	Ended string
}

// Count counts a's end, if any (OnEnd's function): call it once the transaction that
// applied a has committed, so that an end rolled back (and redelivered) is counted once.
func (s *Store) Count(a Applied) {
	if a.Ended != "" {
		s.end(a.Ended)
	}
}

// Follows reports whether frognano follows pull request number of repository repoID (it has
// a row), and holds that row in tx until tx ends, so that one event at a time is applied to it.
func (s *Store) Follows(ctx context.Context, tx pgx.Tx, repoID int64, number int) (bool, error) {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM pull_outcomes WHERE repo_id = $1 AND number = $2 FOR UPDATE`, repoID, number).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking up pull request #%d of repository %d: %w", number, repoID, err)
	}
	return true, nil
}

// ApplyEvent records ev in tx on its pull request's row, which must exist (Follows):
//
//   - closed: merged (by MergedBy, into MergeSHA) or closed without merge (by Sender), at At;
//   - reopened: open again, ended_at and ended_by cleared, reopened counted;
//   - ready_for_review: ready_at and ready_by (the first time); converted_to_draft: draft again;
//   - synchronize: the new head; a head that is not frognano's last one means people pushed
//     commits, counted as the pull request's commits above frognano's (at least one).
func (s *Store) ApplyEvent(ctx context.Context, tx pgx.Tx, ev Event) (Applied, error) {
	if !Actions[ev.Action] {
		return Applied{}, fmt.Errorf("recording a pull_request event: action %q is not one frognano records", ev.Action)
	}
	var state string
	var eventAt *time.Time
	err := tx.QueryRow(ctx, `SELECT state, event_at FROM pull_outcomes WHERE repo_id = $1 AND number = $2`, ev.RepoID, ev.Number).Scan(&state, &eventAt)
	if err != nil {
		return Applied{}, fmt.Errorf("reading pull request #%d of repository %d: %w", ev.Number, ev.RepoID, err)
	}
	if state == StateGone || (eventAt != nil && ev.At.Before(*eventAt)) {
		return Applied{Stale: true}, nil
	}
	var (
		q       string
		args    = []any{ev.RepoID, ev.Number, ev.At}
		applied = Applied{Changed: true}
		ended   string
	)
	set := `UPDATE pull_outcomes SET event_at = $3, updated_at = now(), followups = ` + followupsOf(`$1`, `$2`) + `, `
	const where = ` WHERE repo_id = $1 AND number = $2`
	switch ev.Action {
	case "closed":
		if ev.Merged {
			q = set + `state = 'merged', ended_at = $3, ended_by = nullif($4, ''), merge_sha = nullif($5, ''),
				head_sha = coalesce(nullif($6, ''), head_sha), draft = false` + where
			args = append(args, ev.MergedBy, ev.MergeSHA, ev.HeadSHA)
			applied.Measure, ended = true, StateMerged
		} else {
			q = set + `state = 'closed', ended_at = $3, ended_by = nullif($4, '')` + where
			args = append(args, ev.Sender)
			ended = StateClosed
		}
		if state != StateOpen {
			ended = "" // a second closed event (a redelivery with another id) counts once
		}
	case "reopened":
		q = set + `state = 'open', ended_at = NULL, ended_by = NULL, merge_sha = NULL, people_lines = NULL,
			reopened = reopened + CASE WHEN state = 'open' THEN 0 ELSE 1 END` + where
	case "ready_for_review":
		q = set + `draft = false, ready_at = coalesce(ready_at, $3), ready_by = coalesce(ready_by, nullif($4, ''))` + where
		args = append(args, ev.Sender)
	case "converted_to_draft":
		q = set + `draft = true` + where
	case "synchronize":
		if ev.ByApp {
			return Applied{}, nil // the run's end records its own head (Published)
		}
		q = set + peopleCommits(`$4`, `$5`) + where
		args = append(args, ev.HeadSHA, ev.Commits)
	}
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return Applied{}, fmt.Errorf("recording %s of pull request #%d of repository %d: %w", ev.Action, ev.Number, ev.RepoID, err)
	}
	applied.Ended = ended
	return applied, nil
}

// peopleCommits is the SET clause that records head (an SQL parameter) as the pull request's
// head with commits (its count, 0: unknown): a head that is not frognano's last one means
// people pushed, counted as the commits above frognano's (bot_commits), at least one.
func peopleCommits(head, commits string) string {
	return `people_commits = CASE WHEN ` + head + ` = '' OR ` + head + ` = coalesce(bot_head_sha, '') OR ` + head + ` = coalesce(head_sha, '')
			THEN people_commits
			ELSE greatest(1, CASE WHEN ` + commits + ` > 0 AND bot_commits IS NOT NULL THEN ` + commits + ` - bot_commits ELSE people_commits + 1 END) END,
		head_sha = coalesce(nullif(` + head + `, ''), head_sha)`
}

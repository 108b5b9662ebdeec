package outcome

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// States of a pull_outcomes row.
const (
	StateOpen   = "open"
	StateMerged = "merged"
	StateClosed = "closed" // closed without merge
	StateGone   = "gone"   // the repository or the pull request is gone (404/410); never asked again
)

// Store is the one writer of pull_outcomes. Its methods that take a pgx.Tx write in the
// caller's transaction (the run's end, the webhook's intake); the others in their own.
type Store struct {
	pool *pgxpool.Pool
	// ended, when set, is told each time a row ends (merged, closed, gone): metrics.
	ended func(state string)
}

// NewStore returns the Store of pull_outcomes in pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// OnEnd makes s call f with the new state each time a pull request ends (StateMerged,
// StateClosed, StateGone); it returns s. f must not block.
func (s *Store) OnEnd(f func(state string)) *Store {
	s.ended = f
	return s
}

func (s *Store) end(state string) {
	if s.ended != nil && state != StateOpen {
		s.ended(state)
	}
}

// Publication is what a run that succeeded published to a pull request (run.Publication,
// which the queue converts: this package does not import run).
type Publication struct {
	RunID  int64
	Number int
	// Ours: frognano opened the pull request; false: a person's it added a commit to.
	Ours  bool
	Issue int // the issue frognano's pull request was made for; 0: a person's
	// Head is the commit the run put at the branch's head, Commits the pull request's count
	// of commits then (0: not known).
	Head    string
	Commits int
}

// Published records, in tx, which has just ended run p.RunID as succeeded, that the run
// published to pull request p.Number: the row is made at the first run (opened_at, ours,
// issue, first_run_id) and every run moves last_run_id, model, bot_head_sha, head_sha and
// adds its patch's lines to patch_lines; followups counts the follow-up runs asked on it
// (followupsOf). It is run.Store's Published hook (the queue converts run.Publication).
func (s *Store) Published(ctx context.Context, tx pgx.Tx, p Publication) error {
	var (
		installationID, repoID int64
		owner, repo            string
		model                  *string
		patch                  []byte
	)
	err := tx.QueryRow(ctx, `SELECT installation_id, repo_id, owner, repo, model, patch
		FROM runs WHERE id = $1`, p.RunID).Scan(&installationID, &repoID, &owner, &repo, &model, &patch)
	if err != nil {
		return fmt.Errorf("recording the pull request run %d published to: reading the run: %w", p.RunID, err)
	}
	_, lines := patchStats(patch)
	var issue *int
	if p.Issue > 0 {
		issue = &p.Issue
	}
	var head *string
	if p.Head != "" {
		head = &p.Head
	}
	// bot_commits is the pull request's count at frognano's head less the commits already
	// counted as people's, so that commits - bot_commits keeps counting them after a later
	// run of frognano's moves the head (ApplyEvent).
	_, err = tx.Exec(ctx, `INSERT INTO pull_outcomes AS o (repo_id, number, installation_id, owner, repo, ours, issue,
			first_run_id, last_run_id, model, opened_at, bot_head_sha, head_sha, bot_commits, patch_lines, draft, followups)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, now(), $10, $10, nullif($11, 0), $12, $6, `+followupsOf(`$1`, `$2`)+`)
		ON CONFLICT (repo_id, number) DO UPDATE SET
			installation_id = EXCLUDED.installation_id, owner = EXCLUDED.owner, repo = EXCLUDED.repo,
			last_run_id = greatest(o.last_run_id, EXCLUDED.last_run_id),
			model = coalesce(EXCLUDED.model, o.model),
			bot_head_sha = coalesce(EXCLUDED.bot_head_sha, o.bot_head_sha),
			head_sha = coalesce(EXCLUDED.head_sha, o.head_sha),
			bot_commits = CASE WHEN $11 > 0 THEN $11 - o.people_commits ELSE o.bot_commits END,
			patch_lines = coalesce(o.patch_lines, 0) + EXCLUDED.patch_lines,
			followups = EXCLUDED.followups,
			updated_at = now()`,
		repoID, p.Number, installationID, owner, repo, p.Ours, issue, p.RunID, model, head, p.Commits, lines)
	if err != nil {
		return fmt.Errorf("recording pull request #%d of %s/%s that run %d published to: %w", p.Number, owner, repo, p.RunID, err)
	}
	return nil
}

// followupsOf is the SQL count of the follow-up runs asked on pull request number of
// repository repoID (SQL expressions) that passed their check: a reviewer's requests and CI's
// (runs.kind followup or ci, runs.issue the pull request), whatever became of them. Every
// write of a row counts them again.
func followupsOf(repoID, number string) string {
	return `(SELECT count(*) FROM runs r WHERE r.repo_id = ` + repoID + ` AND r.issue = ` + number +
		` AND r.kind <> 'issue' AND r.checked_at IS NOT NULL)`
}

// Row is a pull_outcomes row as this package and its tests read it.
type Row struct {
	RepoID                  int64
	Number                  int
	InstallationID          int64
	Owner, Repo             string
	Ours                    bool
	Issue                   int
	FirstRunID, LastRunID   int64
	Model                   string
	OpenedAt                time.Time
	State                   string
	Draft                   bool
	ReadyAt                 *time.Time
	ReadyBy                 string
	EndedAt                 *time.Time
	EndedBy                 string
	Reopened                int
	BotHeadSHA, HeadSHA     string
	BotCommits              *int
	PeopleCommits           int
	MergeSHA                string
	PatchLines, PeopleLines *int
	ReplacedBy              *int
	Followups               int
	SyncedAt, EventAt       *time.Time
}

const rowColumns = `repo_id, number, installation_id, owner, repo, ours, coalesce(issue, 0), first_run_id, last_run_id,
	coalesce(model, ''), opened_at, state, draft, ready_at, coalesce(ready_by, ''), ended_at, coalesce(ended_by, ''),
	reopened, coalesce(bot_head_sha, ''), coalesce(head_sha, ''), bot_commits, people_commits, coalesce(merge_sha, ''),
	patch_lines, people_lines, replaced_by, followups, synced_at, event_at`

func scanRow(r pgx.Row) (Row, error) {
	var o Row
	err := r.Scan(&o.RepoID, &o.Number, &o.InstallationID, &o.Owner, &o.Repo, &o.Ours, &o.Issue, &o.FirstRunID, &o.LastRunID,
		&o.Model, &o.OpenedAt, &o.State, &o.Draft, &o.ReadyAt, &o.ReadyBy, &o.EndedAt, &o.EndedBy,
		&o.Reopened, &o.BotHeadSHA, &o.HeadSHA, &o.BotCommits, &o.PeopleCommits, &o.MergeSHA,
		&o.PatchLines, &o.PeopleLines, &o.ReplacedBy, &o.Followups, &o.SyncedAt, &o.EventAt)
	return o, err
}

// ErrNoRow: frognano follows no such pull request.
var ErrNoRow = errors.New("frognano follows no such pull request")

// Get reads the row of pull request number of repository repoID (ErrNoRow: none).
func (s *Store) Get(ctx context.Context, repoID int64, number int) (Row, error) {
	o, err := scanRow(s.pool.QueryRow(ctx, `SELECT `+rowColumns+` FROM pull_outcomes WHERE repo_id = $1 AND number = $2`, repoID, number))
	if errors.Is(err, pgx.ErrNoRows) {
		return Row{}, ErrNoRow
	}
	if err != nil {
		return Row{}, fmt.Errorf("reading the outcome of pull request #%d of repository %d: %w", number, repoID, err)
	}
	return o, nil
}

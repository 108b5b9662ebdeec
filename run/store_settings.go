package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The settings_errors table (migration 0019): one row per distinct invalid settings file per
// repository, and the comment that named its problems. This file alone writes it
// (internal/layout's TestOneWriterPerTable).

// postClaimTimeout is how long the run that first met an error has to post its comment before
// a later run that meets the same error takes the task over (the first died before it posted).
const postClaimTimeout = 10 * time.Minute

// settingsErrorSeen records that run r met the invalid settings whose problems hash to
// fingerprint. first is true when no run had met them before (or r itself did, on an earlier
// attempt), or the one that did has not recorded its comment within postClaimTimeout (it
// died): then r posts the comment and records
// it (settingsErrorPosted). Otherwise commentURL is the comment to link to ("": the first run
// is posting it right now).
func (s *Store) settingsErrorSeen(ctx context.Context, r *row, fingerprint, problems string) (first bool, commentURL string, err error) {
	var url *string
	var inserted, stale bool
	err = s.pool.QueryRow(ctx, `INSERT INTO settings_errors (repo_id, fingerprint, installation_id, owner, repo, problems, run_id, issue)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (repo_id, fingerprint) DO UPDATE SET last_seen_at = now(), resolved_at = NULL,
			owner = EXCLUDED.owner, repo = EXCLUDED.repo
		RETURNING comment_url, xmax = 0 OR settings_errors.run_id = $7, first_seen_at < now() - make_interval(secs => $9)`,
		r.RepoID, fingerprint, r.InstallationID, r.Owner, r.Repo, problems, r.ID, r.Issue, postClaimTimeout.Seconds()).Scan(&url, &inserted, &stale)
	if err != nil {
		return false, "", fmt.Errorf("recording invalid settings of %s/%s: %w", r.Owner, r.Repo, err)
	}
	if url == nil {
		return inserted || stale, "", nil
	}
	return false, *url, nil
}

// settingsErrorPosted records the comment that named the problems of fingerprint, unless
// another run recorded one first.
func (s *Store) settingsErrorPosted(ctx context.Context, repoID int64, fingerprint string, runID int64, issue int, commentID int64, url string) error {
	_, err := s.pool.Exec(ctx, `UPDATE settings_errors SET comment_id = $3, comment_url = $4, run_id = $5, issue = $6
		WHERE repo_id = $1 AND fingerprint = $2 AND comment_url IS NULL`, repoID, fingerprint, commentID, url, runID, issue)
	if err != nil {
		return fmt.Errorf("recording the invalid settings comment: %w", err)
	}
	return nil
}

// settingsValid marks the repository's invalid settings resolved: a run found them valid.
func (s *Store) settingsValid(ctx context.Context, repoID int64) error {
	_, err := s.pool.Exec(ctx, `UPDATE settings_errors SET resolved_at = now() WHERE repo_id = $1 AND resolved_at IS NULL`, repoID)
	if err != nil {
		return fmt.Errorf("marking the settings valid: %w", err)
	}
	return nil
}

// InvalidSettings is a repository whose settings file was invalid when a run last read it.
type InvalidSettings struct {
	Owner, Repo string
	Problems    string // FILE:LINE:COL: message, one a line
	CommentURL  string // the comment that named them; "": none recorded
	LastSeen    time.Time
}

// InvalidSettings lists the repositories whose settings file a run found invalid and no later
// run found valid (`frognano doctor`), the most recent first.
func (s *Store) InvalidSettings(ctx context.Context) ([]InvalidSettings, error) {
	rows, err := s.pool.Query(ctx, `SELECT owner, repo, problems, coalesce(comment_url, ''), last_seen_at
		FROM settings_errors WHERE resolved_at IS NULL ORDER BY last_seen_at DESC, owner, repo`)
	if err != nil {
		return nil, fmt.Errorf("listing invalid settings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (InvalidSettings, error) {
		var v InvalidSettings
		err := row.Scan(&v.Owner, &v.Repo, &v.Problems, &v.CommentURL, &v.LastSeen)
		return v, err
	})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("listing invalid settings: %w", err)
	}
	return out, nil
}

// recordLabel keeps the trigger label the repository's settings name ("" for none: the
// operator's applies), as just read from its default branch; the webhook server decides a
// labelled issue from it (RepoLabel).
func (s *Store) recordLabel(ctx context.Context, repoID, installationID int64, label string) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO repo_labels (repo_id, installation_id, label, read_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (repo_id) DO UPDATE SET installation_id = excluded.installation_id, label = excluded.label, read_at = now()`,
		repoID, installationID, label); err != nil {
		return fmt.Errorf("recording the repository's trigger label: %w", err)
	}
	return nil
}

// KnownLabel is the trigger label a repository's settings named when they were last read
// (label "": they name none), and how long ago that was; known false: never read.
func (s *Store) KnownLabel(ctx context.Context, repoID int64) (label string, age time.Duration, known bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT label, greatest(now() - read_at, interval '0') FROM repo_labels WHERE repo_id = $1`, repoID).Scan(&label, &age)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("reading the repository's trigger label: %w", err)
	}
	return label, age, true, nil
}

package run

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/frognano/frognano/githubapp"
)

// AuditEntry is one row of a run's audit trail (run_audit, migrations 0014 and 0015): a write
// frognano attempted on GitHub on behalf of the run, with its outcome (githubapp/audit.go
// records them). It holds no secret and no text of GitHub's: ids, numbers, logins, SHAs, URLs,
// GitHub's request id and frognano's own words.
type AuditEntry struct {
	ID int64
	githubapp.AuditEntry
}

// RecordAudit keeps e in the audit trail: the githubapp.AuditSink of the service's App.
func (s *Store) RecordAudit(ctx context.Context, e githubapp.AuditEntry) error {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	// The context may be ending (a cancelled run's last write): the record is still kept.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bookkeepingTimeout)
	defer cancel()
	outcome := e.Outcome
	if outcome == "" {
		outcome = githubapp.OutcomeDone
	}
	return s.exec(ctx, "recording a GitHub write of run "+fmt.Sprint(e.RunID), `INSERT INTO run_audit
			(run_id, at, action, method, path, status, outcome, detail, object_type, object_id, object_sha, object_url, request_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		e.RunID, e.At, CleanText(e.Action), CleanText(e.Method), CleanText(e.Path), e.Status, outcome, CleanText(e.Detail),
		CleanText(e.ObjectType), CleanText(e.ObjectID), CleanText(e.ObjectSHA), CleanText(e.ObjectURL), CleanText(e.RequestID))
}

// OutcomeText says what became of the write, for the run page and `frognano runs show`:
// "done (201)", "refused (422)", "unknown (502): it may have happened; look on GitHub",
// "unknown: timed out while waiting for GitHub's answer; it may have happened, look on GitHub",
// "not sent: cancelled before it was sent". A row from before outcomes were kept is done.
func (e AuditEntry) OutcomeText() string {
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf(" (%d)", e.Status)
	}
	switch e.Outcome {
	case githubapp.OutcomeRefused:
		return "refused" + status
	case githubapp.OutcomeUnknown:
		if e.Status == 0 && e.Detail != "" {
			return "unknown: " + e.Detail + "; it may have happened, look on GitHub"
		}
		return "unknown" + status + ": it may have happened; look on GitHub"
	case githubapp.OutcomeNotSent:
		if e.Detail != "" {
			return "not sent: " + e.Detail
		}
		return "not sent"
	}
	return "done" + status
}

// MaxAuditRead bounds one Audit answer.
const MaxAuditRead = 1000

// Audit returns run id's audit trail, oldest first, at most MaxAuditRead entries.
func (s *Store) Audit(ctx context.Context, id int64) ([]AuditEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, run_id, at, action, method, path, status, outcome, detail, object_type, object_id,
			object_sha, object_url, request_id FROM run_audit WHERE run_id = $1 ORDER BY id LIMIT $2`, id, MaxAuditRead)
	if err != nil {
		return nil, fmt.Errorf("reading the audit trail of run %d: %w", id, err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		if err := rows.Scan(&e.ID, &e.RunID, &e.At, &e.Action, &e.Method, &e.Path, &e.Status, &e.Outcome, &e.Detail, &e.ObjectType,
			&e.ObjectID, &e.ObjectSHA, &e.ObjectURL, &e.RequestID); err != nil {
			return nil, fmt.Errorf("reading the audit trail of run %d: %w", id, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// StartedBy says who started run r: the labeller, the mention's or the follow-up's author, CI,
// or the API token.
func StartedBy(r Record) string {
	if r.Trigger == TriggerAPI {
		return fmt.Sprintf("API token %s (id %d)", strings.TrimPrefix(r.Labeler, tokenRequester), r.TokenID)
	}
	switch r.Kind {
	case KindFollowUp:
		return "@" + r.Labeler + " (a follow-up request on the pull request)"
	case KindCI:
		return "CI (a failed check suite on the pull request; " + r.Labeler + ")"
	}
	if r.Trigger == TriggerMention {
		return "@" + r.Labeler + " (mentioned the App on the issue)"
	}
	return "@" + r.Labeler + " (labelled the issue)"
}

// StoppedBy says who stopped or cancelled run r ("" when nobody did).
func StoppedBy(r Record) string {
	if r.State != StateCancelled {
		return ""
	}
	if r.StoppedBy == "" {
		return "frognano (" + r.Error + ")"
	}
	return "@" + r.StoppedBy + " (" + r.Error + ")"
}

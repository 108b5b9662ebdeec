package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/frognano/frognano/githubapp"
)

// ExitPermissions is the exit reason of a run its installation lacked a core permission for.
const ExitPermissions = "github_permissions"

// lacksPermissions ends a run the installation cannot serve (githubapp.CorePermissions missing):
// one comment on the issue or pull request saying which permissions and who can approve them,
// when the installation can still comment, and the same reason in the run's record (its page,
// `frognano runs`, the frognano_runs_finished_total metric) and the log. It is no error: asking
// again gets the same answer until someone approves the App's permissions, so nothing retries.
func (a *attempt) lacksPermissions(ctx context.Context, e *githubapp.MissingPermissionsError) error {
	r := a.run
	note := missingPermissionsNote(e)
	a.log.ErrorContext(ctx, "the installation lacks a permission every run needs; the run ends", "missing", strings.Join(e.Missing, "; "))
	r.ExitReason = ExitPermissions
	var v *Status
	if e.CanComment() {
		s := a.view(StateFailed, note)
		v = &s
	}
	// Without a status comment yet, the outbox posts one (outbox.Post).
	if ok, err := a.record(ctx, StateFailed, ExitPermissions, note, "", 0, v, false, v != nil); err != nil {
		return err
	} else if !ok {
		return errRunCancelled
	}
	if !e.CanComment() {
		a.log.WarnContext(ctx, "the installation cannot comment either; the reason is on the run's page and in its record")
	}
	return nil
}

// missingPermissionsNote is the one line a person can act on.
func missingPermissionsNote(e *githubapp.MissingPermissionsError) string {
	return fmt.Sprintf("frognano cannot work on this repository: the App's installation has not granted it %s. "+
		"Every run needs contents, issues and pull requests (write) and metadata (read); %s. Then add the label again.",
		backticked(e.Missing), e.Grants.ApprovalHint())
}

// checksOffNotice says, when the operator wants check runs but the installation has not
// granted checks: write, that this run has none and what turns them on; "" otherwise.
func checksOffNotice(repo Repo) string {
	if !repo.ChecksWanted() || repo.ChecksOn() {
		return ""
	}
	return "Check runs are off: the App's installation has not granted `checks: write`, so this pull request has no " +
		"`frognano / tests` check run (the test results are in its description). To turn them on, " +
		repo.Grants().ApprovalHint() + "; the next run reports them, with no restart."
}

func backticked(items []string) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = "`" + strings.ReplaceAll(it, "`", "") + "`"
	}
	return strings.Join(out, ", ")
}

// noticeLines renders notices for the end of a pull request body, each its own paragraph.
func noticeLines(notices []string) string {
	var b strings.Builder
	for _, n := range notices {
		if n != "" {
			b.WriteString("\n\n" + n)
		}
	}
	return b.String()
}

// notices are the lines a's run shows about what it skips, computed once its Repo is known.
func (a *attempt) notices() []string {
	if a.repo == nil || len(a.repo.Grants().MissingCore()) > 0 {
		return nil
	}
	if n := checksOffNotice(a.repo); n != "" {
		return []string{n}
	}
	return nil
}

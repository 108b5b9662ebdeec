package run

// This file words the notices: what a run skips and why, each one line the status comment
// shows (after "ℹ️ ") and the pull request body ends with (noticeLines, text_pullrequest.go).

import (
	"fmt"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/settings"
)

// checksOffNotice says, when the operator wants check runs but the installation (grants) has
// not granted checks: write, that this run has none and what turns them on.
func checksOffNotice(grants githubapp.Grants) string {
	return "Check runs are off: the App's installation has not granted `checks: write`, so this pull request has no " +
		"`frognano / tests` check run (the test results are in its description). To turn them on, " +
		grants.ApprovalHint() + "; the next run reports them, with no restart."
}

// settingsNotices are the notes of settings.Limit, one notice each: what the repository's
// settings file asked above the operator's ceilings, and what is used instead. A note quotes
// the file (a model's name), so it is shown as code.
func settingsNotices(notes []string) []string {
	var out []string
	for _, n := range notes {
		out = append(out, "The repository's "+settings.Path+" asks for more than the operator allows: "+report.CodeSpan(n, 300)+".")
	}
	return out
}

// attemptsCappedNotice says that the requester asked for more attempts than the operator allows
// (FROGNANO_ATTEMPTS), and how many the run makes instead.
func attemptsCappedNotice(asked, ceiling int) string {
	return fmt.Sprintf("You asked for %d attempts; this frognano allows at most %d per run, so this run makes %d.", asked, ceiling, ceiling)
}

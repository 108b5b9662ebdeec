package run

// This file words frognano's own refusals: a requester who may not start a run, an
// installation that lacks a permission every run needs, a spent budget, a model the operator
// does not offer the repository, and a rate limit
// longer than the run's budget. GitHub's refusals (a ruleset, an archived repository, a
// suspended App...) are worded from GitHub's answer by githubapp.Explain, in
// githubapp/text_refusals.go, and reach the status comment as its note.

import (
	"fmt"
	"strings"
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/settings"
)

// renderDenied is the one comment a requester who may not start a run gets; no run starts.
// least is the least permission the repository's settings let start one (write by default),
// teams the teams whose members may too.
func renderDenied(runID int64, labeler, permission, least string, teams []string) string {
	who := map[string]string{"write": "write, maintain or admin", "maintain": "maintain or admin", "admin": "admin"}[least]
	if who == "" {
		who = "write, maintain or admin"
	}
	also := ""
	if len(teams) > 0 {
		also = " and for members of the teams " + backticked(teams) + " (the repository's " + settings.Path + ")"
	}
	return fmt.Sprintf("%s\n@%s, frognano only starts for people with %s "+
		"permission on this repository%s (yours: %s). No run was started.", statusMarker(runID), labeler, who, also, report.CodeSpan(permission, 20))
}

// maxProblemsShown caps the problems an invalid settings comment lists.
const maxProblemsShown = 20

// renderInvalidSettings is the one comment that names an invalid settings file's problems,
// posted by the first run that meets them; no run starts until the file is fixed. A problem of
// the organisation's file (in its .github repository, which may be private while this
// repository is public) is named by its place only: its message can quote the file.
func renderInvalidSettings(runID int64, problems []settings.Problem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nfrognano did not start: the settings file is invalid. Fix it on the default branch "+
		"(check it with `frognano config check`; the schema is docs/frognano.schema.json), then ask again.\n\n", statusMarker(runID))
	for i, p := range problems {
		if i == maxProblemsShown {
			fmt.Fprintf(&b, "- and %d more\n", len(problems)-i)
			break
		}
		if p.File != settings.Path {
			fmt.Fprintf(&b, "- %s (the organisation's file: its message is not shown here; `frognano config check` on it shows it)\n",
				report.CodeSpan(p.Where(), 300))
			continue
		}
		fmt.Fprintf(&b, "- %s\n", report.CodeSpan(p.String(), 300))
	}
	return b.String()
}

// renderSettingsStillInvalid is the comment of a later run that meets the same invalid
// settings: it links to the comment that named the problems.
func renderSettingsStillInvalid(runID int64, url string) string {
	where := "an earlier comment names its problems"
	if url != "" {
		where = "[this comment](" + url + ") names its problems"
	}
	return fmt.Sprintf("%s\nfrognano did not start: the settings file is still invalid; %s. Fix it on the default branch, then ask again.",
		statusMarker(runID), where)
}

// protectedByAttributes is the pattern protectedChange returns for a changed .gitattributes,
// a pattern no path matches (paths hold no NUL); noteProtectedPath words it.
const protectedByAttributes = "\x00.gitattributes"

// noteProtectedPath is why a patch that changes a protected path was not published.
func noteProtectedPath(file, pattern string) string {
	if pattern == "" {
		return "The patch was not published: frognano could not read which files it changes, and the repository's " +
			settings.Path + " protects some paths."
	}
	if pattern == protectedByAttributes {
		return fmt.Sprintf("The patch was not published: it changes %s, which can change how a checkout writes the paths the repository's %s protects.",
			report.CodeSpan(file, 200), settings.Path)
	}
	return fmt.Sprintf("The patch was not published: it changes %s, which the repository's %s protects (%s).",
		report.CodeSpan(file, 200), settings.Path, report.CodeSpan(pattern, 200))
}

// renderOptionRefused is the one comment a request with an option that cannot be used gets
// (an unknown name, a bad value, one given twice: oe names it); no run starts. The option is
// named by its name's own characters only (optionShown), and what is wrong is worded here.
func renderOptionRefused(runID int64, requester string, oe *OptionError) string {
	name := optionShown(oe.Name)
	what := "is not an option (the options are `base`, `attempts` and `model`)"
	switch {
	case name == "base" && oe.Reason == reasonBaseOnPull:
		what = "cannot be asked on a pull request: a run there adds a commit to the pull request's own branch, " +
			"and the pull request keeps its base (ask with `attempts=` or `model=` only)"
	case name == "base":
		what = "must be given once, as `base=BRANCH` with the name of a branch"
	case name == "attempts":
		what = fmt.Sprintf("must be given once, as `attempts=N` with N a whole number from 1 to %d", MaxAskedAttempts)
	case name == "model":
		what = "must be given once, as `model=NAME` with the operator's name of a model (letters, digits, `.`, `_` and `-`)"
	}
	return fmt.Sprintf("%s\n@%s, frognano did not start: the option %s %s. Options come first, each as `name=value`, "+
		"then `--` or your instructions. No run was started; ask again with a new comment.",
		statusMarker(runID), requester, report.CodeSpan(name, 40), what)
}

// optionShown is an option's name as a reply shows it: only the characters a name may have
// (ParseOptions), at most 32, so that nothing else of the comment is echoed.
func optionShown(name string) string {
	var b strings.Builder
	for _, c := range name {
		if b.Len() == 32 {
			break
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// renderForkRefused is the one comment a writer's request on a pull request from a fork (head,
// "owner/name") gets; no run starts.
func renderForkRefused(runID int64, requester, head string) string {
	return fmt.Sprintf("%s\n@%s, frognano cannot work on this pull request: its branch is in a fork (%s), and frognano only "+
		"pushes commits to branches of this repository. No run was started.", statusMarker(runID), requester, report.CodeSpan(head, 140))
}

// missingPermissionsNote is the one line a person can act on.
func missingPermissionsNote(e *githubapp.MissingPermissionsError) string {
	return fmt.Sprintf("frognano cannot work on this repository: the App's installation has not granted it %s. "+
		"Every run needs contents, issues and pull requests (write) and metadata (read); %s. Then add the label again.",
		backticked(e.Missing), e.Grants.ApprovalHint())
}

func backticked(items []string) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = "`" + strings.ReplaceAll(it, "`", "") + "`"
	}
	return strings.Join(out, ", ")
}

// The words of a budget's note (BudgetExceeded): its scope, what it counts, and who set it
// when the operator overrode the setting for one installation.
const (
	budgetInstallation  = "installation"
	budgetRepository    = "repository"
	budgetRuns          = "runs"
	budgetTokens        = "tokens"
	budgetSetByOperator = "set for this installation by the operator"
	budgetSetBySettings = "`runs_per_day` of the repository's " + settings.Path
)

// Note is what the run's comment says: which budget, and when it resets (for an issue run).
func (e *BudgetExceeded) Note(now time.Time) string { return e.note(now, "add the label again") }

// budgetNote is the note of a run of kind that found budget e spent: an issue run is retried
// by adding the label again, a follow-up by asking again.
func budgetNote(e *BudgetExceeded, now time.Time, kind string) string {
	if kind != KindIssue {
		return e.note(now, "ask again")
	}
	return e.Note(now)
}

func (e *BudgetExceeded) note(now time.Time, retry string) string {
	used := fmt.Sprintf("%d runs have started", e.Used)
	if e.What == budgetTokens {
		used = fmt.Sprintf("the runs started today used %d tokens", e.Used)
	}
	return fmt.Sprintf("This %s's budget of %d %s a day is spent: %s since 00:00 UTC (%s). "+
		"It resets at %s (in %s); %s after that to start a run.",
		e.Scope, e.Limit, e.What, used, e.Setting, e.Resets.UTC().Format("2006-01-02 15:04 UTC"),
		e.Resets.Sub(now).Round(time.Minute), retry)
}

// rateLimitedNote follows GitHub's rate limit (reason, githubapp.Explain's) that asked to
// wait longer than the run's whole budget.
func rateLimitedNote(reason string, budget time.Duration) string {
	return reason + fmt.Sprintf(" That is longer than the run's time budget of %s (`FROGNANO_JOB_TIMEOUT`), so the run ends here "+
		"instead of retrying into the same limit. Add the label again once the limit has passed.", budget)
}

// modelRefusedNote says which model was refused and which the repository may use.
func modelRefusedNote(e *runner.ModelRefused) string {
	which := "The model " + report.CodeSpan(e.Name, 70) + " that was asked for"
	if !e.Asked {
		which = "The default model " + report.CodeSpan(e.Name, 70)
	}
	names := make([]string, len(e.Allowed))
	for i, n := range e.Allowed {
		names[i] = report.CodeSpan(n, 70)
	}
	allowed := "The operator offers it no model: ask them to allow one."
	if len(names) > 0 {
		allowed = "Ask again with one it may use: " + strings.Join(names, ", ") + "."
	}
	return fmt.Sprintf("%s is not one the operator offers to this repository, so no run was started. %s", which, allowed)
}

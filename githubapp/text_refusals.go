package githubapp

// This file words GitHub's refusals: what a person reads on the issue (the status comment's
// note), on the run's page and in the log when GitHub refused a request, a push or a token
// for good, worded from GitHub's own answer (Explain), and the advice that goes with the
// refusals frognano knows. frognano's own refusals (who may not start a run, a missing
// permission, a spent budget) are worded in run/text_refusals.go.

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// Explain turns an error holding GitHub's refusal into one factual paragraph a person can act
// on: what GitHub refused (the request, or the push), its own answer (status, message,
// documentation_url, or git's remote lines), and, for the refusals frognano knows, which
// setting to change. It is the one place that words GitHub's refusals: the worker puts the same
// text in the run's comment, its record (run page, `frognano runs show`) and its log. ok is
// false when err holds no answer from GitHub (a network error, a bug of ours): then there is
// nothing of GitHub's to report.
func Explain(err error) (reason string, ok bool) {
	var (
		push    *PushRefusedError
		token   *TokenRefusedError
		susp    *SuspendedError
		abuse   *github.AbuseRateLimitError
		primary *github.RateLimitError
		resp    *github.ErrorResponse
		branch  *BranchGoneError
	)
	switch {
	case errors.As(err, &push):
		return push.explain(), true
	case errors.As(err, &branch):
		return fmt.Sprintf("The branch %s no longer exists on GitHub: someone deleted it as the run started (which also closes its pull request), "+
			"so frognano had nothing to add a commit to. %s", code(branch.Branch), RestoreBranchAdvice), true
	case errors.As(err, &susp):
		return fmt.Sprintf("GitHub refused every request of this run: the App is suspended on this installation (%s). "+
			"An owner of the account can unsuspend it in the account's settings, under GitHub Apps (Installed GitHub Apps), then add the label again.", accountOf(susp.Account)), true
	case errors.As(err, &token):
		return token.explain(), true
	case errors.As(err, &abuse):
		wait := "no time"
		if d := abuse.GetRetryAfter(); d > 0 {
			wait = d.String()
		}
		return fmt.Sprintf("GitHub's secondary rate limit refused %s (%s) and asked frognano to wait %s (Retry-After).",
			requestOf(abuse.Response), quote(abuse.Message), wait), true
	case errors.As(err, &primary):
		return fmt.Sprintf("GitHub's rate limit for this installation is used up: it refused %s (%s) until %s.",
			requestOf(primary.Response), quote(primary.Message), primary.Rate.Reset.UTC().Format(time.RFC3339)), true
	case errors.As(err, &resp) && resp.Response != nil:
		return explainResponse(resp), true
	}
	return "", false
}

// explainResponse words an API answer: GitHub's own first, then what a person can do for the
// answers frognano knows.
func explainResponse(e *github.ErrorResponse) string {
	status := e.Response.StatusCode
	said := fmt.Sprintf("GitHub answered %s with %d %s", requestOf(e.Response), status, quote(e.Message))
	if e.DocumentationURL != "" {
		said += " (" + e.DocumentationURL + ")"
	}
	said += "."
	msg := strings.ToLower(e.Message)
	asApp := e.Response.Request != nil && strings.Contains(e.Response.Request.URL.Path, "/app/installations/")
	switch {
	case status == http.StatusUnauthorized:
		return said + keyAdvice
	case asApp && status == http.StatusNotFound:
		return said + uninstalledAdvice
	case strings.Contains(msg, "archived"):
		return said + " The repository is archived, so GitHub refuses every change to it (comments, branches, pull requests). " +
			"To let frognano work on it, an admin can unarchive it (Settings → General → Danger Zone → Unarchive this repository), then add the label again."
	case strings.Contains(msg, "repository access blocked") || e.Block != nil:
		reason := ""
		if e.Block != nil && e.Block.Reason != "" {
			reason = " (reason: " + code(e.Block.Reason) + ")"
		}
		return said + " GitHub has disabled access to this repository" + reason + "; only GitHub (its support, or the owner's account standing) can lift it, and frognano cannot work on it until then."
	case status == http.StatusGone:
		return said + " The issue was deleted, so there is nothing left to answer; no pull request was opened."
	case strings.Contains(msg, "locked"):
		return said + " The conversation is locked, so the App cannot comment there. Someone with write access can unlock it (\"Unlock conversation\"), then add the label again."
	case status == http.StatusNotFound && redirected(e.Response):
		return said + " The issue or repository was moved (transferred or renamed) to a place this installation cannot reach. Label the issue again where it lives now, with the App installed on that repository."
	case status == http.StatusUnprocessableEntity && invalidField(e, "PullRequest", "base"):
		return said + " The base branch no longer exists on GitHub: the default branch was renamed or deleted while the run worked. Add the label again to start from the current default branch."
	case status == http.StatusForbidden && strings.Contains(msg, "not accessible by integration"):
		return said + " The App's installation lacks the permission this request needs; an owner of the account can review the App's permissions in the account's settings, under GitHub Apps."
	}
	return said
}

func invalidField(e *github.ErrorResponse, resource, field string) bool {
	for _, x := range e.Errors {
		if x.Resource == resource && x.Field == field {
			return true
		}
	}
	return false
}

// redirected reports whether GitHub answered a request it had redirected (a 301 or 307 for a
// transferred issue or a renamed repository, followed on the same host).
func redirected(resp *http.Response) bool {
	return resp.Request != nil && resp.Request.Response != nil
}

// requestOf names the request GitHub answered, as `METHOD /path` (the API prefix of a GitHub
// Enterprise Server kept): never its query or headers.
func requestOf(resp *http.Response) string {
	if resp == nil || resp.Request == nil || resp.Request.URL == nil {
		return "a request"
	}
	req := resp.Request
	for req.Response != nil && req.Response.Request != nil { // the request the client made, before redirects
		req = req.Response.Request
	}
	return code(req.Method + " " + req.URL.Path)
}

func (e *TokenRefusedError) explain() string {
	said := fmt.Sprintf("GitHub refused the App's request for an installation token (installation %d) with %d %s", e.Installation, e.Status, quote(e.Message))
	if e.DocURL != "" {
		said += " (" + e.DocURL + ")"
	}
	said += "."
	msg := strings.ToLower(e.Message)
	switch {
	case e.Status == http.StatusUnauthorized:
		return said + keyAdvice
	case strings.Contains(msg, "suspended"):
		return said + " The App is suspended on this installation. An owner of the account can unsuspend it in the account's settings, under GitHub Apps (Installed GitHub Apps), then add the label again."
	case e.Status == http.StatusNotFound:
		return said + uninstalledAdvice
	case e.Status == http.StatusUnprocessableEntity && strings.Contains(msg, "repository"):
		return said + " The installation no longer includes this repository: it was removed from the App's repository access, transferred to another account, or deleted. " +
			"If it was removed, an owner of the account can add it back under GitHub Apps → the App → Repository access, then add the label again; " +
			"if it was transferred to another account, label the issue again there, with the App installed on that account (frognano does not carry a run over to another account's installation: a run acts only for the installation its label came through)."
	}
	return said
}

// keyAdvice follows GitHub's 401 to a request signed as the App (its JWT).
var keyAdvice = " GitHub did not accept the App's own signature: the private key frognano signs with is no longer one of the App's keys (it was rotated or deleted), or the App id is wrong. " +
	"Put the App's current private key in " + code(EnvPrivateKey) + " (or " + code(EnvPrivateKeyFile) + ") and restart frognano, then add the label again."

// uninstalledAdvice follows GitHub's 404 to a request about the installation.
const uninstalledAdvice = " The App is no longer installed on this account. An owner can install it again on the repository, then add the label again."

func (e *PushRefusedError) explain() string {
	said := fmt.Sprintf("GitHub refused the update of branch %s", code(e.Branch))
	if len(e.Lines) > 0 {
		said += ": " + quote(strings.Join(e.Lines, " "))
	}
	said += "."
	switch e.Kind {
	case PushRefusedSignedCommits:
		return said + " A \"Require signed commits\" rule covers this branch, and this commit is not one GitHub signed: GitHub signs frognano's commits only when they carry no author of their own, " +
			"and " + code(EnvCommitName) + "/" + code(EnvCommitEmail) + " give them one. Unset both and restart frognano, or exclude " + code("frognano/*") +
			" from that rule (Settings → Rules → Rulesets, or Settings → Branches for a branch protection rule), then add the label again."
	case PushRefusedRuleset:
		return said + " A repository ruleset covers frognano's branches. To let frognano write them, exclude " + code("frognano/*") +
			" from the ruleset's target branches (Settings → Rules → Rulesets), or add the App to its bypass list, then add the label again."
	case PushRefusedProtection:
		return said + " A branch protection rule matches frognano's branches. To let frognano write them, change the rule's branch name pattern so that it does not match " +
			code("frognano/*") + " (Settings → Branches), then add the label again."
	}
	return said + " Nothing more was done; GitHub's lines above say what it requires."
}

// RestoreBranchAdvice is what brings back a pull request whose branch a person deleted.
const RestoreBranchAdvice = "Restore the branch (the pull request's \"Restore branch\" button) and reopen the pull request, then ask again."

func code(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }

func quote(s string) string {
	if s == "" {
		return "(no message)"
	}
	return "“" + strings.TrimSpace(s) + "”"
}

func accountOf(account string) string {
	if account == "" {
		return "its account"
	}
	return "account " + account
}

// ApprovalHint says where the App's requested permissions are approved, for a note a person can
// act on.
func (g Grants) ApprovalHint() string {
	who := "an owner of the account"
	if g.Account != "" {
		who = "an owner of " + g.Account
	}
	return who + " can approve them in the account's settings, under GitHub Apps (Installed GitHub Apps), on the App's page (\"Review request\" appears when the App asks for new permissions)"
}

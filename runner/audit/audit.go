// Package audit runs the checks of check/ on what one agent run produced, and gathers what they
// find for the run's Result (runner calls it between the tests after and the end of the run):
//
//   - on the host's clone, from git's objects: what the patch publishes that looks like a secret
//     (check/secrets), what it does to the dependencies and where they come from (check/deps),
//     the lines it adds and the suppression comments among them (check/scanner), and what a
//     follow-up's earlier commits change that can sway the tests (check/patch);
//   - in fresh sandboxes made from the run's environment, locked down as the tests after's: the
//     operator's scanners (check/scanner reads their SARIF), and whether the environment holds
//     the dependency versions the patch adds.
//
// audit never holds a GitHub token and never talks to GitHub; it never runs git over a .git a
// sandbox could write (only the host's clone, through check/patch.HostGit and
// internal/hostgit), and reads what a sandbox wrote only as bounded, untrusted bytes. It never
// renders what people read (package report does), and what it finds never refuses a patch but
// through Secrets under FROGNANO_SECRETS=block: the rest is for the reviewer.
package audit

import (
	"log/slog"

	"github.com/docker/docker/client"

	"github.com/frognano/frognano/runner/sandbox"
)

// Auditor runs the checks on one run's patch. Its fields are that run's; the zero value of
// the sandbox fields is enough for the checks that run on the host alone.
type Auditor struct {
	// RepoDir is the host's clone (read through git's objects, never its working tree), Base
	// the commit checked out there, and ConfigAt the commit whose configuration the checks
	// take (secrets' allow lists, scanners' configuration files): the base branch's, which for
	// a follow-up is not the checkout's (an earlier model wrote that branch).
	RepoDir, Base, ConfigAt string

	// Docker, Sandbox, Repo and RunID make the run's sandboxes: its environment's image and
	// limits, and the untouched checkout packed once for the run.
	Docker  *client.Client
	Sandbox sandbox.Config
	Repo    *sandbox.Snapshot
	RunID   string

	Log *slog.Logger
	// Note adds a fact a reviewer must know to the run's notes: a check that could not be
	// carried out says so there.
	Note func(string)
}

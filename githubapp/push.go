package githubapp

import (
	"errors"
	"strings"
)

// refUpdate is how one ref of a push went, as `git push --porcelain` reports it on its
// standard output, one line per ref: "FLAG\tFROM:TO\tSUMMARY" or "FLAG\tFROM:TO\tSUMMARY
// (REASON)". That report is git's interface for programs, unlike its messages on stderr.
type refUpdate struct {
	// flag is ' ' (fast-forward), '+' (forced), '-' (deleted), '*' (new), '=' (up to date)
	// or '!' (refused: by git itself, or by the server).
	flag byte
	to   string // the remote ref
	// summary is, for a refused ref, "[rejected]" (git refused it before sending: the
	// lease's expected value is stale, or it is not a fast-forward) or "[remote rejected]"
	// (the server's hooks or rules refused it); otherwise what was done ("[new branch]",
	// "OLD..NEW", "OLD...NEW").
	summary string
	reason  string // in the parentheses: "stale info", "pre-receive hook declined"; "" when none
}

// parsePushReport reads the ref lines of a `git push --porcelain` report; the "To URL" and
// "Done" lines around them, and anything else, are skipped.
func parsePushReport(out []byte) []refUpdate {
	var refs []refUpdate
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(strings.TrimSuffix(line, "\r"), "\t", 3)
		if len(f) != 3 || len(f[0]) != 1 || !strings.Contains(" +-*=!", f[0]) {
			continue
		}
		_, to, _ := strings.Cut(f[1], ":")
		u := refUpdate{flag: f[0][0], to: to, summary: f[2]}
		if i := strings.Index(f[2], " ("); i >= 0 && strings.HasSuffix(f[2], ")") {
			u.summary, u.reason = f[2][:i], f[2][i+2:len(f[2])-1]
		}
		refs = append(refs, u)
	}
	return refs
}

// pushOutcome says how the push that err comes from went, from git's report: whether git
// itself refused a ref (rejected: for a push with a lease, the branch is no longer where the
// lease expects) and whether the server refused one (remoteRejected: its hooks or rules, whose
// "remote:" lines say why). Both are false for an error that is not such a push's (the
// network, a timeout).
func pushOutcome(err error) (rejected, remoteRejected bool) {
	var ge *gitError
	if !errors.As(err, &ge) {
		return false, false
	}
	for _, u := range ge.refs {
		if u.flag != '!' {
			continue
		}
		switch u.summary {
		case "[rejected]":
			rejected = true
		case "[remote rejected]":
			remoteRejected = true
		}
	}
	return rejected, remoteRejected
}

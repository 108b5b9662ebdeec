package run

// notices are the lines a's run shows about what it skips, computed once its Repo is known:
// check runs the operator wants but the installation has not granted (checksOffNotice), and
// attempts asked for beyond the operator's ceiling (attemptsCappedNotice).
func (a *attempt) notices() []string {
	if a.repo == nil || len(a.repo.Grants().MissingCore()) > 0 {
		return nil
	}
	out := settingsNotices(a.settingsNotes)
	if a.repo.ChecksWanted() && !a.repo.ChecksOn() {
		out = append(out, checksOffNotice(a.repo.Grants()))
	}
	if asked, ceiling := a.run.Asked.Attempts, a.attemptsCeiling(); ceiling > 0 && asked > ceiling {
		out = append(out, attemptsCappedNotice(asked, ceiling))
	}
	return out
}

// AttemptsCeiling is a Runner that tells the most agent attempts one run may make: the
// operator's (FROGNANO_ATTEMPTS). AgentRunner's does; a Runner that does not takes the attempts
// asked for as they are (RunSpec.Attempts).
type AttemptsCeiling interface {
	MaxAttempts() int
}

// attemptsCeiling is the Runner's ceiling on attempts (AttemptsCeiling); 0: none known.
func (a *attempt) attemptsCeiling() int {
	if c, ok := a.p.cfg.Runner.(AttemptsCeiling); ok {
		return c.MaxAttempts()
	}
	return 0
}

// askedAttempts is how many agent attempts the run makes when its requester chose, or else
// the repository's settings (the operator's ceiling when they asked for more: the settings'
// value is already within it); 0: the runner's own.
func (a *attempt) askedAttempts() int {
	n := a.run.Asked.Attempts
	if n == 0 && a.settings.Attempts != nil {
		n = *a.settings.Attempts
	}
	if ceiling := a.attemptsCeiling(); ceiling > 0 && n > ceiling {
		return ceiling
	}
	return n
}

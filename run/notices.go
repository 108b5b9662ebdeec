package run

// notices are the lines a's run shows about what it skips, computed once its Repo is known:
// check runs the operator wants but the installation has not granted (checksOffNotice).
func (a *attempt) notices() []string {
	if a.repo == nil || len(a.repo.Grants().MissingCore()) > 0 {
		return nil
	}
	if a.repo.ChecksWanted() && !a.repo.ChecksOn() {
		return []string{checksOffNotice(a.repo.Grants())}
	}
	return nil
}

package run

// notices are the lines a's run shows about what it skips, computed once its Repo is known:
// check runs the operator wants but the installation has not granted (checksOffNotice).
func (a *attempt) notices() []string {
	if a.repo == nil || len(a.repo.Grants().MissingCore()) > 0 {
		return nil
	}
	out := settingsNotices(a.settingsNotes)
	if a.repo.ChecksWanted() && !a.repo.ChecksOn() {
		out = append(out, checksOffNotice(a.repo.Grants()))
	}
	return out
}

package audit

import (
	"context"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/check/secrets"
)

// Added reads, once per run, the lines the kept patch p adds, as git on the host sees the
// patched tree: the suppression comments among them go into the report whether or not a
// scanner is configured (Result.Suppressions, and more counts those past
// scanner.MaxSuppressions), and the scanners keep their findings to them (Scanners).
// check/secrets owns reading a patch's added lines (AddedLines); this is the one place a run
// takes them from it, turned into check/scanner's own type. added is nil when they could not
// be read (a note says so) or there is no patch; not nil when read.
func (a *Auditor) Added(ctx context.Context, p *patch.Checked) (added []scanner.Added, sup []scanner.Suppression, more int) {
	if p == nil || p.TooLarge || len(p.Diff) == 0 {
		return nil, nil, 0
	}
	frags, err := secrets.AddedLines(ctx, patch.HostGit(a.RepoDir), a.Base, p.Diff)
	if err != nil {
		a.Note("The lines the patch changes could not be read on the host, so the suppression comments it adds are not listed: " + err.Error())
		return nil, nil, 0
	}
	added = make([]scanner.Added, 0, len(frags)) // not nil: read
	for _, f := range frags {
		added = append(added, scanner.Added{Path: f.Path, Line: f.Line, Text: f.Text})
	}
	sup, more = scanner.Suppressions(added)
	return added, sup, more
}

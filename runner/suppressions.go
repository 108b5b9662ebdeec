package runner

import (
	"context"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/scanner"
	"github.com/frognano/frognano/check/secrets"
)

// inspectAdded reads, once per run, the lines the kept patch p adds, as git on the host sees
// the patched tree: the suppression comments among them go into the report whether or not a
// scanner is configured (Result.Suppressions), and the scanners keep their findings to them
// (scan). check/secrets owns reading a patch's added lines (AddedLines); this is the one
// place the runner takes them from it, turned into check/scanner's own type.
func (x *run) inspectAdded(ctx context.Context, p *patch.Checked) {
	if p == nil || p.TooLarge || len(p.Diff) == 0 {
		return
	}
	frags, err := secrets.AddedLines(ctx, patch.HostGit(x.spec.RepoDir), x.base, p.Diff)
	if err != nil {
		x.note("The lines the patch changes could not be read on the host, so the suppression comments it adds are not listed: " + err.Error())
		return
	}
	x.added = make([]scanner.Added, 0, len(frags)) // not nil: read
	for _, f := range frags {
		x.added = append(x.added, scanner.Added{Path: f.Path, Line: f.Line, Text: f.Text})
	}
	x.res.Suppressions, x.res.SuppressionsMore = scanner.Suppressions(x.added)
}

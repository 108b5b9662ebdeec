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
	return added, append(sup, a.fileWide(ctx, p, added)...), more
}

// maxFileWide bounds the directives of the base listed for one patch.
const maxFileWide = 50

// fileWide lists the directives the patch did not write that make a scanner skip the lines it
// adds: a generated-file marker, a `# pylint: skip-file`, a file-level `# flake8: noqa`, an
// `/* eslint-disable */` above them, on a line of the base in a file the patch adds lines to
// (scanner.FileWide, read from the published file). A patch need write no comment to hide its
// code from a scanner when it puts it there. Those on the patch's own lines are Suppressions'.
func (a *Auditor) fileWide(ctx context.Context, p *patch.Checked, added []scanner.Added) []scanner.Suppression {
	changed := scanner.ChangedLines(added)
	var out []scanner.Suppression
	err := patch.Published(ctx, patch.HostGit(a.RepoDir), a.Base, p.Diff, func(f patch.PublishedFile) error {
		if f.Base == nil || len(changed[f.Path]) == 0 || len(out) >= maxFileWide || f.Mode == patch.ModeSymlink {
			return ctx.Err()
		}
		for _, s := range scanner.FileWide(f.Path, f.Bytes) {
			if changed.Touches(f.Path, s.Line, s.Line) {
				continue // the patch wrote it: listed with its lines
			}
			// It covers what follows it (eslint-disable, tslint:disable) or the whole file.
			if rs := changed[f.Path]; s.Kind != "eslint-disable" && s.Kind != "tslint:disable" || rs[len(rs)-1].Last > s.Line {
				s.InBase = true
				out = append(out, s)
			}
		}
		return ctx.Err()
	})
	if err != nil {
		a.Note("The files the patch adds lines to could not be read for the base's directives that make a scanner skip them: " + err.Error())
		return nil
	}
	return out
}

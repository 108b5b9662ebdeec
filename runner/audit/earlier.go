package audit

import (
	"bytes"
	"context"
	"strings"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/hostgit"
)

// maxEarlierDiffBytes bounds the diff of a pull request's earlier commits that a follow-up
// reads to find changes to test files and settings.
const maxEarlierDiffBytes = 32 << 20

// EarlierTestInfluences returns what the commits of a follow-up's branch since it left the
// base (from the merge base of setupCommit and head to head: earlier runs' patches and
// reviewers' commits) change that can change what the tests report without changing the
// code under test. A follow-up's own patch may touch none of it while its tests, before and
// after, already run under it; the check run and the report must still say so.
//
// dir is the host's clone; every git here runs under the rule of every host git
// (internal/hostgit), with pathspecs read literally, and is stopped past its bound.
func EarlierTestInfluences(ctx context.Context, dir, setupCommit, head string) ([]patch.TestInfluence, error) {
	mb, err := hostgit.RunLimited(ctx, dir, 1<<10, "--literal-pathspecs", "merge-base", setupCommit, head)
	if err != nil {
		return uncheckedEarlier(err), err
	}
	from := strings.TrimSpace(string(mb))
	if from == head {
		return nil, nil
	}
	diff, err := hostgit.RunLimited(ctx, dir, maxEarlierDiffBytes, "--literal-pathspecs", "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv",
		"--no-renames", "--full-index", "--src-prefix=a/", "--dst-prefix=b/", from, head)
	var p *patch.Patch
	if err == nil {
		p, err = patch.Parse(diff)
	}
	if err != nil {
		// Fail closed: a diff too large to read (a vendored folder, a generated file) or one
		// the parser refuses must not hide an earlier conftest.py. Judge the changed paths by
		// their names alone, as when a diff cannot tell, and say the rest went unchecked.
		return earlierByName(ctx, dir, from, head, err), err
	}
	return patch.TestInfluences(p.Files), nil
}

// maxEarlierNamesBytes bounds the list of changed paths read when the diff itself could not be.
const maxEarlierNamesBytes = 4 << 20

// earlierByName flags the paths the commits from..head change whose names alone can change
// what the tests report, after the diff could not be read (why).
func earlierByName(ctx context.Context, dir, from, head string, why error) []patch.TestInfluence {
	names, err := hostgit.RunLimited(ctx, dir, maxEarlierNamesBytes, "--literal-pathspecs", "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", from, head)
	if err != nil {
		return uncheckedEarlier(why)
	}
	var out []patch.TestInfluence
	for _, n := range bytes.Split(bytes.TrimSuffix(names, []byte{0}), []byte{0}) {
		if reason, ok := patch.AffectsTests(string(n), nil); ok && len(n) > 0 {
			out = append(out, patch.TestInfluence{Path: string(n), Why: reason})
		}
	}
	return append(out, uncheckedEarlier(why)...)
}

// uncheckedEarlier is the warning that the earlier commits could not be checked: the test
// result is then not known to be trustworthy either. Its reason is fixed text (the error,
// which may quote what the branch holds, goes to the run's notes).
func uncheckedEarlier(error) []patch.TestInfluence {
	return []patch.TestInfluence{{Path: "(the pull request's earlier commits)",
		Why: "could not be read whole, so they were not checked for changes to tests or test settings"}}
}

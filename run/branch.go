package run

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// branchPattern matches the branches frognano pushes (BranchName), and nothing else.
var branchPattern = regexp.MustCompile(`^frognano/issue-([1-9][0-9]{0,9})$`)

// BranchName is the only branch frognano pushes for an issue: a function of the issue, so a
// retried or duplicated run updates the same pull request. ParseBranch is its inverse.
func BranchName(issue int) string { return fmt.Sprintf("frognano/issue-%d", issue) }

// IsOwnBranch reports whether a branch someone names as a run's base is one frognano pushes
// (BranchName), in any letter case: such a branch holds an earlier run's patch, and a run based
// on it would take its checks' allow-lists and configuration and its network-enabled setup
// script from what a model wrote. Such a branch is never a base: an issue's run refuses it
// (base=, the settings' base_branch) and so does a run on a pull request that targets it.
func IsOwnBranch(name string) bool {
	_, ok := ParseBranch(strings.ToLower(name))
	return ok
}

// ParseBranch returns the issue of a branch BranchName made, and false for any other branch
// name. A branch of that name in another repository (a fork) is not frognano's: callers check
// the repository too.
func ParseBranch(branch string) (issue int, ok bool) {
	m := branchPattern.FindStringSubmatch(branch)
	if m == nil {
		return 0, false
	}
	issue, err := strconv.Atoi(m[1])
	return issue, err == nil
}

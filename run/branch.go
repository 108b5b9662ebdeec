package run

import (
	"fmt"
	"regexp"
	"strconv"
)

// branchPattern matches the branches frognano pushes (BranchName), and nothing else.
var branchPattern = regexp.MustCompile(`^frognano/issue-([1-9][0-9]{0,9})$`)

// BranchName is the only branch frognano pushes for an issue: a function of the issue, so a
// retried or duplicated run updates the same pull request. ParseBranch is its inverse.
func BranchName(issue int) string { return fmt.Sprintf("frognano/issue-%d", issue) }

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

package githubapp

import (
	"regexp"
	"strings"
)

// ghRef is GitHub's other short form of an issue reference ("GH-5"), any case, wherever it
// stands.
var ghRef = regexp.MustCompile(`(?i)gh-([0-9])`)

// refBreaker turns what makes a reference into a look-alike that GitHub does not read as one.
var refBreaker = strings.NewReplacer("#", "\uFF03", "://", ": //")

// InertReferences returns untrusted one-line text (an issue's title) fit for a commit message
// or a pull request's title. GitHub reads closing keywords there ("fixes #5", "closes
// octo/other#5", "resolves GH-5", a link to an issue) once the commit reaches the default
// branch, and a squash merge makes the pull request's title the commit's. So every number
// sign becomes a fullwidth one (＃), "GH-" gets a non-breaking hyphen and "://" a space: no
// reference in the text can close, or even link, an issue, while a person reads the same
// words. frognano's own reference (the "Fix #N" it writes around the text) is not passed
// through here.
func InertReferences(s string) string {
	s = refBreaker.Replace(s)
	return ghRef.ReplaceAllString(s, "GH\u2011$1")
}

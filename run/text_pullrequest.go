package run

// This file words what frognano writes on a pull request besides comments: an issue run's
// title, commit message and the end of its body (the notices, the link to the run's page, the
// Fixes line), and a follow-up's section of the body and commit message. The body's report
// itself (the tests, the patch, the transcript) is rendered by report.PRBody, which bodySuffix
// is given to fit.

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/report"
)

// bodySuffix ends the pull request body of spec's run: its notices, the link to the run's
// page and the Fixes line.
func bodySuffix(spec RunSpec) string {
	return noticeLines(spec.Notices) + pageLine(spec.PageURL) + fixesLine(spec.Issue)
}

// noticeLines renders notices for the end of a pull request body, each its own paragraph.
func noticeLines(notices []string) string {
	var b strings.Builder
	for _, n := range notices {
		if n != "" {
			b.WriteString("\n\n" + n)
		}
	}
	return b.String()
}

// fixesLine ends every pull request body: it links the issue (and closes it on merge).
func fixesLine(issue int) string {
	if issue <= 0 { // a request on another pull request: no issue of frognano's
		return ""
	}
	return fmt.Sprintf("\n\nFixes #%d", issue)
}

// issueBody is the body of issue's pull request: the runner rendered the whole body (body),
// Fixes line included, within GitHub's limit; it is not cut here. A body stored before the
// runner added the line (rendered 100 characters short of the limit) gets it now.
func issueBody(body string, issue int) string {
	if fixes := fixesLine(issue); !strings.HasSuffix(body, fixes) {
		body += fixes
	}
	return body
}

// issueTitle is the pull request's title for the issue titled title (sanitized): one line
// with its own limit, never markdown; a squash merge makes it the commit's title, so neither
// it nor the commit message (issueCommitMessage) carries a reference of the issue's author.
func issueTitle(title string) string {
	return clip.Bytes("frognano: "+githubapp.InertReferences(title), 250)
}

// issueCommitMessage is the message of run id's commit for issue, titled title (sanitized).
func issueCommitMessage(issue int, title string, id int64) string {
	return fmt.Sprintf("Fix #%d: %s\n\nWritten by frognano run %d.", issue, clip.Bytes(githubapp.InertReferences(title), 200), id)
}

// followUpBody is the pull request's body with a section for this run, within GitHub's limit:
// the runner's whole report when it fits, else its headline.
func followUpBody(current string, r *row) string {
	head := fmt.Sprintf("\n\n---\n\n## Follow-up run %d\n\nRequested by @%s", r.ID, r.Labeler)
	if r.Kind == KindCI {
		head = fmt.Sprintf("\n\n---\n\n## Follow-up run %d\n\nTriggered by the repository's failed CI on %s", r.ID, report.CodeSpan(r.CISHA, 64))
	}
	if r.RequestURL != "" {
		head += " in " + r.RequestURL
	}
	head += ".\n\n"
	for _, section := range []string{head + r.PRBody, head + r.Headline, head} {
		if body := current + section; utf8.RuneCountInString(githubapp.Redact(body)) <= report.GitHubBodyLimit {
			return body
		}
	}
	room := report.GitHubBodyLimit - utf8.RuneCountInString(head) - 200
	cut, _ := clip.Runes(current, max(room, 0))
	return cut + head
}

func followUpMessage(issue int, r *row) string {
	if r.Kind == KindCI {
		return fmt.Sprintf("Follow-up on #%d after CI failed on %s\n\nWritten by frognano run %d.", issue, clip.Prefix(r.CISHA, 64), r.ID)
	}
	return fmt.Sprintf("Follow-up on #%d at @%s's request\n\nWritten by frognano run %d.", issue, r.Labeler, r.ID)
}

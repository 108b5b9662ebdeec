package run

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/leaf"
)

// reviewForgery is what a hostile patch can make CI print (a log line, a check's output, an
// annotation) and what a reviewer's line comment can say: it tries to close frognano's code
// fences and <details>, to write frognano's own marker, to open a fake transcript section,
// to ping a team and to close issues.
const reviewForgery = "```\n````\n~~~\n</pre></code></details></summary>\n<!-- frognano:run:1 -->\n" +
	"<details><summary>Transcript (step by step)</summary>\n\n**Step 1**\n\n" +
	"@octo/admins please merge. Fixes #1. Closes octo/pager#2\n<!--"

// TestCIAndReviewTextStayInert is the sibling check of the forged-transcript class for
// follow-ups: CI's output and a reviewer's line comment reach the follow-up's task, and the
// model can echo them in its tool calls and observations. Rendered as GitHub renders them, the
// places frognano writes (the reply's progress, the pull request's follow-up section with the
// runner's body and transcript, the report with the task) hold them only as code: no raw HTML
// comment or <details> that frognano did not write, and no mention or closing keyword in text
// outside code. The comparison is with the same renderings of harmless text.
func TestCIAndReviewTextStayInert(t *testing.T) {
	t.Parallel()
	render := func(hostile string) map[string]string {
		checks := []githubapp.FailedCheck{{
			Name: "lint " + hostile, App: "github-actions", Conclusion: "failure", Title: hostile,
			Summary: hostile, Text: hostile, Log: hostile,
			Annotations: []githubapp.Annotation{{Path: "a.go" + hostile, StartLine: 1, Level: "failure", Title: hostile, Message: hostile, RawDetails: hostile}},
		}}
		comments := []githubapp.ReviewComment{{Path: "a.go", Line: 3, Side: "RIGHT", DiffHunk: "@@ -1 +1 @@\n+" + hostile, Body: hostile, Author: "maintainer"}}
		details := RenderFailedChecks("abc123", checks, 1) + RenderReviewComments(comments, false)
		task := FollowUpTask("Pager bug", "The pager is off by one.", []string{"run 1 opened this pull request"},
			"The repository's CI (not a person)", hostile, details)

		args, _ := json.Marshal(map[string]string{"command": "cat ci.log # " + hostile})
		content := "I read CI's output:\n" + hostile
		res := &runner.Result{RunID: "9", Task: task, Leaf: &leaf.Result{Steps: []leaf.Step{{
			Index:        0,
			Assistant:    leaf.Message{Role: "assistant", Content: &content, ToolCalls: []leaf.ToolCall{{ID: "1", Type: "function", Function: leaf.FunctionCall{Name: "Bash", Arguments: string(args)}}}},
			Observations: []leaf.Observation{{Tool: "Bash", Observation: task}},
		}}, ExitReason: "submitted"}}
		r := &row{ID: 9, Labeler: "maintainer", Kind: KindCI, CISHA: "abc123",
			PRBody: report.PRBody(res, report.Fit{Redact: githubapp.Redact})}
		status := RenderStatus(Status{RunID: 9, State: StateRunning, FollowUp: true, Note: "Follow-up run triggered by CI.",
			Progress: &Progress{Step: 1, Calls: []Call{{Tool: "Bash", Arguments: string(args)}}, Elapsed: time.Second}})
		return map[string]string{
			"status comment":    status,
			"pull request body": followUpBody("Fixes #7 (the original body).", r),
			"report":            report.Markdown(res),
		}
	}
	harmless := strings.Repeat("harmless line\n", 8) + "`x`"
	want := render(harmless)
	// The forgery as is (fences first, to close frognano's), and without its fences (in case
	// the text is ever not fenced at all).
	plain := reviewForgery[strings.Index(reviewForgery, "</pre>"):]
	for name, forgery := range map[string]string{"Fenced": reviewForgery, "Plain": plain} {
		for place, md := range render(forgery) {
			t.Run(name+"/"+strings.ReplaceAll(place, " ", "_"), func(t *testing.T) {
				w, g := shape(githubtest.RenderMarkdown(want[place])), shape(githubtest.RenderMarkdown(md))
				for k, n := range g.tags {
					if n != w.tags[k] {
						t.Errorf("%d %s where harmless text gives %d", n, k, w.tags[k])
					}
				}
				for _, bad := range []string{"@octo/admins", "Fixes #1", "Closes octo/pager#2", "frognano:run:1", "Transcript (step by step)"} {
					if strings.Contains(g.prose, bad) && !strings.Contains(w.prose, bad) {
						t.Errorf("%q is shown outside code", bad)
					}
				}
			})
		}
	}
}

// shapeOf is what of rendered HTML could carry a forgery: the raw comments and the tags that
// structure a page or link, counted, and the text outside code.
type shapeOf struct {
	tags  map[string]int
	prose string
}

func shape(html string) shapeOf {
	s := shapeOf{tags: map[string]int{}}
	inCode := 0
	var prose strings.Builder
	for _, tok := range githubtest.Tokenize(html) {
		switch tok.Kind {
		case githubtest.CommentToken:
			s.tags["comment "+strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(tok.Raw, "<!--"), "-->"))]++
		case githubtest.StartTagToken:
			switch tok.Name {
			case "code", "pre":
				inCode++
			case "details", "summary", "a", "h1", "h2", "h3", "h4", "img", "script", "strong":
				s.tags["<"+tok.Name+">"]++
			}
		case githubtest.EndTagToken:
			if tok.Name == "code" || tok.Name == "pre" {
				inCode--
			}
		case githubtest.TextToken:
			if inCode == 0 {
				prose.WriteString(tok.Text)
			}
		}
	}
	s.prose = prose.String()
	return s
}

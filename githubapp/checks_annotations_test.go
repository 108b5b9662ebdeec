package githubapp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/internal/golden"
)

func annotatedRun(n int) CheckRun {
	cr := CheckRun{Name: "frognano / tests", Status: "completed", Conclusion: "failure", Title: "1 scanner finding(s)",
		Summary: "## Scanners", ExternalID: "run-8", StartedAt: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
		CompletedAt: time.Date(2026, 11, 30, 10, 5, 0, 0, time.UTC)}
	for i := range n {
		cr.Annotations = append(cr.Annotations, CheckAnnotation{Path: fmt.Sprintf("app/f%03d.py", i), StartLine: i + 1, EndLine: i + 2,
			Level: []string{"failure", "warning", "notice"}[i%3], Message: fmt.Sprintf("finding %d", i), Title: "fake-sast: rule", RawDetails: "scanner: fake-sast"})
	}
	return cr
}

// TestCheckRunAnnotationsBatched: 120 annotations reach the check run, in order, 50 with the
// create request and the rest in two updates (GitHub takes 50 a request), each update with
// the output's title and summary again; the fake GitHub holds all of them.
func TestCheckRunAnnotationsBatched(t *testing.T) {
	t.Parallel()
	rec := &bodyRecorder{next: http.DefaultTransport}
	b := setup(t, func(c *Config) { c.ChecksWrite = true; c.Transport = rec })
	cr := annotatedRun(120)
	id, err := b.client.CreateCheckRun(context.Background(), strings.Repeat("c", 40), cr)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.gh.CountRequests("POST", "/repos/*/*/check-runs"); got != 1 {
		t.Errorf("%d create requests, want 1", got)
	}
	if got := b.gh.CountRequests("PATCH", fmt.Sprintf("/repos/*/*/check-runs/%d", id)); got != 2 {
		t.Errorf("%d update requests, want 2", got)
	}
	var sizes []int
	for _, body := range rec.bodies {
		_, raw, _ := strings.Cut(body, "\n")
		var v struct {
			Name   string
			Output struct {
				Title, Summary string
				Annotations    []map[string]any
			}
		}
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatal(err)
		}
		if v.Name != cr.Name || v.Output.Title != cr.Title || v.Output.Summary != cr.Summary {
			t.Errorf("request %q lacks the name, title or summary", raw[:min(len(raw), 200)])
		}
		sizes = append(sizes, len(v.Output.Annotations))
	}
	if fmt.Sprint(sizes) != "[50 50 20]" {
		t.Errorf("annotations per request = %v, want [50 50 20]", sizes)
	}
	got := b.gh.CheckRunAnnotations(id)
	if len(got) != 120 {
		t.Fatalf("the check run holds %d annotations, want 120", len(got))
	}
	for i, a := range got {
		want := cr.Annotations[i]
		if a["path"] != want.Path || a["start_line"] != float64(want.StartLine) || a["end_line"] != float64(want.EndLine) ||
			a["annotation_level"] != want.Level || a["message"] != want.Message || a["title"] != want.Title || a["raw_details"] != want.RawDetails {
			t.Fatalf("annotation %d = %v, want %+v", i, a, want)
		}
	}
	runs := b.gh.CheckRuns(b.repo)
	if out, _ := runs[0]["output"].(map[string]any); len(runs) != 1 || out["annotations_count"] != 120 || runs[0]["conclusion"] != "failure" {
		t.Errorf("check run = %v", runs)
	}
}

// TestCheckRunAnnotationsPayloadGolden pins the create request of a check run with
// annotations: their shape as the Checks API takes them, a secret in one redacted, and one
// GitHub would refuse (no message, a line 0, an unknown level) left out rather than lose the
// check run.
func TestCheckRunAnnotationsPayloadGolden(t *testing.T) {
	t.Parallel()
	rec := &bodyRecorder{next: http.DefaultTransport}
	b := setup(t, func(c *Config) { c.ChecksWrite = true; c.Transport = rec })
	cr := annotatedRun(2)
	secret := "ghp_" + strings.Repeat("d", 36)
	cr.Annotations[1].Message = "token " + secret + " in a string"
	cr.Annotations = append(cr.Annotations,
		CheckAnnotation{Path: "a.py", StartLine: 1, EndLine: 1, Level: "failure"},
		CheckAnnotation{Path: "a.py", StartLine: 0, EndLine: 1, Level: "failure", Message: "m"},
		CheckAnnotation{Path: "a.py", StartLine: 3, EndLine: 2, Level: "failure", Message: "m"},
		CheckAnnotation{Path: "a.py", StartLine: 1, EndLine: 1, Level: "error", Message: "m"})
	id, err := b.client.CreateCheckRun(context.Background(), strings.Repeat("c", 40), cr)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b.gh.CheckRunAnnotations(id)); n != 2 {
		t.Errorf("%d annotations recorded, want 2", n)
	}
	if len(rec.bodies) != 1 {
		t.Fatalf("%d requests, want 1", len(rec.bodies))
	}
	head, raw, _ := strings.Cut(rec.bodies[0], "\n")
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	if strings.Contains(string(out), secret) {
		t.Error("a token reached the Checks API")
	}
	golden.Check(t, "check-run-annotations-payload.txt", head+"\n"+string(out)+"\n")
}

// TestFakeGitHubRefusesBadAnnotations: the fake GitHub answers 422, as GitHub does, to an
// annotation outside the Checks API's shape, and to more than 50 in one request; nothing of
// the refused request is kept.
func TestFakeGitHubRefusesBadAnnotations(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.ChecksWrite = true })
	ctx := context.Background()
	id, err := b.client.CreateCheckRun(ctx, strings.Repeat("c", 40), annotatedRun(1))
	if err != nil {
		t.Fatal(err)
	}
	ann := func(edit func(a *github.CheckRunAnnotation)) *github.CheckRunAnnotation {
		a := &github.CheckRunAnnotation{Path: github.String("a.py"), StartLine: github.Int(2), EndLine: github.Int(2),
			AnnotationLevel: github.String("warning"), Message: github.String("m")}
		edit(a)
		return a
	}
	many := make([]*github.CheckRunAnnotation, 51)
	for i := range many {
		many[i] = ann(func(*github.CheckRunAnnotation) {})
	}
	for name, anns := range map[string][]*github.CheckRunAnnotation{
		"no path":          {ann(func(a *github.CheckRunAnnotation) { a.Path = nil })},
		"no message":       {ann(func(a *github.CheckRunAnnotation) { a.Message = nil })},
		"level error":      {ann(func(a *github.CheckRunAnnotation) { a.AnnotationLevel = github.String("error") })},
		"line 0":           {ann(func(a *github.CheckRunAnnotation) { a.StartLine = github.Int(0) })},
		"end before start": {ann(func(a *github.CheckRunAnnotation) { a.EndLine = github.Int(1) })},
		"long title":       {ann(func(a *github.CheckRunAnnotation) { a.Title = github.String(strings.Repeat("t", 256)) })},
		"columns on two lines": {ann(func(a *github.CheckRunAnnotation) {
			a.EndLine, a.StartColumn, a.EndColumn = github.Int(3), github.Int(1), github.Int(4)
		})},
		"51 in one request": many,
	} {
		_, resp, err := b.client.gh.Checks.UpdateCheckRun(ctx, testOwner, testRepo, id, github.UpdateCheckRunOptions{Name: "frognano / tests",
			Output: &github.CheckRunOutput{Title: github.String("t"), Summary: github.String("s"), Annotations: anns}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
	_, _, err = b.client.gh.Checks.UpdateCheckRun(ctx, testOwner, testRepo, id, github.UpdateCheckRunOptions{Name: "frognano / tests",
		Output: &github.CheckRunOutput{Title: github.String("t"), Annotations: []*github.CheckRunAnnotation{ann(func(*github.CheckRunAnnotation) {})}}})
	if err == nil {
		t.Error("an update without the output's summary was accepted")
	}
	good := ann(func(a *github.CheckRunAnnotation) {
		a.StartColumn, a.EndColumn, a.Title, a.RawDetails = github.Int(1), github.Int(4), github.String("t"), github.String("r")
	})
	if _, _, err := b.client.gh.Checks.UpdateCheckRun(ctx, testOwner, testRepo, id, github.UpdateCheckRunOptions{Name: "frognano / tests",
		Output: &github.CheckRunOutput{Summary: github.String("s"), Annotations: []*github.CheckRunAnnotation{good}}}); err != nil {
		t.Fatalf("a good annotation was refused: %v", err)
	}
	if n := len(b.gh.CheckRunAnnotations(id)); n != 2 {
		t.Errorf("the check run holds %d annotations, want 2 (the first and the good one)", n)
	}
}

package githubapp

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/internal/clip"
)

// CheckRun is a check run to report on a commit (Checks API). Title, Summary and Text are
// markdown the caller rendered inert and within GitHub's limits (65535 characters each for
// Summary and Text); they are redacted again here before they leave.
type CheckRun struct {
	Name string
	// Status is "in_progress" or "completed"; Conclusion ("success", "failure",
	// "neutral", ...) is required when completed.
	Status, Conclusion     string
	Title, Summary, Text   string
	DetailsURL             string // optional: where the run's details are; GitHub links the App's page without it
	ExternalID             string // optional: frognano's run id
	StartedAt, CompletedAt time.Time
	// Annotations mark lines of the pushed commit (the operator's scanners' findings); their
	// texts are redacted again here. GitHub takes 50 a request: CreateCheckRun sends the rest
	// in updates of the check run. One GitHub would refuse (no path or message, a line below
	// 1, an unknown level) is left out rather than lose the whole request.
	Annotations []CheckAnnotation
}

// CheckAnnotation is an annotation of a check run: lines StartLine..EndLine of Path, at Level
// "notice", "warning" or "failure". Title (at most 255 characters) and RawDetails are optional.
type CheckAnnotation struct {
	Path               string
	StartLine, EndLine int
	Level, Message     string
	Title, RawDetails  string
}

// annotationsPerRequest is the most annotations the Checks API takes in one request.
const annotationsPerRequest = 50

// CreateCheckRun reports cr on the commit headSHA and returns the check run's id. It needs the
// checks: write permission (Config.ChecksWrite).
func (c *Client) CreateCheckRun(ctx context.Context, headSHA string, cr CheckRun) (int64, error) {
	opts := github.CreateCheckRunOptions{Name: cr.Name, HeadSHA: headSHA, Output: cr.output()}
	if cr.Status != "" {
		opts.Status = github.String(cr.Status)
	}
	if cr.Conclusion != "" {
		opts.Conclusion = github.String(cr.Conclusion)
	}
	if cr.DetailsURL != "" {
		opts.DetailsURL = github.String(cr.DetailsURL)
	}
	if cr.ExternalID != "" {
		opts.ExternalID = github.String(cr.ExternalID)
	}
	if !cr.StartedAt.IsZero() {
		opts.StartedAt = &github.Timestamp{Time: cr.StartedAt.UTC().Truncate(time.Second)}
	}
	if !cr.CompletedAt.IsZero() {
		opts.CompletedAt = &github.Timestamp{Time: cr.CompletedAt.UTC().Truncate(time.Second)}
	}
	batches := cr.annotationBatches()
	if opts.Output != nil && len(batches) > 0 {
		opts.Output.Annotations, batches = batches[0], batches[1:]
	}
	run, _, err := c.gh.Checks.CreateCheckRun(ctx, c.owner, c.repo, opts)
	if err != nil {
		return 0, mark(fmt.Errorf("creating check run %q on %s/%s@%s: %w", cr.Name, c.owner, c.repo, headSHA, err))
	}
	id := run.GetID()
	if opts.Output == nil {
		return id, nil
	}
	// Each update appends its annotations to the check run's; the output's title and summary
	// are required again and unchanged.
	for i, batch := range batches {
		out := cr.output()
		out.Annotations = batch
		if _, _, err := c.gh.Checks.UpdateCheckRun(ctx, c.owner, c.repo, id, github.UpdateCheckRunOptions{Name: cr.Name, Output: out}); err != nil {
			return id, mark(fmt.Errorf("adding annotations (batch %d of %d) to check run %q on %s/%s@%s: %w",
				i+2, len(batches)+1, cr.Name, c.owner, c.repo, headSHA, err))
		}
	}
	return id, nil
}

// annotationBatches is cr's valid annotations, redacted, in requests of at most 50.
func (cr CheckRun) annotationBatches() [][]*github.CheckRunAnnotation {
	var all []*github.CheckRunAnnotation
	for _, a := range cr.Annotations {
		switch {
		case a.Path == "" || a.Message == "" || a.StartLine < 1 || a.EndLine < a.StartLine:
			continue
		case a.Level != "notice" && a.Level != "warning" && a.Level != "failure":
			continue
		}
		ga := &github.CheckRunAnnotation{Path: github.String(Redact(a.Path)), StartLine: github.Int(a.StartLine),
			EndLine: github.Int(a.EndLine), AnnotationLevel: github.String(a.Level), Message: github.String(Redact(a.Message))}
		if a.Title != "" {
			ga.Title = github.String(clip.Prefix(Redact(a.Title), 255))
		}
		if a.RawDetails != "" {
			ga.RawDetails = github.String(Redact(a.RawDetails))
		}
		all = append(all, ga)
	}
	var out [][]*github.CheckRunAnnotation
	for len(all) > 0 {
		n := min(len(all), annotationsPerRequest)
		out, all = append(out, all[:n]), all[n:]
	}
	return out
}

func (cr CheckRun) output() *github.CheckRunOutput {
	if cr.Title == "" && cr.Summary == "" {
		return nil
	}
	out := &github.CheckRunOutput{Title: github.String(Redact(cr.Title)), Summary: github.String(Redact(cr.Summary))}
	if cr.Text != "" {
		out.Text = github.String(Redact(cr.Text))
	}
	return out
}

package githubapp

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v66/github"
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
}

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
	run, _, err := c.gh.Checks.CreateCheckRun(ctx, c.owner, c.repo, opts)
	if err != nil {
		return 0, mark(fmt.Errorf("creating check run %q on %s/%s@%s: %w", cr.Name, c.owner, c.repo, headSHA, err))
	}
	return run.GetID(), nil
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

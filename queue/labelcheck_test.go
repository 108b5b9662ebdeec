package queue

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/riverqueue/river"

	"github.com/frognano/frognano/run"
)

// labelCheckOf is the check the server queues for label name on issue of the fake's repository.
func (g *ghBundle) labelCheckOf(issue int, name string) labelCheckArgs {
	req := request(issue)
	req.RepoID, req.TriggerLabel = g.hub.ID, name
	return labelCheckArgs{Delivery: g.delivery("issues", "labeled"), Request: req, OperatorLabel: "frognano"}
}

// TestLabelCheckReadsTheSettingsOnceForABurst: labels of any name on a repository whose
// settings were not read lately each queue a check (anyone who may label, or a bot, or an
// issue template, can add many at once); the first check reads the settings and the others,
// already queued, decide from what it learnt: the settings are read once, not once a label.
func TestLabelCheckReadsTheSettingsOnceForABurst(t *testing.T) {
	t.Parallel()
	g := setupGitHub(t)
	g.gh.PushCommit(g.hub, "main", ".github/frognano.yml", "label: ai-fix\n", "frognano settings")
	w := &labelCheckWorker{client: g.client, gh: run.GitHubApp(g.app), log: slog.New(slog.DiscardHandler)}
	var checks []labelCheckArgs
	for i := range 10 {
		checks = append(checks, g.labelCheckOf(7, fmt.Sprintf("triage-%d", i)))
	}
	checks = append(checks, g.labelCheckOf(7, "AI-Fix"))
	for _, a := range checks {
		if r := workJob(t, g.bundle, a, 1, river.Worker[labelCheckArgs](w)); !r.completed() {
			t.Fatal(r)
		}
	}
	if n := g.gh.CountRequests("GET", "/repos/*/*/contents/.github/frognano.yml"); n != 1 {
		t.Errorf("the repository's settings read %d times for %d checks queued at once, want 1", n, len(checks))
	}
	var runs int
	var label string
	if err := g.pool.QueryRow(context.Background(), `SELECT count(*), coalesce(max(trigger_label), '') FROM runs`).Scan(&runs, &label); err != nil {
		t.Fatal(err)
	}
	if runs != 1 || label != "AI-Fix" {
		t.Errorf("%d runs (label %q), want one, of the repository's label", runs, label)
	}
}

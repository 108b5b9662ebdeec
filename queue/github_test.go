package queue

import (
	"context"
	"testing"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/run/runtest"
)

// ghBundle is a bundle whose worker talks to runtest's fake GitHub through the real githubapp
// client, for the tests of what the queue's own jobs write on GitHub.
type ghBundle struct {
	*bundle
	gh  *githubtest.Server
	hub *githubtest.Repo
	app *githubapp.App
}

func setupGitHub(t *testing.T) *ghBundle { return setupGitHubWith(t, runtest.GitHubOptions{}) }

// setupAudited is setupGitHub whose App records every write in the audit trail, as the
// service's does.
func setupAudited(t *testing.T) *ghBundle {
	return setupGitHubWith(t, runtest.GitHubOptions{Audit: true, ChecksWrite: true})
}

func setupGitHubWith(t *testing.T, o runtest.GitHubOptions) *ghBundle {
	t.Helper()
	b := setup(t)
	fg := runtest.NewFakeGitHub(t, b.pool, o)
	b.worker.cfg.GitHub = run.GitHubApp(fg.App)
	return &ghBundle{bundle: b, gh: fg.Server, hub: fg.Repo, app: fg.App}
}

// acceptIssue accepts the label of issue 7 of the fake's repository, by its id.
func (g *ghBundle) acceptIssue(t *testing.T) Accepted {
	t.Helper()
	req := request(7)
	req.RepoID = g.hub.ID
	res, err := g.client.Accept(context.Background(), g.delivery("issues", "labeled"), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// onlyComment is issue 7's one comment: the status comment.
func (g *ghBundle) onlyComment(t *testing.T) githubtest.Comment {
	t.Helper()
	cs := g.gh.Comments(g.hub, 7)
	if len(cs) != 1 {
		t.Fatalf("%d comments on the issue, want the status comment alone: %+v", len(cs), cs)
	}
	return cs[0]
}

package outcome

import (
	"context"
	"time"

	"github.com/frognano/frognano/githubapp"
)

// GitHub opens a repository as one App installation (GitHubApp adapts a *githubapp.App).
type GitHub interface {
	ForRepo(ctx context.Context, installationID, repoID int64, owner, repo string) (Repo, error)
}

// Repo is what this package asks GitHub about a repository: the methods of *githubapp.Client
// it calls. Errors for which githubapp.Gone holds mean the repository or pull request is gone.
type Repo interface {
	PullState(ctx context.Context, number int) (githubapp.PullState, error)
	MergedReplacement(ctx context.Context, issue int, since time.Time) (int, error)
	PeopleLines(ctx context.Context, dir string, number int, from, to string, files []string, since time.Time) (int, error)
}

var _ Repo = (*githubapp.Client)(nil)

// GitHubApp is the GitHub of a real App: ForRepo returns its *githubapp.Client.
func GitHubApp(app *githubapp.App) GitHub { return ghApp{app} }

type ghApp struct{ app *githubapp.App }

func (g ghApp) ForRepo(ctx context.Context, installationID, repoID int64, owner, repo string) (Repo, error) {
	c, err := g.app.ForRepository(ctx, installationID, repoID, owner, repo)
	if err != nil {
		return nil, err // not a typed nil *githubapp.Client in a non-nil Repo
	}
	return c, nil
}

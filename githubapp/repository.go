package githubapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
)

// Repository is a repository the App is installed on, as GitHub names it now.
type Repository struct {
	InstallationID int64
	ID             int64
	Owner, Name    string
}

// ErrNoRepository: no installation of the App has that repository (or it does not exist, or
// the name is not one GitHub allows).
var ErrNoRepository = errors.New("no installation of the App has this repository")

// InstalledError is a FindRepository failure after the repository's installation was found
// (its token could not be made, say, on a suspended installation, or the repository could not
// be read): InstallationID is that installation, so that a caller whose answer must not tell
// who has a repository (the API, to a token of other installations) can answer as it would
// for one outside its reach.
type InstalledError struct {
	InstallationID int64
	Err            error
}

func (e *InstalledError) Error() string { return e.Err.Error() }

func (e *InstalledError) Unwrap() error { return e.Err }

var (
	ownerName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	repoName  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// FindRepository finds the installation that has repository owner/repo (GET
// /repos/{owner}/{repo}/installation, as the App) and the repository's id and current name
// (GET /repos/{owner}/{repo} with that installation's token): what an API request, which names
// a repository, needs to be recorded as a webhook's run is. ErrNoRepository (wrapped) when no
// installation has it.
func (a *App) FindRepository(ctx context.Context, owner, repo string) (Repository, error) {
	if !ownerName.MatchString(owner) || !repoName.MatchString(repo) || repo == "." || repo == ".." {
		return Repository{}, fmt.Errorf("%q/%q: %w", owner, repo, ErrNoRepository)
	}
	var inst Installation
	if err := a.appGet(ctx, "repos/"+url.PathEscape(owner)+"/"+url.PathEscape(repo)+"/installation", &inst); err != nil {
		if statusCode(err) == http.StatusNotFound {
			return Repository{}, fmt.Errorf("%s/%s: %w", owner, repo, ErrNoRepository)
		}
		return Repository{}, mark(fmt.Errorf("finding the installation of %s/%s: %w", owner, repo, err))
	}
	c, err := a.ForRepo(ctx, inst.ID, owner, repo)
	if err != nil {
		return Repository{}, &InstalledError{InstallationID: inst.ID, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.HTTPTimeout)
	defer cancel()
	r, _, err := c.gh.Repositories.Get(ctx, owner, repo)
	if err != nil {
		if statusCode(err) == http.StatusNotFound {
			return Repository{}, fmt.Errorf("%s/%s: %w", owner, repo, ErrNoRepository)
		}
		return Repository{}, &InstalledError{InstallationID: inst.ID, Err: mark(fmt.Errorf("reading repository %s/%s: %w", owner, repo, err))}
	}
	return Repository{InstallationID: inst.ID, ID: r.GetID(), Owner: r.GetOwner().GetLogin(), Name: r.GetName()}, nil
}

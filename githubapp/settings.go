package githubapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"
)

// MaxFileSize caps a file read through the contents API: above it GitHub leaves the content
// out of its answer, and no file frognano reads this way needs as much.
const MaxFileSize = 1 << 20

// ErrNotAFile is a path the contents API answers with something other than a file (a
// directory, a submodule).
var ErrNotAFile = errors.New("not a file")

// ErrFileTooLarge is a file above MaxFileSize, which the contents API does not send.
var ErrFileTooLarge = fmt.Errorf("larger than %d bytes", MaxFileSize)

// ErrNoMembersPermission is a team check the installation cannot make: reading a team's
// members needs the organisation permission members: read, which it has not granted.
var ErrNoMembersPermission = errors.New("the installation has not granted members: read, which reading a team's members needs")

// DefaultFile reads the file at path on the head of the repository's default branch (GET
// /repos/{owner}/{repo}/contents/{path} with no ref: never a branch of a pull request, never a
// patch). found is false when there is no such file (404).
func (c *Client) DefaultFile(ctx context.Context, path string) (data []byte, found bool, err error) {
	return readFile(ctx, c.gh, c.owner, c.repo, path)
}

// OrgFile reads the file at path on the default branch of the owner's repository name (the
// organisation's `.github` repository, for its defaults), with a token of its own that reaches
// only that repository and reads its contents. found is false when the installation cannot
// reach that repository (it was not installed there, or it does not exist) or the file is not
// there: an organisation without defaults.
func (c *Client) OrgFile(ctx context.Context, name, path string) (data []byte, found bool, err error) {
	if name == c.repo {
		return c.DefaultFile(ctx, path)
	}
	opts := &github.InstallationTokenOptions{Repositories: []string{name},
		Permissions: &github.InstallationPermissions{Contents: github.String("read"), Metadata: github.String("read")}}
	tokens, gh, err := c.app.tokenClient(c.installationID, opts)
	if err != nil {
		return nil, false, err
	}
	if ok, err := narrowToken(ctx, c, tokens); err != nil || !ok {
		return nil, false, err
	}
	return readFile(ctx, gh, c.owner, name, path)
}

// TeamMember reports whether user is an active member of the owner organisation's team slug
// (GET /orgs/{org}/teams/{team_slug}/memberships/{username}; a pending invitation is not a
// membership). It needs the organisation permission members: read (ErrNoMembersPermission).
func (c *Client) TeamMember(ctx context.Context, slug, user string) (bool, error) {
	if !c.grants.Has("members", "read") {
		return false, ErrNoMembersPermission
	}
	opts := &github.InstallationTokenOptions{Repositories: []string{c.repo},
		Permissions: &github.InstallationPermissions{Members: github.String("read"), Metadata: github.String("read")}}
	tokens, gh, err := c.app.tokenClient(c.installationID, opts)
	if err != nil {
		return false, err
	}
	if ok, err := narrowToken(ctx, c, tokens); err != nil {
		return false, err
	} else if !ok {
		return false, ErrNoMembersPermission
	}
	ctx, cancel := context.WithTimeout(ctx, c.app.cfg.HTTPTimeout)
	defer cancel()
	m, _, err := gh.Teams.GetTeamMembershipBySlug(ctx, c.owner, slug, user)
	if err != nil {
		if statusCode(err) == http.StatusNotFound {
			return false, nil
		}
		return false, mark(fmt.Errorf("reading %s's membership of team %s/%s: %w", user, c.owner, slug, err))
	}
	return m.GetState() == "active", nil
}

// narrowToken fetches a narrow client's first token and registers it for Redact. ok is false
// when GitHub refused the token (422: a repository the installation does not reach, or a
// permission it has not granted).
func narrowToken(ctx context.Context, c *Client, tokens *ghinstallation.Transport) (ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.app.cfg.HTTPTimeout)
	defer cancel()
	tok, err := tokens.Token(ctx)
	if err != nil {
		var he *ghinstallation.HTTPError
		if errors.As(err, &he) && he.Response != nil && he.Response.StatusCode == http.StatusUnprocessableEntity {
			return false, nil
		}
		return false, mark(fmt.Errorf("getting installation token: %w", tokenRefusal(c.installationID, err)))
	}
	RegisterSecret(tok)
	return true, nil
}

func readFile(ctx context.Context, gh *github.Client, owner, repo, path string) ([]byte, bool, error) {
	file, dir, _, err := gh.Repositories.GetContents(ctx, owner, repo, path, nil)
	if err != nil {
		if statusCode(err) == http.StatusNotFound {
			return nil, false, nil
		}
		return nil, false, mark(fmt.Errorf("reading %s of %s/%s: %w", path, owner, repo, err))
	}
	if file == nil || dir != nil || file.GetType() != "file" {
		return nil, true, fmt.Errorf("reading %s of %s/%s: %w", path, owner, repo, ErrNotAFile)
	}
	if file.GetSize() > MaxFileSize {
		return nil, true, fmt.Errorf("reading %s of %s/%s (%d bytes): %w", path, owner, repo, file.GetSize(), ErrFileTooLarge)
	}
	content, err := file.GetContent()
	if err != nil {
		return nil, true, fmt.Errorf("reading %s of %s/%s: decoding its content: %w", path, owner, repo, err)
	}
	return []byte(content), true, nil
}

// CommentURL is the address of comment id on issue or pull request number, as GitHub shows it
// (a pull request's conversation answers at /issues/ too).
func (c *Client) CommentURL(number int, id int64) string {
	return fmt.Sprintf("%s%s/%s/issues/%d#issuecomment-%d", c.app.endpoints.Git, c.owner, c.repo, number, id)
}

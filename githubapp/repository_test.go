package githubapp

import (
	"context"
	"errors"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
)

// FindRepository names the installation that has a repository and the repository's id and
// name as GitHub spells them; a repository no installation has, and a name GitHub would not
// allow (asked nothing), are ErrNoRepository.
func TestFindRepository(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "widgets", map[string]string{"README": "x\n"})
	gh.AddInstallation(7, repo)
	gh.AddRepo("acme", "uninstalled", map[string]string{"README": "x\n"})
	app, err := New(Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := app.FindRepository(ctx, "acme", "widgets")
	if want := (Repository{InstallationID: 7, ID: repo.ID, Owner: "acme", Name: "widgets"}); err != nil || got != want {
		t.Errorf("FindRepository = %+v, %v; want %+v", got, err, want)
	}
	for _, c := range []struct{ owner, repo string }{{"acme", "nothing"}, {"acme", "uninstalled"}} {
		if _, err := app.FindRepository(ctx, c.owner, c.repo); !errors.Is(err, ErrNoRepository) {
			t.Errorf("%s/%s: %v, want ErrNoRepository", c.owner, c.repo, err)
		}
	}
	before := len(gh.Requests())
	for _, c := range []struct{ owner, repo string }{{"acme", ".."}, {"ac/me", "x"}, {"-acme", "x"}, {"acme", "a b"}, {"", "x"}} {
		if _, err := app.FindRepository(ctx, c.owner, c.repo); !errors.Is(err, ErrNoRepository) {
			t.Errorf("%q/%q: %v, want ErrNoRepository", c.owner, c.repo, err)
		}
	}
	if after := len(gh.Requests()); after != before {
		t.Errorf("names GitHub does not allow made %d requests", after-before)
	}
}

package githubapp

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
)

func TestAppSelfAndInstallations(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	gh.AddInstallation(testInstallation, gh.AddRepo(testOwner, testRepo, map[string]string{"README": "hi\n"}))
	app, err := New(Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	info, err := app.Self(ctx)
	if err != nil {
		t.Fatalf("Self: %v", err)
	}
	if info.ID != gh.AppID || info.Slug != githubtest.AppSlug {
		t.Errorf("Self = %+v", info)
	}
	if m := MissingPermissions(info.Permissions, RequiredPermissions(true)); len(m) != 0 {
		t.Errorf("the fake App lacks %v", m)
	}
	list, err := app.Installations(ctx)
	if err != nil || len(list) != 1 || list[0].ID != testInstallation || list[0].Account.Login != testOwner {
		t.Fatalf("Installations = %+v, %v", list, err)
	}

	t.Run("WrongKeyIs401", func(t *testing.T) {
		other := githubtest.New(t) // same key, another App id
		bad, err := New(Config{AppID: other.AppID + 1, PrivateKey: gh.PrivateKey, URL: gh.URL})
		if err != nil {
			t.Fatal(err)
		}
		_, err = bad.Self(ctx)
		if HTTPStatus(err) != http.StatusUnauthorized {
			t.Fatalf("Self with a wrong App id: %v (status %d), want 401", err, HTTPStatus(err))
		}
	})
}

func TestMissingPermissionsAndEvents(t *testing.T) {
	t.Parallel()
	have := map[string]string{"contents": "read", "issues": "write", "metadata": "read"}
	got := MissingPermissions(have, RequiredPermissions(true))
	want := []string{"checks: none, needs write", "contents: read, needs write", "pull_requests: none, needs write"}
	if !slices.Equal(got, want) {
		t.Errorf("MissingPermissions = %q, want %q", got, want)
	}
	if got := MissingEvents([]string{"push"}, RequiredEvents()); !slices.Equal(got, []string{"check_suite", "issue_comment", "issues", "pull_request_review", "pull_request_review_comment"}) {
		t.Errorf("MissingEvents = %q", got)
	}
}

// TestConvertManifestGHES walks the manifest flow against the fake's GitHub Enterprise layout:
// the browser's form post to /organizations/ORG/settings/apps/new, the redirect with a code,
// and the conversion under /api/v3, which works once.
func TestConvertManifestGHES(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	manifest := `{"name":"frognano-ghe","url":"https://frognano.example/","redirect_url":"http://127.0.0.1:1/done",` +
		`"hook_attributes":{"url":"https://frognano.example/webhook"},"default_permissions":{"issues":"write"},"default_events":["issues"]}`
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(gh.URL+"/organizations/octo-org/settings/apps/new?state=s1", url.Values{"manifest": {manifest}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || loc.Query().Get("state") != "s1" {
		t.Fatalf("manifest post: %s, Location %q", resp.Status, resp.Header.Get("Location"))
	}
	code := loc.Query().Get("code")
	app, err := ConvertManifest(context.Background(), Config{URL: gh.URL}, code)
	if err != nil {
		t.Fatalf("ConvertManifest: %v", err)
	}
	if app.ID != gh.AppID || app.Slug != "frognano-ghe" || !strings.Contains(app.PEM, "PRIVATE KEY") || app.WebhookSecret == "" {
		t.Errorf("converted App = id %d slug %q", app.ID, app.Slug)
	}
	if n := gh.CountRequests("POST", "/app-manifests/*/conversions"); n != 1 {
		t.Errorf("%d conversion requests under /api/v3, want 1", n)
	}
	if _, err := ConvertManifest(context.Background(), Config{URL: gh.URL}, code); HTTPStatus(err) != http.StatusNotFound {
		t.Errorf("a second conversion of the same code: %v, want 404", err)
	}
}

// TestForRepoAsksForRequiredPermissions keeps the one list honest: the installation tokens
// ForRepo asks for carry exactly RequiredPermissions (with checks: read when check runs are
// off, since the installation grants it), with and without checks.
func TestForRepoAsksForRequiredPermissions(t *testing.T) {
	t.Parallel()
	for _, checks := range []bool{true, false} {
		gh := githubtest.New(t)
		gh.AddInstallation(testInstallation, gh.AddRepo(testOwner, testRepo, map[string]string{"README": "hi\n"}))
		app, err := New(Config{AppID: gh.AppID, PrivateKey: gh.PrivateKey, URL: gh.URL, ChecksWrite: checks})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.ForRepo(context.Background(), testInstallation, testOwner, testRepo); err != nil {
			t.Fatal(err)
		}
		reqs := gh.TokenRequests()
		want := RequiredPermissions(checks)
		if !checks {
			want["checks"] = "read" // granted, and read for a CI follow-up's failed checks
		}
		if len(reqs) != 1 || !maps.Equal(reqs[0].Permissions, want) {
			t.Errorf("checks %v: token requests %+v, want permissions %v", checks, reqs, want)
		}
	}
}

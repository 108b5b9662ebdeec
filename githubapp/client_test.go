package githubapp

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/internal/fault"
)

func TestForRepoRestrictsToken(t *testing.T) {
	t.Parallel()
	for _, checks := range []bool{false, true} {
		b := setup(t, func(c *Config) { c.ChecksWrite = checks })
		reqs := b.gh.TokenRequests()
		if len(reqs) != 1 {
			t.Fatalf("token requests = %d, want 1 (fetched eagerly, then cached)", len(reqs))
		}
		got := reqs[0]
		if got.InstallationID != testInstallation || !slices.Equal(got.Repositories, []string{testRepo}) {
			t.Errorf("token request = installation %d repos %v, want %d [%s]", got.InstallationID, got.Repositories, testInstallation, testRepo)
		}
		// checks: read without check runs, for a CI follow-up's failed checks.
		want := map[string]string{"contents": "write", "pull_requests": "write", "issues": "write", "metadata": "read", "checks": "read"}
		if checks {
			want["checks"] = "write"
		}
		if !maps.Equal(got.Permissions, want) {
			t.Errorf("permissions = %v, want %v", got.Permissions, want)
		}
	}
}

func TestForRepoFailsForRepoOutsideInstallation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.AddRepo(testOwner, "other", map[string]string{"a": "b"}) // exists, but not installed
	_, err := b.app.ForRepo(context.Background(), testInstallation, testOwner, "other")
	if err == nil {
		t.Fatal("ForRepo on a repository outside the installation succeeded")
	}
	if fault.IsTransient(err) {
		t.Errorf("IsTransient(%v) = true, want false (422 is permanent)", err)
	}
}

func TestPermission(t *testing.T) {
	t.Parallel()
	b := setup(t)
	roles := []string{"admin", "maintain", "write", "triage", "read", "none"}
	for _, role := range roles {
		b.gh.SetPermission(b.repo, "user-"+role, role)
	}
	tests := []struct{ user, want string }{
		{"user-admin", "admin"},
		{"user-maintain", "maintain"}, // permission says "write"; role_name keeps the truth
		{"user-write", "write"},
		{"user-triage", "triage"}, // permission says "read"
		{"user-read", "read"},
		{"user-none", "none"},
		{"stranger", "none"}, // 404
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			t.Parallel()
			got, err := b.client.Permission(context.Background(), tt.user)
			if err != nil || got != tt.want {
				t.Errorf("Permission(%q) = %q, %v; want %q", tt.user, got, err, tt.want)
			}
		})
	}
}

func TestIssue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	title, body, state, err := b.client.Issue(ctx, 12)
	if err != nil || title != "Add subtracts" || body != "calc.Add returns a-b." || state != "open" {
		t.Errorf("Issue(12) = %q, %q, %q, %v", title, body, state, err)
	}
	_, _, _, err = b.client.Issue(ctx, 999)
	if err == nil || fault.IsTransient(err) {
		t.Errorf("Issue(999) error = %v, want a permanent 404", err)
	}
}

func TestReactAndComments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for range 2 {
		if err := b.client.React(ctx, 12, "eyes"); err != nil {
			t.Fatalf("React: %v", err)
		}
	}
	if got := b.gh.Reactions(b.repo, 12); len(got) != 1 || got[0].Content != "eyes" {
		t.Errorf("reactions = %+v, want one eyes", got)
	}
	if err := b.client.React(ctx, 12, "party"); err == nil || fault.IsTransient(err) {
		t.Errorf("React(party) error = %v, want a permanent 422", err)
	}

	id, err := b.client.Comment(ctx, 12, "Working on it.")
	if err != nil {
		t.Fatalf("Comment: %v", err)
	}
	leak := b.gh.IssuedTokens()[0]
	if err := b.client.EditComment(ctx, id, "Done; token was "+leak); err != nil {
		t.Fatalf("EditComment: %v", err)
	}
	got := b.gh.Comments(b.repo, 12)
	want := githubtest.Comment{ID: id, Issue: 12, Body: "Done; token was [REDACTED]", History: []string{"Working on it."}, User: "frognano[bot]"}
	if len(got) != 1 || got[0].ID != want.ID || got[0].Body != want.Body || !slices.Equal(got[0].History, want.History) || got[0].User != want.User {
		t.Errorf("comments = %+v, want [%+v]", got, want)
	}
}

func TestRedirectToAnotherHostCarriesNoToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var mu sync.Mutex
	var sawAuth []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sawAuth = append(sawAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(elsewhere.Close)
	b.gh.FailNext("GET", issuePath, http.StatusMovedPermanently, map[string]string{"Location": elsewhere.URL + "/x"}, 1)
	if _, _, _, err := b.client.Issue(context.Background(), 12); err == nil {
		t.Error("Issue followed a redirect to another host")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sawAuth) != 0 {
		t.Errorf("the other host was contacted (Authorization %q)", sawAuth)
	}
}

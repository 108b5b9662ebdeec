package eval

import (
	"context"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
)

// TestSources finds a task's repository by repo_path (relative to the task file), under
// --repos as OWNER/NAME or OWNER__NAME, and by repo_url, cloned once over smart HTTP (git
// http-backend) into the cache; the checkout is at base_commit and the source is not written.
func TestSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, first := gittest.Repo(t, map[string]string{"a.txt": "one\n"})
	gittest.Write(t, src, map[string]string{"a.txt": "two\n"})
	gittest.Commit(t, src, "second")

	// A bare copy served by git http-backend.
	root := t.TempDir()
	gittest.Git(t, root, "clone", "-q", "--bare", src, filepath.Join(root, "acme.git"))
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)

	repos := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repos, "acme"), 0o755); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, repos, "clone", "-q", src, filepath.Join(repos, "acme", "widget"))
	gittest.Git(t, repos, "clone", "-q", src, filepath.Join(repos, "acme__gadget"))

	// The server listens on 127.0.0.1 over plain HTTP: the operator's two flags allow it.
	pol := newPolicy(nil, Options{TaskDir: filepath.Dir(src), Repos: repos, Allow: Allow{PlainURLs: true, LocalAddresses: true}})
	s := &sources{policy: pol, cache: filepath.Join(t.TempDir(), ".repos")}
	for _, tc := range []struct {
		name string
		task Task
		want string // a path the source must end with; "" for an error
	}{
		{"RepoPath", Task{RepoPath: filepath.Base(src)}, src},
		{"OwnerName", Task{Repo: "acme/widget"}, filepath.Join("acme", "widget")},
		{"OwnerUnderscores", Task{Repo: "acme/gadget"}, "acme__gadget"},
		{"URL", Task{RepoURL: srv.URL + "/acme.git"}, ".git"},
		{"NotUnderRepos", Task{Repo: "acme/none"}, ""},
		{"Nothing", Task{}, ""},
	} {
		got, err := s.source(ctx, tc.task)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: found %s", tc.name, got)
			}
			continue
		}
		if err != nil || !strings.HasSuffix(got, tc.want) {
			t.Errorf("%s: %q, %v", tc.name, got, err)
			continue
		}
		dst := filepath.Join(t.TempDir(), "co")
		if err := checkout(ctx, got, first, dst); err != nil {
			t.Errorf("%s: checkout: %v", tc.name, err)
			continue
		}
		if b, _ := os.ReadFile(filepath.Join(dst, "a.txt")); string(b) != "one\n" {
			t.Errorf("%s: the checkout holds %q, not base_commit's", tc.name, b)
		}
	}
	// The URL was cloned once: a second task reuses the cache.
	again, err := s.source(ctx, Task{RepoURL: srv.URL + "/acme.git"})
	if entries, _ := os.ReadDir(s.cache); err != nil || len(entries) != 1 || !strings.HasPrefix(again, s.cache) {
		t.Errorf("cache: %v, %d entries", err, len(entries))
	}
	if err := checkout(ctx, src, strings.Repeat("f", 40), filepath.Join(t.TempDir(), "co")); err == nil || !strings.Contains(err.Error(), "base_commit") {
		t.Errorf("a base_commit the repository lacks: %v", err)
	}
	if st := gittest.Git(t, src, "status", "--porcelain"); st != "" {
		t.Errorf("the source was written: %s", st)
	}
}

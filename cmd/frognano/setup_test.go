package main

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/doctor"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/githubapp/githubtest"
)

// setupRun starts `frognano setup` with args and returns the local page's address, the
// command's whole stdout once it ends, and its error.
type setupRun struct {
	page string
	out  chan string
	err  chan error
}

func startSetup(t *testing.T, args ...string) *setupRun {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	s := &setupRun{out: make(chan string, 1), err: make(chan error, 1)}
	go func() {
		err := run(ctx, append([]string{"setup"}, args...), func(string) string { return "" }, pw, io.Discard)
		pw.Close()
		s.err <- err
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("setup printed nothing: %v", <-s.err)
	}
	first := sc.Text()
	m := regexp.MustCompile(`open (http://127\.0\.0\.1:\d+)/ `).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("setup's first line does not name the page: %q", first)
	}
	s.page = m[1]
	go func() {
		var b strings.Builder
		b.WriteString(first + "\n")
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		s.out <- b.String()
	}()
	return s
}

// browse does what the operator's browser does: load the local page, submit its form to
// GitHub (which confirms at once in the fake) and follow the redirect back.
func browse(t *testing.T, page string) (*http.Response, string, string) {
	t.Helper()
	resp, err := http.Get(page + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	action := regexp.MustCompile(`action="([^"]+)"`).FindStringSubmatch(string(body))
	manifest := regexp.MustCompile(`name="manifest" value="([^"]+)"`).FindStringSubmatch(string(body))
	if action == nil || manifest == nil {
		t.Fatalf("the local page has no manifest form:\n%s", body)
	}
	resp, err = http.PostForm(html.UnescapeString(action[1]), url.Values{"manifest": {html.UnescapeString(manifest[1])}})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, html.UnescapeString(action[1]), string(done)
}

func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
			env[k] = strings.Trim(v, "'")
		}
	}
	return env
}

func checkMode0600(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
}

func TestSetupManifestFlow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, org, wantAction string
	}{
		{"GHESOrganization", "octo-org", "/organizations/octo-org/settings/apps/new?state="},
		{"UserAccount", "", "/settings/apps/new?state="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gh := githubtest.New(t)
			gh.AddInstallation(svcInstallationID, gh.AddRepo(svcOwner, svcRepo, map[string]string{"README.md": "hi\n"}))
			dir := t.TempDir()
			out := filepath.Join(dir, ".env")
			args := []string{"--github-url", gh.URL, "--webhook-url", "https://frognano.example.com/webhook", "--out", out, "--name", "frognano-ghe"}
			if tc.org != "" {
				args = append(args, "--org", tc.org)
			}
			s := startSetup(t, args...)
			resp, action, done := browse(t, s.page)
			if !strings.HasPrefix(action, gh.URL+tc.wantAction) {
				t.Errorf("the form posts to %q, want %s%s…", action, gh.URL, tc.wantAction)
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(done, "was created") {
				t.Fatalf("after GitHub's redirect: %d %s", resp.StatusCode, done)
			}
			if err := <-s.err; err != nil {
				t.Fatalf("setup: %v", err)
			}
			stdout := <-s.out

			// The manifest asked for exactly what the service needs.
			ms := gh.Manifests()
			if len(ms) != 1 {
				t.Fatalf("%d manifests posted, want 1", len(ms))
			}
			m := ms[0]
			perms, _ := m["default_permissions"].(map[string]any)
			for k, v := range githubapp.RequiredPermissions(true) {
				if perms[k] != v {
					t.Errorf("manifest permission %s = %v, want %s", k, perms[k], v)
				}
			}
			if len(perms) != len(githubapp.RequiredPermissions(true)) {
				t.Errorf("manifest permissions %v ask for more than the service needs", perms)
			}
			if ev, _ := m["default_events"].([]any); fmt.Sprint(ev) != fmt.Sprint(githubapp.ManifestEvents()) {
				t.Errorf("manifest events = %v", m["default_events"])
			}
			if hook, _ := m["hook_attributes"].(map[string]any); hook["url"] != "https://frognano.example.com/webhook" {
				t.Errorf("manifest hook = %v", m["hook_attributes"])
			}
			if r, _ := m["redirect_url"].(string); !strings.HasPrefix(r, s.page+"/callback") {
				t.Errorf("redirect_url = %q, want the local page", r)
			}
			if m["public"] != false {
				t.Errorf("the App would be public")
			}
			if n := gh.CountRequests("POST", "/app-manifests/*/conversions"); n != 1 {
				t.Errorf("%d conversions under /api/v3, want 1", n)
			}

			// Settings and key, mode 0600, and they work: doctor's GitHub checks pass with them.
			checkMode0600(t, out)
			env := readEnvFile(t, out)
			keyFile := env["GITHUB_APP_PRIVATE_KEY_FILE"]
			checkMode0600(t, keyFile)
			if key, _ := os.ReadFile(keyFile); string(key) != string(gh.PrivateKey) {
				t.Errorf("the key file does not hold the App's key")
			}
			if env["GITHUB_URL"] != gh.URL || env["GITHUB_APP_ID"] == "" || len(env["GITHUB_WEBHOOK_SECRET"]) < 20 {
				t.Errorf("settings = %v", env)
			}
			for _, secret := range []string{env["GITHUB_WEBHOOK_SECRET"], "PRIVATE KEY"} {
				if strings.Contains(stdout, secret) || strings.Contains(done, secret) {
					t.Errorf("setup showed a secret")
				}
			}
			if !strings.Contains(stdout, "/installations/new") || !strings.Contains(stdout, `label "frognano"`) || !strings.Contains(stdout, "frognano doctor") {
				t.Errorf("setup does not say what to do next:\n%s", stdout)
			}
			cfg, err := config.GitHubApp(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range doctor.GitHub(context.Background(), cfg) {
				if r.Status != doctor.Pass {
					t.Errorf("doctor with the written settings: %s %s: %s", r.Status, r.Name, r.Detail)
				}
			}
		})
	}
}

func TestSetupRefuses(t *testing.T) {
	t.Parallel()
	t.Run("WrongState", func(t *testing.T) {
		t.Parallel()
		gh := githubtest.New(t)
		out := filepath.Join(t.TempDir(), ".env")
		s := startSetup(t, "--github-url", gh.URL, "--webhook-url", "https://f.example/webhook", "--out", out, "--timeout", "3s")
		resp, err := http.Get(s.page + "/callback?code=abc&state=forged")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("a forged callback: %d, want 400", resp.StatusCode)
		}
		if err := <-s.err; err == nil || !strings.Contains(err.Error(), "no App was confirmed") {
			t.Errorf("setup ended with %v", err)
		}
		if n := gh.CountRequests("*", "/app-manifests/*/conversions"); n != 0 {
			t.Errorf("a forged callback reached GitHub")
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("settings written without an App")
		}
	})
	t.Run("ExistingFile", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(t.TempDir(), "frognano.env")
		os.WriteFile(out, []byte("keep me\n"), 0o600)
		err := run(context.Background(), []string{"setup", "--webhook-url", "https://f.example/webhook", "--out", out}, func(string) string { return "" }, io.Discard, io.Discard)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "never overwrites") {
			t.Errorf("setup over an existing file: %v", err)
		}
	})
	t.Run("NotLoopback", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(t.TempDir(), ".env")
		err := run(context.Background(), []string{"setup", "--webhook-url", "https://f.example/webhook", "--out", out, "--listen", "0.0.0.0:0"}, func(string) string { return "" }, io.Discard, io.Discard)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("setup listening beyond loopback: %v", err)
		}
	})
	t.Run("BadFlags", func(t *testing.T) {
		t.Parallel()
		err := run(context.Background(), []string{"setup", "--github-url", "http://ghe.example.com", "--listen", "0.0.0.0:0"}, func(string) string { return "" }, io.Discard, io.Discard)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "--webhook-url is required") || !strings.Contains(err.Error(), "must use https") {
			t.Errorf("setup with bad flags: %v", err)
		}
	})
}

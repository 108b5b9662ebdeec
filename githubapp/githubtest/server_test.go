package githubtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func signJWT(t *testing.T, key *rsa.PrivateKey, iss string, iat, exp time.Time) string {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	header := enc([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims := enc(fmt.Appendf(nil, `{"iss":%q,"iat":%d,"exp":%d}`, iss, iat.Unix(), exp.Unix()))
	sum := sha256.Sum256([]byte(header + "." + claims))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return header + "." + claims + "." + enc(sig)
}

func do(t *testing.T, method, url, auth, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out) // lists decode to nil; the status is what most checks need
	return resp.StatusCode, out
}

type fixture struct {
	s        *Server
	a, b     *Repo
	tokenURL string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	s := New(t)
	a := s.AddRepo("o", "a", map[string]string{"f.txt": "one\n"})
	b := s.AddRepo("o", "b", map[string]string{"g.txt": "two\n"})
	s.AddInstallation(9, a, b)
	s.AddIssue(a, 1, "t", "b")
	return &fixture{s: s, a: a, b: b, tokenURL: s.URL + "/api/v3/app/installations/9/access_tokens"}
}

func (f *fixture) token(t *testing.T, body string) string {
	t.Helper()
	now := time.Now()
	status, out := do(t, "POST", f.tokenURL, "Bearer "+signJWT(t, f.s.key, "424242", now.Add(-30*time.Second), now.Add(time.Minute)), body)
	if status != http.StatusCreated {
		t.Fatalf("access token: %d %v", status, out)
	}
	return out["token"].(string)
}

func TestAccessTokenNeedsAppJWT(t *testing.T) {
	t.Parallel()
	f := setup(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tests := []struct {
		name string
		auth string
		want int
	}{
		{"Missing", "", http.StatusUnauthorized},
		{"Garbage", "Bearer a.b.c", http.StatusUnauthorized},
		{"OtherKey", "Bearer " + signJWT(t, other, "424242", now, now.Add(time.Minute)), http.StatusUnauthorized},
		{"OtherApp", "Bearer " + signJWT(t, f.s.key, "1", now, now.Add(time.Minute)), http.StatusUnauthorized},
		{"Expired", "Bearer " + signJWT(t, f.s.key, "424242", now.Add(-5*time.Minute), now.Add(-time.Minute)), http.StatusUnauthorized},
		{"TooLong", "Bearer " + signJWT(t, f.s.key, "424242", now, now.Add(time.Hour)), http.StatusUnauthorized},
		{"Valid", "Bearer " + signJWT(t, f.s.key, "424242", now.Add(-30*time.Second), now.Add(time.Minute)), http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, out := do(t, "POST", f.tokenURL, tt.auth, "")
			if status != tt.want {
				t.Fatalf("status = %d (%v), want %d", status, out, tt.want)
			}
			if status == http.StatusCreated {
				if tok, _ := out["token"].(string); !regexp.MustCompile(`^ghs_[A-Za-z0-9]{36}$`).MatchString(tok) {
					t.Errorf("token %q is not shaped like GitHub's", tok)
				}
				if _, ok := out["expires_at"].(string); !ok {
					t.Errorf("no expires_at in %v", out)
				}
			} else if _, ok := out["message"].(string); !ok {
				t.Errorf("error %v lacks GitHub's message field", out)
			}
		})
	}
}

func TestTokenScope(t *testing.T) {
	t.Parallel()
	f := setup(t)
	api := f.s.URL + "/api/v3/repos/o/"
	onlyA := f.token(t, `{"repositories":["a"],"permissions":{"issues":"read"}}`)
	all := f.token(t, "")
	tests := []struct {
		name, method, url, auth, body string
		want                          int
	}{
		{"ScopedRepo", "GET", api + "a/issues/1", "token " + onlyA, "", 200},
		{"BearerWorksToo", "GET", api + "a/issues/1", "Bearer " + onlyA, "", 200},
		{"OtherRepoHidden", "GET", api + "b", "token " + onlyA, "", 404},
		{"ReadCannotWrite", "POST", api + "a/issues/1/comments", "token " + onlyA, `{"body":"x"}`, 403},
		{"NoPullsPermission", "GET", api + "a/pulls", "token " + onlyA, "", 403},
		{"AllRepos", "GET", api + "b", "token " + all, "", 200},
		{"Write", "POST", api + "a/issues/1/comments", "token " + all, `{"body":"x"}`, 201},
		{"UnknownToken", "GET", api + "a", "token ghs_" + strings.Repeat("x", 36), "", 401},
		{"NoToken", "GET", api + "a", "", "", 401},
		{"UnknownIssue", "GET", api + "a/issues/77", "token " + all, "", 404},
		{"RepoNotInInstallation", "POST", f.tokenURL, "jwt", `{"repositories":["zzz"]}`, 422},
		{"MorePermissionThanApp", "POST", f.tokenURL, "jwt", `{"permissions":{"administration":"write"}}`, 422},
		{"UnknownInstallation", "POST", strings.Replace(f.tokenURL, "/9/", "/10/", 1), "jwt", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			auth := tt.auth
			if auth == "jwt" {
				now := time.Now()
				auth = "Bearer " + signJWT(t, f.s.key, "424242", now, now.Add(time.Minute))
			}
			if status, out := do(t, tt.method, tt.url, auth, tt.body); status != tt.want {
				t.Errorf("%s %s = %d %v, want %d", tt.method, tt.url, status, out, tt.want)
			}
		})
	}
	reqs := f.s.TokenRequests()
	if len(reqs) < 2 || strings.Join(reqs[0].Repositories, ",") != "a" || reqs[0].Permissions["issues"] != "read" {
		t.Errorf("token requests not recorded with their restriction: %+v", reqs)
	}
}

// recordingTB captures Errorf so a test can check the fake fails the test it serves.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestUnexpectedRequestFailsTheTest(t *testing.T) {
	t.Parallel()
	rec := &recordingTB{TB: t}
	s := New(rec)
	for _, p := range []string{"/api/v3/gists", "/repos/o/a", "/api/v3/repos/o/a/merges"} {
		if status, _ := do(t, "GET", s.URL+p, "", ""); status != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, status)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.errs) != 3 {
		t.Errorf("recorded errors = %q, want 3", rec.errs)
	}
}

func TestFaultInjection(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := "token " + f.token(t, "")
	f.s.FailNext("GET", "/repos/*/a", http.StatusBadGateway, map[string]string{"Retry-After": "3"}, 2)
	for i, want := range []int{502, 502, 200} {
		if status, _ := do(t, "GET", f.s.URL+"/api/v3/repos/o/a", tok, ""); status != want {
			t.Errorf("request %d = %d, want %d", i, status, want)
		}
	}
	f.s.LoseNextResponse("POST", "/repos/o/a/issues/1/comments", http.StatusGatewayTimeout, 1)
	if status, _ := do(t, "POST", f.s.URL+"/api/v3/repos/o/a/issues/1/comments", tok, `{"body":"x"}`); status != http.StatusGatewayTimeout {
		t.Errorf("lost response status = %d", status)
	}
	if n := len(f.s.Comments(f.a, 1)); n != 1 {
		t.Errorf("the request whose answer was lost was not applied: %d comments", n)
	}
	if n := f.s.CountRequests("GET", "/repos/o/a"); n != 3 {
		t.Errorf("CountRequests = %d, want 3", n)
	}
}

func gitCmd(t *testing.T, dir, token string, args ...string) error {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	if token != "" {
		basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
		cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Basic "+basic)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %v: %w: %s", args, err, out)
	}
	return nil
}

func TestGitOverHTTPNeedsToken(t *testing.T) {
	t.Parallel()
	f := setup(t)
	url := f.s.URL + "/o/a.git"
	readOnly := f.token(t, `{"repositories":["a"],"permissions":{"contents":"read"}}`)
	writer := f.token(t, `{"repositories":["a"]}`)
	onlyB := f.token(t, `{"repositories":["b"]}`)
	root := t.TempDir()
	if err := gitCmd(t, root, "", "clone", url, "anon"); err == nil {
		t.Error("clone without a token succeeded")
	}
	if err := gitCmd(t, root, onlyB, "clone", url, "wrong"); err == nil {
		t.Error("clone with another repository's token succeeded")
	}
	if err := gitCmd(t, root, readOnly, "clone", url, "c"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "c")
	if err := gitCmd(t, dir, "", "commit", "--allow-empty", "-m", "x"); err != nil {
		t.Fatal(err)
	}
	if err := gitCmd(t, dir, readOnly, "push", url, "HEAD:refs/heads/feature"); err == nil {
		t.Error("push with a contents:read token succeeded")
	}
	if err := gitCmd(t, dir, writer, "push", url, "HEAD:refs/heads/feature"); err != nil {
		t.Fatal(err)
	}
	got := f.s.Branch(f.a, "feature")
	if got == nil || got.Message != "x" || got.Files["f.txt"] != "one\n" || len(got.Parents) != 1 {
		t.Errorf("pushed branch = %+v", got)
	}
}

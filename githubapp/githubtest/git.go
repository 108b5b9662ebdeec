package githubtest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Repo is a repository on the fake: a real bare git repository plus its issues, PRs and
// comments. Read its state through the Server's inspection methods.
type Repo struct {
	Owner, Name   string
	ID            int64
	DefaultBranch string
	Dir           string // the bare repository

	installationID int64
	issues         map[int]*issue
	permissions    map[string]string
	pulls          []*PR
	comments       []*Comment
	reactions      []Reaction
	checkRuns      map[int64]map[string]any
	archived       bool // refuse.go
	disabled       bool
	gitdb          *gitDBState      // gitdb.go
	prLabels       map[int][]string // labels added to pull requests (contents.go)
}

// FullName is "owner/name".
func (r *Repo) FullName() string { return r.Owner + "/" + r.Name }

// gitEnv isolates git from the machine's and the user's configuration.
func gitEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"}
}

func (s *Server) git(dir string, stdin []byte, args ...string) (string, error) {
	out, err := s.gitRaw(dir, stdin, args...)
	return strings.TrimRight(out, "\n"), err
}

// gitRaw runs git and returns its output untouched (file contents keep their last newline).
func (s *Server) gitRaw(dir string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(),
		"GIT_AUTHOR_NAME=Octo Cat", "GIT_AUTHOR_EMAIL=octocat@example.com", "GIT_AUTHOR_DATE=2024-01-01T00:00:00Z",
		"GIT_COMMITTER_NAME=Octo Cat", "GIT_COMMITTER_EMAIL=octocat@example.com", "GIT_COMMITTER_DATE=2024-01-01T00:00:00Z")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

func (s *Server) mustGit(dir string, args ...string) string {
	s.t.Helper()
	out, err := s.git(dir, nil, args...)
	if err != nil {
		s.t.Fatalf("fake GitHub: %v", err)
	}
	return out
}

// SymlinkPrefix marks a file of AddRepo as a symbolic link to the rest of the value.
const SymlinkPrefix = "symlink:"

// AddRepo creates owner/name with one commit holding files on branch "main", served at
// URL/owner/name.git. Clone and push require Basic auth "x-access-token:<installation token>".
// A value starting with SymlinkPrefix makes a symbolic link.
func (s *Server) AddRepo(owner, name string, files map[string]string) *Repo {
	s.t.Helper()
	work := filepath.Join(s.t.TempDir(), "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		s.t.Fatalf("fake GitHub: %v", err)
	}
	s.mustGit(work, "init", "--quiet", "-b", "main")
	for p, content := range files {
		full := filepath.Join(work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			s.t.Fatalf("fake GitHub: %v", err)
		}
		if target, ok := strings.CutPrefix(content, SymlinkPrefix); ok {
			if err := os.Symlink(target, full); err != nil {
				s.t.Fatalf("fake GitHub: %v", err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			s.t.Fatalf("fake GitHub: %v", err)
		}
	}
	s.mustGit(work, "add", "-A")
	s.mustGit(work, "commit", "--quiet", "--allow-empty", "-m", "Initial commit")
	bare := filepath.Join(s.root, owner, name+".git")
	s.mustGit(s.root, "clone", "--quiet", "--bare", work, bare)
	s.mustGit(bare, "config", "http.receivepack", "true")
	s.mustGit(bare, "remote", "remove", "origin")
	r := &Repo{
		Owner: owner, Name: name, ID: s.id(), DefaultBranch: "main", Dir: bare,
		issues: map[int]*issue{}, permissions: map[string]string{}, checkRuns: map[int64]map[string]any{},
	}
	s.mu.Lock()
	s.repos[r.FullName()] = r
	s.mu.Unlock()
	return r
}

// Repo returns owner/name, or nil.
func (s *Server) Repo(owner, name string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[owner+"/"+name]
}

// serveGit serves /owner/name.git/... through git http-backend, after checking the token:
// contents read to fetch, contents write to push.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	if len(parts) < 3 || !strings.HasSuffix(parts[1], ".git") {
		s.unexpected(w, r)
		return
	}
	repo := s.Repo(parts[0], strings.TrimSuffix(parts[1], ".git"))
	if repo == nil {
		http.Error(w, "Repository not found.", http.StatusNotFound)
		return
	}
	user, pass, ok := r.BasicAuth()
	s.mu.Lock()
	tk := s.tokens[pass]
	s.mu.Unlock()
	if !ok || user != "x-access-token" || tk == nil {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token.", http.StatusUnauthorized)
		return
	}
	push := r.URL.Query().Get("service") == "git-receive-pack" || strings.HasSuffix(r.URL.Path, "/git-receive-pack")
	level := "read"
	if push {
		level = "write"
	}
	if !tk.allows(repo, "contents", level) {
		http.Error(w, "Permission to "+repo.FullName()+".git denied to "+AppSlug+"[bot].", http.StatusForbidden)
		return
	}
	if s.refusePush(w, repo, push) {
		return
	}
	execPath, err := s.git("", nil, "--exec-path")
	if err != nil {
		s.t.Errorf("fake GitHub: %v", err)
		http.Error(w, "git unavailable", http.StatusInternalServerError)
		return
	}
	h := &cgi.Handler{
		Path: filepath.Join(execPath, "git-http-backend"),
		Env: append(gitEnv(), "GIT_PROJECT_ROOT="+s.root, "GIT_HTTP_EXPORT_ALL=1",
			"REMOTE_USER=x-access-token"),
	}
	h.ServeHTTP(w, r)
}

// Commit describes one commit in a fake repository.
type Commit struct {
	SHA                     string
	Parents                 []string
	AuthorName, AuthorEmail string
	CommitterName           string
	CommitterEmail          string
	Message                 string
	Files                   map[string]string // path -> content, the whole tree
	Tree                    string            // the tree's id
	// Verified: GitHub would show the commit as verified (made through the Git database
	// API without an author or committer, which GitHub signs).
	Verified bool
}

// Branch returns the commit at the tip of branch, or nil when the branch does not exist.
func (s *Server) Branch(repo *Repo, branch string) *Commit {
	s.t.Helper()
	sha, err := s.git(repo.Dir, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil {
		return nil
	}
	info := s.mustGit(repo.Dir, "show", "-s", "--format=%P%x00%an%x00%ae%x00%cn%x00%ce%x00%T%x00%B", sha)
	f := strings.SplitN(info, "\x00", 7)
	c := &Commit{SHA: sha, Parents: strings.Fields(f[0]), AuthorName: f[1], AuthorEmail: f[2], CommitterName: f[3],
		CommitterEmail: f[4], Tree: f[5], Message: strings.TrimSpace(f[6]), Files: map[string]string{}, Verified: s.Verified(repo, sha)}
	names := strings.Split(s.mustGit(repo.Dir, "ls-tree", "-r", "-z", "--name-only", sha), "\x00")
	sort.Strings(names)
	for _, n := range names {
		if n != "" {
			content, err := s.gitRaw(repo.Dir, nil, "cat-file", "blob", sha+":"+n)
			if err != nil {
				s.t.Fatalf("fake GitHub: %v", err)
			}
			c.Files[n] = content
		}
	}
	return c
}

// revParse resolves a ref in repo, or "" when it does not exist.
func (s *Server) revParse(repo *Repo, ref string) string {
	sha, err := s.git(repo.Dir, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return sha
}

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

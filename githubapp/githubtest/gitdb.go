package githubtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// This file fakes GitHub's Git database API (blobs, trees, commits, references) the way GitHub
// answers it (https://docs.github.com/rest/git), writing real objects into the repository's bare
// git directory with git itself (hash-object -w, update-index on a temporary index, write-tree,
// commit-tree, update-ref). A commit made through it without an author or committer is one
// GitHub signs: the fake marks it verified ("valid"), as GitHub reports it in `verification`.
// RequireSignedCommits adds a ruleset's "Require signed commits" rule on a pattern of branches,
// which refuses pushes over git and reference updates to an unverified commit.

// MaxBlobSize is what GitHub's blob API takes per file (100 MB, "This API supports blobs up to
// 100 megabytes in size").
const MaxBlobSize = 100 << 20

// gitDBState is what the fake knows of a repository's API-made commits and its rules.
type gitDBState struct {
	verified     map[string]bool // commit -> GitHub signed it (made by the API with no identity)
	signedRefs   string          // path.Match pattern of branches whose commits must be verified
	pushRule     PushRefusal     // RefusePushes' rule, which the reference API applies too
	requestedFor map[int][]string
}

func (r *Repo) db() *gitDBState {
	if r.gitdb == nil {
		r.gitdb = &gitDBState{verified: map[string]bool{}, requestedFor: map[int][]string{}}
	}
	return r.gitdb
}

func (s *Server) gitDBRoutes() {
	p := apiPrefix + "/repos/{owner}/{repo}"
	m := s.api
	m.HandleFunc("POST "+p+"/git/blobs", s.handleCreateBlob)
	m.HandleFunc("GET "+p+"/git/blobs/{sha}", s.handleGetBlob)
	m.HandleFunc("POST "+p+"/git/trees", s.handleCreateTree)
	m.HandleFunc("POST "+p+"/git/commits", s.handleCreateCommit)
	m.HandleFunc("GET "+p+"/git/commits/{sha}", s.handleGetCommit)
	m.HandleFunc("GET "+p+"/git/refs/{ref...}", s.handleListRefs)
	m.HandleFunc("POST "+p+"/git/refs", s.handleCreateRef)
	m.HandleFunc("PATCH "+p+"/git/refs/{ref...}", s.handleUpdateRef)
	m.HandleFunc("POST "+p+"/pulls/{pull_number}/requested_reviewers", s.handleRequestReviewers)
	m.HandleFunc("GET "+apiPrefix+"/users/{username}", s.handleGetUserByLogin)
}

// RequireSignedCommits adds a ruleset's "Require signed commits" rule on the branches matching
// pattern (path.Match syntax, e.g. "frognano/*"): a push over git to such a branch is refused as
// GitHub refuses it (GH013, "Commits must have verified signatures."), and so is a reference
// created or updated through the API to a commit that brings in an unverified commit (409).
// An empty pattern removes the rule.
func (s *Server) RequireSignedCommits(repo *Repo, pattern string) {
	s.t.Helper()
	s.mu.Lock()
	repo.db().signedRefs = pattern
	s.mu.Unlock()
	hook := filepath.Join(repo.Dir, "hooks", "pre-receive")
	if pattern == "" {
		if err := os.Remove(hook); err != nil && !os.IsNotExist(err) {
			s.t.Fatalf("fake GitHub: %v", err)
		}
		return
	}
	rules := s.URL + "/" + repo.FullName() + "/rules?ref="
	// Nothing pushed over git is signed by GitHub: every push to a matching branch is refused.
	script := "#!/bin/sh\n# The fake's GitHub: a ruleset requires signed commits on " + pattern + ".\nrc=0\n" +
		"while read old new ref; do\ncase \"${ref#refs/heads/}\" in\n" + pattern + ")\n" +
		"enc=$(printf %s \"$ref\" | sed 's|/|%2F|g')\n{\n" +
		`echo "error: GH013: Repository rule violations found for $ref."
echo "Review all repository rules at ` + rules + `$enc"
echo ""
echo "- Commits must have verified signatures."
echo "  Found 1 violation:"
echo ""
echo "  $new"
echo ""` + "\n} >&2\nrc=1;;\nesac\ndone\nexit $rc\n"
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		s.t.Fatalf("fake GitHub: %v", err)
	}
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		s.t.Fatalf("fake GitHub: %v", err)
	}
}

// Verified reports whether GitHub would show commit sha of repo as verified: the fake made it
// through the API without an author or committer.
func (s *Server) Verified(repo *Repo, sha string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return repo.db().verified[sha]
}

// RequestedReviewers returns the logins requested as reviewers of pull request number.
func (s *Server) RequestedReviewers(repo *Repo, number int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), repo.db().requestedFor[number]...)
}

// UserID is the numeric id the fake gives login (GET /users/{login}, permissions, payloads).
func (s *Server) UserID(login string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userIDLocked(login)
}

func (s *Server) userIDLocked(login string) int64 {
	if s.users == nil {
		s.users = map[string]int64{}
	}
	key := strings.ToLower(login)
	if id, ok := s.users[key]; ok {
		return id
	}
	s.nextID++
	s.users[key] = s.nextID
	return s.nextID
}

var hexSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// objectType is the type of object sha in repo ("blob", "tree", "commit"), or "" when there is none.
func (s *Server) objectType(repo *Repo, sha string) string {
	if !hexSHA.MatchString(sha) {
		return ""
	}
	t, err := s.git(repo.Dir, nil, "cat-file", "-t", sha)
	if err != nil {
		return ""
	}
	return t
}

// writeGitDBError answers like GitHub's Git database API: its message, its documentation page.
func writeGitDBError(w http.ResponseWriter, status int, message, doc string) {
	writeJSON(w, status, map[string]any{"message": message, "documentation_url": "https://docs.github.com/rest/git/" + doc, "status": fmt.Sprint(status)})
}

func (s *Server) handleCreateBlob(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "contents", "write")
	if repo == nil {
		return
	}
	var req struct {
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.Content == nil {
		writeValidation(w, "Blob", "content", "missing_field", "")
		return
	}
	var data []byte
	switch req.Encoding {
	case "", "utf-8", "utf8":
		data = []byte(*req.Content)
	case "base64":
		var err error
		if data, err = base64.StdEncoding.DecodeString(strings.ReplaceAll(*req.Content, "\n", "")); err != nil {
			writeValidation(w, "Blob", "content", "invalid", "content is not valid Base64")
			return
		}
	default:
		writeValidation(w, "Blob", "encoding", "invalid", "encoding must be utf-8 or base64")
		return
	}
	if len(data) > MaxBlobSize {
		writeGitDBError(w, http.StatusUnprocessableEntity, "Blob is too large; the maximum size is 100 MB", "blobs#create-a-blob")
		return
	}
	sha, err := s.git(repo.Dir, data, "hash-object", "-w", "-t", "blob", "--stdin")
	if err != nil {
		s.t.Errorf("fake GitHub: %v", err)
		writeError(w, http.StatusInternalServerError, "Server Error")
		return
	}
	u := s.apiURL("/repos/%s/git/blobs/%s", repo.FullName(), sha)
	w.Header().Set("Location", u)
	writeJSON(w, http.StatusCreated, map[string]any{"url": u, "sha": sha})
}

func (s *Server) handleGetBlob(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "contents", "read")
	if repo == nil {
		return
	}
	sha := r.PathValue("sha")
	if s.objectType(repo, sha) != "blob" {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	data, err := s.gitRaw(repo.Dir, nil, "cat-file", "blob", sha)
	if err != nil {
		s.t.Errorf("fake GitHub: %v", err)
		writeError(w, http.StatusInternalServerError, "Server Error")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"sha": sha, "node_id": "B_" + sha[:8], "size": len(data), "url": s.apiURL("/repos/%s/git/blobs/%s", repo.FullName(), sha),
		"content": githubBase64(data), "encoding": "base64",
	})
}

// validTreePath is what GitHub accepts as a tree entry's path: relative, no empty, "." or ".."
// component, and no ".git" (answered "tree.path contains a malformed path component").
func validTreePath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}

type treeEntryReq struct {
	Path    string          `json:"path"`
	Mode    string          `json:"mode"`
	Type    string          `json:"type"`
	SHA     json.RawMessage `json:"sha"` // a string, or null to delete the path
	Content *string         `json:"content"`
}

func (s *Server) handleCreateTree(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "contents", "write")
	if repo == nil {
		return
	}
	var req struct {
		BaseTree string         `json:"base_tree"`
		Tree     []treeEntryReq `json:"tree"`
	}
	if !decode(w, r, &req) {
		return
	}
	if req.Tree == nil {
		writeValidation(w, "Tree", "tree", "missing_field", "")
		return
	}
	if req.BaseTree != "" && s.objectType(repo, req.BaseTree) != "tree" {
		writeGitDBError(w, http.StatusUnprocessableEntity, "base_tree is not a valid tree oid", "trees#create-a-tree")
		return
	}
	tmp, err := os.MkdirTemp("", "fake-github-index-")
	if err != nil {
		s.t.Errorf("fake GitHub: %v", err)
		writeError(w, http.StatusInternalServerError, "Server Error")
		return
	}
	defer os.RemoveAll(tmp)
	index := "GIT_INDEX_FILE=" + filepath.Join(tmp, "index")
	run := func(stdin []byte, args ...string) (string, error) {
		return s.gitEnvRun(repo.Dir, []string{index}, stdin, args...)
	}
	if req.BaseTree != "" {
		if _, err := run(nil, "read-tree", req.BaseTree); err != nil {
			s.t.Errorf("fake GitHub: %v", err)
			writeError(w, http.StatusInternalServerError, "Server Error")
			return
		}
	}
	existing := map[string]bool{}
	if req.BaseTree != "" {
		out, _ := s.gitRaw(repo.Dir, nil, "ls-tree", "-r", "-z", "--name-only", req.BaseTree)
		for _, p := range strings.Split(out, "\x00") {
			existing[p] = true
		}
	}
	var dels, adds bytes.Buffer
	var contents []string
	var inline []treeEntryReq
	for i, e := range req.Tree {
		field := fmt.Sprintf("tree[%d]", i)
		if !validTreePath(e.Path) {
			writeGitDBError(w, http.StatusUnprocessableEntity, field+".path contains a malformed path component", "trees#create-a-tree")
			return
		}
		switch e.Mode {
		case "100644", "100755", "120000", "040000", "160000":
		default:
			writeGitDBError(w, http.StatusUnprocessableEntity, field+".mode is not a valid mode", "trees#create-a-tree")
			return
		}
		want := map[string]string{"100644": "blob", "100755": "blob", "120000": "blob", "040000": "tree", "160000": "commit"}[e.Mode]
		if e.Type != "" && e.Type != want {
			writeGitDBError(w, http.StatusUnprocessableEntity, field+".type does not match its mode", "trees#create-a-tree")
			return
		}
		isNull := len(e.SHA) == 0 || string(e.SHA) == "null"
		switch {
		case e.Content != nil && !isNull:
			writeGitDBError(w, http.StatusUnprocessableEntity, field+": use either sha or content, not both", "trees#create-a-tree")
			return
		case e.Content != nil:
			if want != "blob" {
				writeGitDBError(w, http.StatusUnprocessableEntity, field+".content is only for blobs", "trees#create-a-tree")
				return
			}
			// Written below with the others in one hash-object.
			f := filepath.Join(tmp, fmt.Sprintf("content-%d", i))
			if err := os.WriteFile(f, []byte(*e.Content), 0o600); err != nil {
				s.t.Errorf("fake GitHub: %v", err)
				writeError(w, http.StatusInternalServerError, "Server Error")
				return
			}
			contents = append(contents, f)
			inline = append(inline, e)
		case isNull:
			// Deleting: GitHub "returns an error if you try to delete a file that does not exist".
			if !existing[e.Path] {
				writeGitDBError(w, http.StatusUnprocessableEntity, field+".path does not exist in base_tree, so it cannot be deleted", "trees#create-a-tree")
				return
			}
			fmt.Fprintf(&dels, "0 %s\t%s\x00", strings.Repeat("0", 40), e.Path)
		default:
			var sha string
			if err := json.Unmarshal(e.SHA, &sha); err != nil || (want != "commit" && s.objectType(repo, sha) != want) || (want == "commit" && !hexSHA.MatchString(sha)) {
				writeGitDBError(w, http.StatusUnprocessableEntity, "GitRPC::BadObjectState", "trees#create-a-tree")
				return
			}
			fmt.Fprintf(&adds, "%s %s\t%s\x00", e.Mode, sha, e.Path)
		}
	}
	if len(contents) > 0 {
		out, err := run([]byte(strings.Join(contents, "\n")+"\n"), "hash-object", "-w", "--no-filters", "--stdin-paths")
		shas := strings.Fields(out)
		if err != nil || len(shas) != len(inline) {
			s.t.Errorf("fake GitHub: hash-object: %v", err)
			writeError(w, http.StatusInternalServerError, "Server Error")
			return
		}
		for i, e := range inline {
			fmt.Fprintf(&adds, "%s %s\t%s\x00", e.Mode, shas[i], e.Path)
		}
	}
	if _, err := run(append(dels.Bytes(), adds.Bytes()...), "update-index", "-z", "--replace", "--index-info"); err != nil {
		writeGitDBError(w, http.StatusUnprocessableEntity, "GitRPC::BadObjectState", "trees#create-a-tree")
		return
	}
	sha, err := run(nil, "write-tree")
	if err != nil {
		s.t.Errorf("fake GitHub: %v", err)
		writeError(w, http.StatusInternalServerError, "Server Error")
		return
	}
	writeJSON(w, http.StatusCreated, s.treeJSON(repo, sha))
}

// treeJSON is GET/POST git/trees' answer: the tree's own entries (not recursive).
func (s *Server) treeJSON(repo *Repo, sha string) map[string]any {
	entries := []any{}
	out, _ := s.gitRaw(repo.Dir, nil, "ls-tree", "-z", "-l", sha)
	for _, rec := range strings.Split(out, "\x00") {
		meta, name, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			continue
		}
		e := map[string]any{"path": name, "mode": f[0], "type": f[1], "sha": f[2],
			"url": s.apiURL("/repos/%s/git/%ss/%s", repo.FullName(), f[1], f[2])}
		if f[1] == "blob" {
			var n int
			fmt.Sscan(f[3], &n)
			e["size"] = n
		}
		entries = append(entries, e)
	}
	return map[string]any{"sha": sha, "url": s.apiURL("/repos/%s/git/trees/%s", repo.FullName(), sha), "tree": entries, "truncated": false}
}

// gitEnvRun is git with extra environment variables.
func (s *Server) gitEnvRun(dir string, env []string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimRight(string(out), "\n"), nil
}

type identityReq struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

func (s *Server) handleCreateCommit(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "contents", "write")
	if repo == nil {
		return
	}
	var req struct {
		Message   *string      `json:"message"`
		Tree      string       `json:"tree"`
		Parents   []string     `json:"parents"`
		Author    *identityReq `json:"author"`
		Committer *identityReq `json:"committer"`
		Signature *string      `json:"signature"`
	}
	if !decode(w, r, &req) {
		return
	}
	switch {
	case req.Message == nil:
		writeValidation(w, "Commit", "message", "missing_field", "")
		return
	case s.objectType(repo, req.Tree) != "tree":
		writeGitDBError(w, http.StatusUnprocessableEntity, "Tree SHA does not exist", "commits#create-a-commit")
		return
	}
	args := []string{"commit-tree", req.Tree}
	for _, p := range req.Parents {
		if s.objectType(repo, p) != "commit" {
			writeGitDBError(w, http.StatusUnprocessableEntity, "Parent SHA does not exist or is not a commit object", "commits#create-a-commit")
			return
		}
		args = append(args, "-p", p)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	// GitHub: no author is the token's own user (for an App, its bot), and no committer is the
	// author, except that a commit GitHub signs has GitHub as its committer.
	signed := req.Author == nil && req.Committer == nil && req.Signature == nil
	author := identityReq{Name: AppSlug + "[bot]", Email: fmt.Sprintf("%d+%s[bot]@users.noreply.github.com", botUserID, AppSlug), Date: now}
	if req.Author != nil {
		if req.Author.Name == "" || req.Author.Email == "" {
			writeValidation(w, "Commit", "author", "invalid", "author needs a name and an email")
			return
		}
		author = *req.Author
	}
	committer := author
	if signed {
		committer = identityReq{Name: "GitHub", Email: "noreply@github.com", Date: now}
	}
	if req.Committer != nil {
		if req.Committer.Name == "" || req.Committer.Email == "" {
			writeValidation(w, "Commit", "committer", "invalid", "committer needs a name and an email")
			return
		}
		committer = *req.Committer
	}
	for _, id := range []*identityReq{&author, &committer} {
		if id.Date == "" {
			id.Date = now
		}
	}
	env := []string{"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email, "GIT_AUTHOR_DATE=" + author.Date,
		"GIT_COMMITTER_NAME=" + committer.Name, "GIT_COMMITTER_EMAIL=" + committer.Email, "GIT_COMMITTER_DATE=" + committer.Date}
	// commit-tree stores the message as it is given, as GitHub does.
	sha, err := s.gitEnvRun(repo.Dir, env, []byte(*req.Message), args...)
	if err != nil {
		s.t.Errorf("fake GitHub: %v", err)
		writeError(w, http.StatusInternalServerError, "Server Error")
		return
	}
	s.mu.Lock()
	if signed {
		repo.db().verified[sha] = true
	}
	s.mu.Unlock()
	u := s.apiURL("/repos/%s/git/commits/%s", repo.FullName(), sha)
	w.Header().Set("Location", u)
	writeJSON(w, http.StatusCreated, s.gitCommitJSON(repo, sha))
}

func (s *Server) handleGetCommit(w http.ResponseWriter, r *http.Request) {
	repo := s.authRepo(w, r, "contents", "read")
	if repo == nil {
		return
	}
	sha := r.PathValue("sha")
	if s.objectType(repo, sha) != "commit" {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, s.gitCommitJSON(repo, sha))
}

// gitCommitJSON is the git-commit schema of the REST API, with its verification object.
func (s *Server) gitCommitJSON(repo *Repo, sha string) map[string]any {
	info := s.mustGit(repo.Dir, "show", "-s", "--format=%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B", sha)
	f := strings.SplitN(info, "\x00", 9)
	parents := []any{}
	for _, p := range strings.Fields(f[1]) {
		parents = append(parents, map[string]any{"sha": p, "url": s.apiURL("/repos/%s/git/commits/%s", repo.FullName(), p),
			"html_url": fmt.Sprintf("%s/%s/commit/%s", s.URL, repo.FullName(), p)})
	}
	raw, _ := s.gitRaw(repo.Dir, nil, "cat-file", "commit", sha)
	msg, _ := s.gitRaw(repo.Dir, nil, "show", "-s", "--format=%B", sha)
	verification := map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil}
	if s.Verified(repo, sha) {
		verification = map[string]any{"verified": true, "reason": "valid", "payload": raw, "verified_at": f[7],
			"signature": "-----BEGIN PGP SIGNATURE-----\n\nwsBcBAABCAAQBQJ (the fake GitHub's)\n-----END PGP SIGNATURE-----\n"}
	}
	return map[string]any{
		"sha": sha, "node_id": "C_" + sha[:8], "url": s.apiURL("/repos/%s/git/commits/%s", repo.FullName(), sha),
		"html_url":  fmt.Sprintf("%s/%s/commit/%s", s.URL, repo.FullName(), sha),
		"author":    map[string]any{"name": f[2], "email": f[3], "date": f[4]},
		"committer": map[string]any{"name": f[5], "email": f[6], "date": f[7]},
		"tree":      map[string]any{"sha": f[0], "url": s.apiURL("/repos/%s/git/trees/%s", repo.FullName(), f[0])},
		"message":   strings.TrimSuffix(msg, "\n"), "parents": parents, "verification": verification,
	}
}

// githubBase64 is data in base64 as GitHub's API gives a blob's or a file's content: a line
// break every 60 characters, and one at the end.
func githubBase64(data string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(data))
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60] + "\n")
		enc = enc[60:]
	}
	b.WriteString(enc + "\n")
	return b.String()
}

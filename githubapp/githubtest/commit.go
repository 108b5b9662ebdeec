package githubtest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
)

// PushCommit adds a commit by "Octo Cat" on top of branch that sets path to content, as a
// reviewer pushing to a pull request's branch would, and returns its id.
func (s *Server) PushCommit(repo *Repo, branch, path, content, message string) string {
	s.t.Helper()
	parent := s.mustGit(repo.Dir, "rev-parse", "--verify", "refs/heads/"+branch)
	index := "GIT_INDEX_FILE=" + filepath.Join(s.t.TempDir(), "index")
	run := func(stdin string, args ...string) string {
		s.t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo.Dir
		cmd.Env = append(gitEnv(), index,
			"GIT_AUTHOR_NAME=Octo Cat", "GIT_AUTHOR_EMAIL=octocat@example.com",
			"GIT_COMMITTER_NAME=Octo Cat", "GIT_COMMITTER_EMAIL=octocat@example.com")
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			s.t.Fatalf("fake GitHub: git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	blob := run(content, "hash-object", "-w", "--stdin")
	run("", "read-tree", parent)
	run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	tree := run("", "write-tree")
	commit := run(message, "commit-tree", tree, "-p", parent, "-F", "-")
	run("", "update-ref", "refs/heads/"+branch, commit, parent)
	return commit
}

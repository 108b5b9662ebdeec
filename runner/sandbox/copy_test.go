package sandbox_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/sandbox"
)

// treeHash fingerprints a directory: every path, type, mode, size, mtime, content and link target.
func treeHash(t testing.TB, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %v %d %d\n", rel, info.Mode(), info.Size(), info.ModTime().UnixNano())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "-> %s\n", target)
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("hashing %s: %v", dir, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestCopyRepo(t *testing.T) {
	t.Parallel()
	repo := makeRepo(t)
	before := treeHash(t, repo)
	sb := readySandbox(t, testConfig(), repo)

	t.Run("GitConfigHasNoRemoteNorCredential", func(t *testing.T) {
		r := bash(t, sb, "cat .git/config; echo ---; git remote -v; git config --list --show-origin")
		if r.code != 0 {
			t.Fatalf("reading the config failed: %s", r.raw)
		}
		low := strings.ToLower(r.stdout)
		for _, bad := range []string{canary, "remote", "credential", "extraheader", "insteadof", "include", "hookspath", "fsmonitor", "url", "github.example.invalid"} {
			if strings.Contains(low, strings.ToLower(bad)) {
				t.Errorf(".git/config inside the sandbox mentions %q:\n%s", bad, r.stdout)
			}
		}
	})
	t.Run("NoHostGitState", func(t *testing.T) {
		r := bash(t, sb, "ls -A .git/hooks; ls .git/FETCH_HEAD .git/logs 2>&1 >/dev/null | wc -l; grep -r -l -F "+canary+" .git || true")
		if r.stdout != "2\n" {
			t.Errorf("hooks, FETCH_HEAD, logs or the token reached the sandbox's .git: %q", r.stdout)
		}
	})
	t.Run("RepositoryUsable", func(t *testing.T) {
		r := bash(t, sb, "git log --format=%s && git status --porcelain && git diff --stat HEAD && cat pkg/calc.py")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "initial\n") || !strings.Contains(r.stdout, "return a - b") {
			t.Errorf("git in the sandbox: %s", r.raw)
		}
	})
	t.Run("OwnedBySandboxUser", func(t *testing.T) {
		r := bash(t, sb, "stat -c %u:%g /workspace; find /workspace \\( ! -user 1000 -o ! -group 1000 \\) -print")
		if r.code != 0 || r.stdout != "1000:1000\n" {
			t.Errorf("files not owned by 1000:1000 (exit %d):\n%s", r.code, r.stdout)
		}
	})
	t.Run("ModesAndSymlinks", func(t *testing.T) {
		r := bash(t, sb, "stat -c '%n %a' run.sh README.md; readlink calc-link.py outside-link; head -1 calc-link.py")
		want := "run.sh 755\nREADME.md 644\npkg/calc.py\n/etc/passwd\ndef add(a, b):\n"
		if r.stdout != want {
			t.Errorf("got\n%s\nwant\n%s", r.stdout, want)
		}
	})
	t.Run("HostCheckoutUnchanged", func(t *testing.T) {
		// The agent writes inside; the host copy must not move.
		bash(t, sb, "echo changed > README.md && git add -A && rm -rf .git/objects/info")
		if after := treeHash(t, repo); after != before {
			t.Errorf("the host checkout changed during the copy and the sandbox's edits")
		}
	})
}

func TestCopyRepoRefusesGitFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, testConfig(), "agent")
	if err := sb.CopyRepo(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("CopyRepo of a worktree: err = %v, want a refusal", err)
	}
}

func TestSanitizedGitConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"Empty", "", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n"},
		{"DropsEverything", "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\thooksPath = /x\n\tfsmonitor = sh\n[remote \"origin\"]\n\turl = https://t:ghs_x@h/r\n[credential]\n\thelper = store\n[include]\n\tpath = /etc/x\n",
			"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n"},
		{"KeepsSHA256", "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n",
			"[core]\n\trepositoryformatversion = 1\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n[extensions]\n\tobjectformat = sha256\n"},
		{"SHA256ForcesVersion1", "[extensions] objectformat = sha256\n",
			"[core]\n\trepositoryformatversion = 1\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n[extensions]\n\tobjectformat = sha256\n"},
		{"IgnoresUnknownValues", "[core]\n\trepositoryformatversion = 7\n[extensions]\n\tobjectformat = \"sha256\\n[remote]\"\n",
			"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := string(sandbox.SanitizedGitConfig([]byte(tt.in))); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// FuzzSanitizedGitConfig: whatever the host config holds, the result is one of the few
// fixed shapes and never carries text from the input beyond the two allowed values.
func FuzzSanitizedGitConfig(f *testing.F) {
	for _, s := range []string{
		"", "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n",
		"[remote \"origin\"]\n\turl = https://x-access-token:ghs_abc@github.com/o/r\n",
		"[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eA==\n",
		"[core]repositoryformatversion=1\n[extensions]objectformat=sha1\n[include]path=../x",
		"[core\n= = =\n[]\n\x00\xff",
	} {
		f.Add([]byte(s))
	}
	allowed := map[string]bool{}
	for _, v := range []string{"0", "1"} {
		for _, ext := range []string{"", "[extensions]\n\tobjectformat = sha1\n", "[extensions]\n\tobjectformat = sha256\n"} {
			allowed["[core]\n\trepositoryformatversion = "+v+"\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n"+ext] = true
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := string(sandbox.SanitizedGitConfig(in))
		if !allowed[out] {
			t.Fatalf("unexpected config for %q:\n%s", in, out)
		}
	})
}

// TestCopyRepoOnlyTracked: local secrets stay local. A checkout with an ignored .env, ignored
// build output, untracked files, a local edit, a deleted file and a tracked path that now leads
// through a symbolic link out of the checkout: only what git tracks reaches the sandbox, with
// its working-tree content, and nothing outside the checkout is read.
func TestCopyRepoOnlyTracked(t *testing.T) {
	t.Parallel()
	repo := makeRepo(t)
	outside := t.TempDir()
	secret := "local-secret-" + canary
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write(".gitignore", ".env\nbuild/\n")
	write("data/config.txt", "tracked\n")
	write("gone.txt", "deleted in the working tree\n")
	git("add", ".gitignore", "data/config.txt", "gone.txt")
	git("commit", "-q", "-m", "ignore rules")
	write(".env", "API_KEY="+secret+"\n")
	write("build/out.txt", secret+"\n")
	write("notes.txt", "untracked "+secret+"\n")
	write("scratch/keys.pem", secret+"\n")
	write("README.md", "# demo, edited locally\n")
	if err := os.Remove(filepath.Join(repo, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	// data/ becomes a link out of the checkout: the tracked data/config.txt would now read
	// outside/config.txt.
	if err := os.WriteFile(filepath.Join(outside, "config.txt"), []byte(secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(repo, "data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(repo, "data")); err != nil {
		t.Fatal(err)
	}
	sb := readySandbox(t, testConfig(), repo)
	r := bash(t, sb, "ls -A; echo ---; grep -r -l -F "+secret+" /workspace; echo ---; git status --porcelain --ignored --untracked-files=all; echo ---; cat README.md")
	want := ".git\n.gitignore\nREADME.md\ncalc-link.py\noutside-link\npkg\nrun.sh\ntests\n---\n---\n M README.md\n D data/config.txt\n D gone.txt\n---\n# demo, edited locally\n"
	if r.stdout != want {
		t.Errorf("the sandbox holds\n%s\nwant\n%s", r.stdout, want)
	}
}

// TestCopyRepoIgnoresGitEnvironment: GIT_DIR or GIT_INDEX_FILE in frognano's own environment
// (a hook, a wrapper script) must not make the listing read another repository or index. Not
// parallel: it sets the process's environment.
func TestCopyRepoIgnoresGitEnvironment(t *testing.T) {
	repo := makeRepo(t)
	other := makeRepo(t)
	// Tracked in other, untracked in repo: copied only if the listing read other's index.
	for _, dir := range []string{repo, other} {
		if err := os.WriteFile(filepath.Join(dir, "only-in-other.txt"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", other, "add", "only-in-other.txt").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	sb := readySandbox(t, testConfig(), repo)
	if r := bash(t, sb, "ls pkg/calc.py only-in-other.txt 2>&1; git status --porcelain"); r.stdout != "ls: cannot access 'only-in-other.txt': No such file or directory\npkg/calc.py\n" {
		t.Errorf("the copy followed the host's GIT_* variables: %s", r.raw)
	}
}

// TestCopyRepoLeavesHostHistoryBehind: the sandbox's .git holds HEAD's history and nothing else
// of the host's repository: not a stash (where a local .env may sit), not another branch, not a
// commit that was amended or reset away, not a reflog.
func TestCopyRepoLeavesHostHistoryBehind(t *testing.T) {
	t.Parallel()
	repo := makeRepo(t)
	secret := "stashed-secret-" + canary
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	head := run("rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(repo, ".env"), []byte("TOKEN="+secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("stash", "push", "-q", "-u")
	if err := os.WriteFile(filepath.Join(repo, "config.py"), []byte("TOKEN='"+secret+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "config.py")
	run("commit", "-q", "-m", "oops")
	gone := run("rev-parse", "HEAD")
	run("reset", "-q", "--hard", head)
	run("branch", "other", gone)
	run("branch", "-D", "other")
	run("branch", "side", head)

	sb := readySandbox(t, testConfig(), repo)
	r := bash(t, sb, "git rev-parse HEAD; git status --porcelain; git for-each-ref --format='%(refname)'; "+
		"git cat-file -t "+gone+" 2>&1; git stash list; git fsck --unreachable --no-reflogs 2>/dev/null | wc -l; "+
		"grep -r "+secret+" .git 2>/dev/null | wc -l")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) < 5 || lines[0] != head {
		t.Fatalf("sandbox git state:\n%s\n%s", r.stdout, r.stderr)
	}
	out := r.stdout
	if strings.Contains(out, "refs/stash") || strings.Contains(out, "refs/heads/side") || strings.Contains(out, "stash@{") {
		t.Errorf("the host's other refs reached the sandbox:\n%s", out)
	}
	if !strings.Contains(out, "fatal: Not a valid object name") && !strings.Contains(out, "could not get object info") {
		t.Errorf("the reset-away commit %s is readable in the sandbox:\n%s", gone, out)
	}
	if last := lines[len(lines)-1]; last != "0" || lines[len(lines)-2] != "0" {
		t.Errorf("unreachable objects or the secret are in the sandbox's .git:\n%s", out)
	}
	if strings.Contains(out, " M ") || strings.Contains(out, "?? ") {
		t.Errorf("the fresh checkout is not clean:\n%s", out)
	}
}

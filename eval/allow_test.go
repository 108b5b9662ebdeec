package eval

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
)

// fakeDNS answers lookups from a table; a name it lacks does not resolve. No test of the
// policy asks a real resolver, so none depends on (or sends anything to) the network.
func fakeDNS(table map[string][]string) lookupFunc {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		list, ok := table[host]
		if !ok {
			return nil, fmt.Errorf("lookup %s: no such host", host)
		}
		var out []netip.Addr
		for _, s := range list {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, nil
	}
}

// policyTask is goodLine's task with one of the fields the policy judges.
func policyTask(f func(*Task)) Task {
	t, err := ParseTask([]byte(goodLine))
	if err != nil {
		panic(err)
	}
	f(&t)
	return t
}

// TestTaskPolicyImage: a task's image is one of the runner's base images (the sandbox image
// and FROGNANO_SANDBOX_IMAGES's) or one the operator allowed; any other is refused, named.
func TestTaskPolicyImage(t *testing.T) {
	t.Parallel()
	base := []string{"frognano-sandbox:latest", "frognano-sandbox-go:1.26"}
	for _, tc := range []struct {
		image string
		allow []string
		ok    bool
	}{
		{"frognano-sandbox:latest", nil, true},
		{"frognano-sandbox", nil, true}, // Docker's implied :latest
		{"frognano-sandbox-go:1.26", nil, true},
		{"frognano-sandbox-go", nil, false}, // :latest is another image
		{"acme/sandbox-py:3.12", []string{"acme/sandbox-py:3.12"}, true},
		{"acme/sandbox-py:3.13", []string{"acme/sandbox-py:3.12"}, false},
		{"cryptominer/xmrig:latest", nil, false},
		{"registry.example.com:5000/frognano-sandbox:latest", nil, false},
		{"frognano-sandbox@sha256:" + strings.Repeat("0", 64), nil, false},
	} {
		p := newPolicy(base, Options{Allow: Allow{Images: tc.allow}})
		err := p.check(context.Background(), policyTask(func(t *Task) { t.Image = tc.image }))
		var fe *FieldError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s (allowed %v): refused: %v", tc.image, tc.allow, err)
		case !tc.ok && (!errors.As(err, &fe) || fe.Field != "image" || !strings.Contains(err.Error(), "--allow-image")):
			t.Errorf("%s (allowed %v): %v, want refused for its image", tc.image, tc.allow, err)
		}
	}
}

// TestTaskPolicyRepoPath: a repo_path is relative, without `..`, and resolves (every link, a
// .git link or gitdir file, the object stores it borrows from) inside the task file's folder
// or --repos; anything else is refused before it is used.
func TestTaskPolicyRepoPath(t *testing.T) {
	t.Parallel()
	taskDir, repos, outside := t.TempDir(), t.TempDir(), t.TempDir()
	clone := func(dir string) string {
		src, _ := gittest.Repo(t, map[string]string{"a.txt": "one\n"})
		gittest.Git(t, "", "clone", "-q", src, dir)
		return dir
	}
	link := func(target, name string) {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string) {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clone(filepath.Join(taskDir, "good"))
	clone(filepath.Join(taskDir, "sub", "deeper"))
	clone(filepath.Join(repos, "mirrored"))
	secret := clone(filepath.Join(outside, "secret"))
	link(secret, filepath.Join(taskDir, "escape"))                                   // a link out of both
	link(filepath.Join(repos, "mirrored"), filepath.Join(taskDir, "into-repos"))     // a link into --repos
	link(filepath.Join(outside, "secret", ".git"), filepath.Join(taskDir, "gitdir")) // a bare-looking link out
	// A checkout whose .git is a gitdir file naming another repository of the host.
	write(filepath.Join(taskDir, "gitfile", ".git"), "gitdir: "+filepath.Join(secret, ".git")+"\n")
	write(filepath.Join(taskDir, "gitfile", "a.txt"), "x\n")
	// A checkout whose .git is a link to another repository's.
	write(filepath.Join(taskDir, "gitlink", "a.txt"), "x\n")
	link(filepath.Join(secret, ".git"), filepath.Join(taskDir, "gitlink", ".git"))
	// A clone that borrows its objects from another repository of the host.
	borrow := clone(filepath.Join(taskDir, "borrow"))
	write(filepath.Join(borrow, ".git", "objects", "info", "alternates"), "# borrowed\n"+filepath.Join(secret, ".git", "objects")+"\n")
	// One that borrows through a relative path leading out.
	rel := clone(filepath.Join(taskDir, "relborrow"))
	r, err := filepath.Rel(filepath.Join(rel, ".git", "objects"), filepath.Join(secret, ".git", "objects"))
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(rel, ".git", "objects", "info", "alternates"), r+"\n")
	// One that borrows from a clone inside: fine.
	inner := clone(filepath.Join(taskDir, "innerborrow"))
	write(filepath.Join(inner, ".git", "objects", "info", "alternates"), filepath.Join(taskDir, "good", ".git", "objects")+"\n")

	p := newPolicy(nil, Options{TaskDir: taskDir, Repos: repos})
	for _, tc := range []struct {
		path string
		want string // "" accepted, resolved inside; else a part of the refusal
	}{
		{"good", ""},
		{"./good", ""},
		{"sub/deeper", ""},
		{"mirrored", ""},   // under --repos
		{"into-repos", ""}, // a link from the task folder into --repos
		{"innerborrow", ""},
		{"/etc", "absolute"},
		{secret, "absolute"},
		{"~/src/x", "absolute"},
		{"../" + filepath.Base(outside) + "/secret", "`..`"},
		{"good/../../x", "`..`"},
		{"escape", "leads out"},
		{"gitdir", "leads out"},
		{"gitfile", "git directory"},
		{"gitlink", "git directory"},
		{"borrow", "object store"},
		{"relborrow", "object store"},
		{"missing", "neither under the task file's folder nor under --repos"},
		{"good/a.txt", "not a folder"},
	} {
		got, err := p.repoPath(tc.path)
		var fe *FieldError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.path, err)
		case tc.want == "" && !insideAny(got, []string{mustReal(t, taskDir), mustReal(t, repos)}):
			t.Errorf("%s: resolved to %s, outside", tc.path, got)
		case tc.want != "" && (!errors.As(err, &fe) || fe.Field != "repo_path" || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want refused with %q", tc.path, err, tc.want)
		}
		// Through the whole check too: the same decision.
		if cerr := p.check(context.Background(), policyTask(func(t *Task) { t.RepoPath = tc.path })); (cerr == nil) != (tc.want == "") {
			t.Errorf("%s: check says %v", tc.path, cerr)
		}
	}
}

func mustReal(t *testing.T, p string) string {
	t.Helper()
	r, err := realPath(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRepoPathCheckedAtUse: a folder accepted when the tasks were checked and replaced by a
// link out before the task runs is refused when it is used; git never reads it.
func TestRepoPathCheckedAtUse(t *testing.T) {
	t.Parallel()
	taskDir, outside := t.TempDir(), t.TempDir()
	gittest.Git(t, "", "init", "-q", filepath.Join(taskDir, "repo"))
	secret, _ := gittest.Repo(t, map[string]string{"key.txt": "secret\n"})
	if err := os.Rename(secret, filepath.Join(outside, "secret")); err != nil {
		t.Fatal(err)
	}
	s := &sources{policy: newPolicy(nil, Options{TaskDir: taskDir}), cache: t.TempDir()}
	task := policyTask(func(t *Task) { t.RepoPath = "repo" })
	if err := s.policy.check(context.Background(), task); err != nil {
		t.Fatalf("accepted at first: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(taskDir, "repo")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(taskDir, "repo")); err != nil {
		t.Fatal(err)
	}
	got, err := s.source(context.Background(), task)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "repo_path" {
		t.Fatalf("used after the swap: %q, %v", got, err)
	}
}

// TestTaskPolicyRepoURL: https and ssh only (http and git with the operator's flag), and no
// host that is, or resolves (at any of its addresses) to, a loopback, link-local, metadata or
// unspecified address (unless the operator's other flag says so); a name a resolver could
// read as an address is no host name.
func TestTaskPolicyRepoURL(t *testing.T) {
	t.Parallel()
	dns := fakeDNS(map[string][]string{
		"git.example.com":          {"203.0.113.7", "2001:db8::7"},
		"internal.example.com":     {"10.1.2.3"},
		"localhost":                {"127.0.0.1", "::1"},
		"rebound.example.com":      {"203.0.113.8", "127.0.0.1"},
		"meta.example.com":         {"169.254.169.254"},
		"meta6.example.com":        {"fd00:ec2::254"},
		"mapped.example.com":       {"::ffff:127.0.0.1"},
		"zero.example.com":         {"0.0.0.0"},
		"metadata.google.internal": {"203.0.113.9"}, // outside a cloud it may resolve to anything
	})
	const (
		ok     = ""
		plain  = "--allow-plain-urls"
		local  = "--allow-local-urls"
		syntax = "not"
	)
	for _, tc := range []struct {
		url       string
		want      string // ok, or what the refusal says
		withFlags bool   // accepted with both flags
	}{
		{"https://git.example.com/acme/a.git", ok, true},
		{"ssh://git@git.example.com/acme/a.git", ok, true},
		{"ssh://git@git.example.com:2222/acme/a.git", ok, true},
		{"https://internal.example.com/a.git", ok, true}, // private ranges are not refused (docs/eval.md)
		{"https://203.0.113.7/a.git", ok, true},
		{"https://GIT.example.com./a.git", ok, true},
		{"http://git.example.com/a.git", plain, true},
		{"git://git.example.com/a.git", plain, true},
		{"https://localhost/a.git", "a loopback address", true},
		{"https://127.0.0.1:8443/a.git", "a loopback address", true},
		{"https://127.1.2.3/a.git", "a loopback address", true},
		{"https://[::1]/a.git", "a loopback address", true},
		{"https://[::ffff:127.0.0.1]/a.git", "a loopback address", true},
		{"https://mapped.example.com/a.git", "a loopback address", true},
		{"https://[64:ff9b::7f00:1]/a.git", "a loopback address inside an IPv6 address", true},
		{"https://[2002:7f00:1::]/a.git", "a loopback address inside an IPv6 address", true},
		{"https://rebound.example.com/a.git", "a loopback address", true}, // every address counts
		{"http://169.254.169.254/latest/meta-data/", plain, true},
		{"https://169.254.169.254/latest/meta-data/", "a cloud metadata address", true},
		{"https://meta.example.com/x", "a cloud metadata address", true},
		{"https://[fd00:ec2::254]/x", "a cloud metadata address", true},
		{"https://meta6.example.com/x", "a cloud metadata address", true},
		{"https://100.100.100.200/x", "a cloud metadata address", true},
		{"https://metadata.google.internal/computeMetadata/v1/", "a cloud metadata service's name", true},
		{"https://METADATA.google.internal./x", "a cloud metadata service's name", true},
		{"https://[fe80::1%25eth0]/a.git", "a link-local address", true},
		{"https://169.254.1.1/a.git", "a link-local address", true},
		{"https://0.0.0.0/a.git", "an unspecified address", true},
		{"https://[::]/a.git", "an unspecified address", true},
		{"https://zero.example.com/a.git", "an unspecified address", true},
		{"https://nowhere.example.com/a.git", "no such host", false},
		// What a resolver (curl's, git's) reads as 127.0.0.1 is no host name.
		{"https://2130706433/a.git", syntax, false},
		{"https://0x7f.1/a.git", syntax, false},
		{"https://0177.0.0.1/a.git", syntax, false},
		{"https://127.1/a.git", syntax, false},
		{"https://h:99999/a.git", syntax, false},
		{"ftp://git.example.com/a.git", syntax, false},
		{"file:///etc", syntax, false},
	} {
		task := policyTask(func(t *Task) { t.RepoURL = tc.url })
		strict := newPolicy(nil, Options{})
		strict.lookup = dns
		err := strict.check(context.Background(), task)
		var fe *FieldError
		switch {
		case tc.want == ok && err != nil:
			t.Errorf("%s: refused: %v", tc.url, err)
		case tc.want != ok && (!errors.As(err, &fe) || fe.Field != "repo_url" || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want refused with %q", tc.url, err, tc.want)
		}
		loose := newPolicy(nil, Options{Allow: Allow{PlainURLs: true, LocalAddresses: true}})
		loose.lookup = dns
		if err := loose.check(context.Background(), task); (err == nil) != tc.withFlags {
			t.Errorf("%s with both flags: %v", tc.url, err)
		}
	}
}

// TestLocalAddress: the address rule alone, including the private ranges it leaves to the
// operator's network.
func TestLocalAddress(t *testing.T) {
	t.Parallel()
	for addr, local := range map[string]bool{
		"127.0.0.1": true, "127.255.0.9": true, "::1": true, "0.0.0.0": true, "0.1.2.3": true, "::": true,
		"169.254.169.254": true, "169.254.0.1": true, "fe80::1": true, "fd00:ec2::254": true, "100.100.100.200": true,
		"::ffff:169.254.169.254": true, "64:ff9b::a9fe:a9fe": true, "::7f00:1": true,
		"10.0.0.1": false, "192.168.1.1": false, "172.16.0.1": false, "fd12::1": false, "100.64.0.1": false,
		"203.0.113.1": false, "2001:db8::1": false, "64:ff9b::cb00:7101": false, "2002:cb00:7101::": false,
	} {
		if got := localAddress(netip.MustParseAddr(addr)) != ""; got != local {
			t.Errorf("%s: local %v, want %v", addr, got, local)
		}
	}
}

// TestMinedRepoPath: a task mined from a clone names it relative to the task file's folder
// when it lies there, else by its folder's name, and MinedRepos is then the --repos that
// makes the task file's repo_path resolve; either way Check accepts the mined path.
func TestMinedRepoPath(t *testing.T) {
	t.Parallel()
	parent, elsewhere := t.TempDir(), t.TempDir()
	clone := filepath.Join(parent, "proj")
	gittest.Git(t, "", "init", "-q", clone)
	for _, tc := range []struct {
		taskDir, path, repos string
	}{
		{parent, "proj", ""},
		{clone, ".", ""},
		{elsewhere, "proj", parent},
	} {
		got := minedRepoPath(clone, tc.taskDir)
		repos := MinedRepos(clone, tc.taskDir)
		if got != tc.path || repos != tc.repos {
			t.Errorf("task file in %s: repo_path %q and --repos %q, want %q and %q", tc.taskDir, got, repos, tc.path, tc.repos)
		}
		if _, err := newPolicy(nil, Options{TaskDir: tc.taskDir, Repos: repos}).repoPath(got); err != nil {
			t.Errorf("task file in %s: the mined repo_path is refused: %v", tc.taskDir, err)
		}
	}
}

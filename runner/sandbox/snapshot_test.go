package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/sandbox"
)

// TestSnapshotSharedBySandboxes: one pack serves several sandboxes, made at once, each with the
// checkout exactly as CopyRepo gives it (tracked files, a fresh .git with no remote, owned by
// the sandbox user); a change to the checkout after packing reaches none of them; and the
// packed file is never visible in its folder.
func TestSnapshotSharedBySandboxes(t *testing.T) {
	t.Parallel()
	repo := makeRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "untracked.env"), []byte("KEY="+canary+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	ctx := context.Background()
	snap, err := sandbox.Pack(ctx, repo, "", tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if err := snap.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(tmp); err != nil || len(ents) != 0 {
		t.Errorf("the pack's folder lists %v (err %v), want nothing: the file is unlinked", ents, err)
	}
	// Changed after packing: no sandbox sees it.
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("# changed after packing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	const n = 3
	boxes := make([]*sandbox.Sandbox, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			boxes[i], errs[i] = sandbox.NewFrom(ctx, docker, cfg, snap, strings.ReplaceAll(t.Name(), "/", "-"), "agent")
		})
	}
	wg.Wait()
	for i, sb := range boxes {
		if sb != nil {
			t.Cleanup(func() { sb.Close() })
		}
		if errs[i] != nil {
			t.Fatalf("NewFrom %d: %v", i, errs[i])
		}
	}
	const check = "cat README.md; git status --porcelain; git remote -v; ls untracked.env 2>&1; find /workspace \\( ! -user 1000 -o ! -group 1000 \\) -print; git log --format=%s"
	want := "# demo\nls: cannot access 'untracked.env': No such file or directory\ninitial\n"
	for i, sb := range boxes {
		if err := sb.StartExecutor(ctx); err != nil {
			t.Fatalf("StartExecutor %d: %v", i, err)
		}
		if r := bash(t, sb, check); r.stdout != want {
			t.Errorf("sandbox %d holds\n%s\nwant\n%s", i, r.raw, want)
		}
	}
}

// TestSnapshotForAnotherUser: a pack whose entries another user owns is refused, not copied.
func TestSnapshotForAnotherUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	snap, err := sandbox.Pack(ctx, makeRepo(t), "1001:1001", "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	sb := newSandbox(t, testConfig(), "agent")
	if err := sb.CopySnapshot(ctx, snap); err == nil || !strings.Contains(err.Error(), "packed for 1001:1001") {
		t.Errorf("CopySnapshot of another user's pack: %v, want a refusal", err)
	}
	if _, err := sandbox.Pack(ctx, makeRepo(t), "0:0", ""); err == nil {
		t.Error("Pack for root: no error")
	}
}

// TestSnapshotBrokenCheckout: a checkout that cannot be packed fails NewFrom with the reason,
// and leaves no container behind.
func TestSnapshotBrokenCheckout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	snap, err := sandbox.Pack(ctx, dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	cfg := testConfig()
	cfg.Owner = "sandbox-test-" + strings.ToLower(t.Name())
	sb, err := sandbox.NewFrom(ctx, docker, cfg, snap, "broken", "agent")
	if err == nil {
		sb.Close()
		t.Fatal("NewFrom of a worktree checkout: no error")
	}
	if !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("NewFrom: %v, want the reason", err)
	}
	if n, err := sandbox.Prune(ctx, docker, cfg.Owner); err != nil || n != 0 {
		t.Errorf("NewFrom left %d sandboxes (err %v)", n, err)
	}
}

// TestSnapshotOverDiskLimit: the copy lands while the disk watcher starts, so a checkout larger
// than the disk limit is stopped by the watcher's first measurement, before anything runs.
func TestSnapshotOverDiskLimit(t *testing.T) {
	t.Parallel()
	repo := makeRepo(t)
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7919 >> 3)
	}
	if err := os.WriteFile(filepath.Join(repo, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", repo, "add", "big.bin").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	ctx := context.Background()
	snap, err := sandbox.Pack(ctx, repo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	cfg := testConfig()
	cfg.Disk = 1 << 20
	sb, err := sandbox.NewFrom(ctx, docker, cfg, snap, strings.ReplaceAll(t.Name(), "/", "-"), "agent")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	// Whatever runs is killed with the sandbox; the call ends when the watcher stops it.
	_, _ = sb.Exec(ctx, []string{"sleep", "600"}, nil, 10*time.Minute, 0)
	if why := sb.StopReason(ctx); !strings.Contains(why, "past the sandbox's disk limit of 1.0 MiB") {
		t.Errorf("StopReason = %q, want the disk limit", why)
	}
}

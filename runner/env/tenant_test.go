package env_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/docker/docker/api/types/image"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/runner/env"
)

// plantingSetup is byte-identical in every repository of these tests, as the README's example
// is in every repository that copies it: it runs a file of the repository that no default
// input names (a Makefile, as `pip install -e .` runs setup.py).
const plantingSetup = "set -eu\nmake -s install\n"

// makefile writes what into /opt/planted: the mark of whose setup made an environment.
func makefile(what string) string {
	return "install:\n\tprintf '%s' '" + what + "' > /opt/planted\n"
}

// Two unrelated repositories with byte-identical setup scripts and default inputs never share
// an environment: the second builds its own, from its own files. Before environments were
// scoped, the second run reported "cached" and got the first repository's image, whatever its
// Makefile (or setup.py) said.
func TestRepositoriesNeverShareAnEnvironment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files := func(who string) map[string]string {
		return map[string]string{env.ScriptFile: plantingSetup, "Makefile": makefile(who), "requirements.txt": "six==1.16\n"}
	}
	attacker, attackerHead := gittest.Repo(t, files("attacker"))
	victim, victimHead := gittest.Repo(t, files("victim"))
	m := manager(t, env.Config{Network: env.NoNetwork}, "")

	first, err := m.Prepare(ctx, env.Request{RunID: "envtest-tenant-a", RepoDir: attacker, Commit: attackerHead,
		Scope: env.Scope{Tenant: "installation 1", Repo: "installation 1 repository 11"}, Sandbox: sandboxConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	removeEnvImage(t, first.Ref)
	second, err := m.Prepare(ctx, env.Request{RunID: "envtest-tenant-b", RepoDir: victim, Commit: victimHead,
		Scope: env.Scope{Tenant: "installation 2", Repo: "installation 2 repository 22"}, Sandbox: sandboxConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release()
	removeEnvImage(t, second.Ref)
	if second.Cached || second.Setup == nil || second.Key == first.Key || second.Image == first.Image {
		t.Fatalf("the victim's run reused the attacker's environment: cached %v, same key %v, same image %v",
			second.Cached, second.Key == first.Key, second.Image == first.Image)
	}
	if out, _ := run(t, sandboxConfig(t), second.Image, "", "", "cat /opt/planted"); out != "victim" {
		t.Fatalf("the victim's environment holds %q, want its own setup's", out)
	}

	// The same repository (same scope) and commit reuses its own environment.
	again, err := m.Prepare(ctx, env.Request{RunID: "envtest-tenant-b2", RepoDir: victim, Commit: victimHead,
		Scope: env.Scope{Tenant: "installation 2", Repo: "installation 2 repository 22"}, Sandbox: sandboxConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Release()
	if !again.Cached || again.Image != second.Image {
		t.Errorf("the victim's second run did not reuse its environment: cached %v", again.Cached)
	}
}

// Setup sees the setup commit's tree, read from git's objects, never the working tree: a
// follow-up's checkout holds the pull request branch (files an earlier model wrote), and
// `frognano run`'s may hold local edits. Neither reaches setup, and neither changes the key.
func TestSetupSeesOnlyTheSetupCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, base := gittest.Repo(t, map[string]string{env.ScriptFile: plantingSetup, "Makefile": makefile("base"), "requirements.txt": "six==1.16\n"})
	scope := env.Scope{Tenant: "installation 3", Repo: "installation 3 repository 33"}
	m := manager(t, env.Config{Network: env.NoNetwork}, "")

	// The base's own environment, built from a checkout of the base.
	clean, err := m.Prepare(ctx, env.Request{RunID: "envtest-commit-base", RepoDir: dir, Commit: base, Scope: scope, Sandbox: sandboxConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	removeEnvImage(t, clean.Ref)
	clean.Release()

	// The pull request branch: a model committed a hostile Makefile and a new requirements
	// file; the working tree then gets an uncommitted edit on top.
	gittest.Write(t, dir, map[string]string{"Makefile": makefile("model"), "requirements-extra.txt": "evil==1\n"})
	gittest.Commit(t, dir, "the model's work")
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(makefile("local edit")), 0o644); err != nil {
		t.Fatal(err)
	}
	followUp, err := m.Prepare(ctx, env.Request{RunID: "envtest-commit-followup", RepoDir: dir, Commit: base, Scope: scope, Sandbox: sandboxConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer followUp.Release()
	if followUp.Key != clean.Key || !followUp.Cached {
		t.Errorf("the branch's files changed the key (%v) or forced a build (cached %v)", followUp.Key != clean.Key, followUp.Cached)
	}

	// Not cached: the follow-up builds the base's environment, and builds it from the base.
	if err := followUp.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := docker.ImageRemove(ctx, followUp.Ref, image.RemoveOptions{PruneChildren: true}); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := m.Prepare(ctx, env.Request{RunID: "envtest-commit-rebuilt", RepoDir: dir, Commit: base, Scope: scope, Sandbox: sandboxConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer rebuilt.Release()
	removeEnvImage(t, rebuilt.Ref)
	if rebuilt.Cached || rebuilt.Setup == nil {
		t.Fatalf("the environment was not rebuilt (cached %v)", rebuilt.Cached)
	}
	if out, _ := run(t, sandboxConfig(t), rebuilt.Image, "", "", "cat /opt/planted"); out != "base" {
		t.Fatalf("setup ran the working tree's Makefile: the environment holds %q, want the base commit's", out)
	}
}

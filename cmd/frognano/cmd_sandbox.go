package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/frognano/frognano/config"
	sandboximage "github.com/frognano/frognano/deploy/sandbox"
	"github.com/frognano/frognano/internal/clip"
	envpkg "github.com/frognano/frognano/runner/env"
	"github.com/frognano/frognano/runner/sandbox"
)

// sandboxCmd is `frognano sandbox build|ls|prune`.
func sandboxCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"frognano sandbox needs a subcommand: build, ls or prune"}
	}
	switch args[0] {
	case "build":
		fs := newFlagSet("sandbox build", stderr)
		force := fs.Bool("force", false, "rebuild the image even when it exists")
		withGo := fs.Bool("go", false, "also build the example Go image frognano-sandbox-go:test")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		return buildImage(ctx, *force, *withGo, stdout, stderr)
	case "ls":
		fs := newFlagSet("sandbox ls", stderr)
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		return listSandboxes(ctx, getenv, stdout)
	case "prune":
		fs := newFlagSet("sandbox prune", stderr)
		owner := fs.String("owner", "", "remove only sandboxes made by this owner (default: all frognano sandboxes)")
		allEnvs := fs.Bool("environments", false, "also remove every environment image no sandbox uses (default: only those past FROGNANO_ENV_CACHE_SIZE, least recently used first)")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		cfg, err := config.Runner(getenv)
		if err != nil {
			return usageError{err.Error()}
		}
		docker, err := sandbox.NewClient()
		if err != nil {
			return setupError{err}
		}
		defer docker.Close()
		n, err := sandbox.Prune(ctx, docker, *owner)
		if err != nil {
			return fmt.Errorf("removing sandboxes: %w", err)
		}
		fmt.Fprintf(stdout, "frognano: removed %d sandbox container(s)\n", n)
		envs := envpkg.New(docker, cfg.Env, nil)
		var removed []envpkg.Cached
		if *allEnvs {
			removed, err = envs.RemoveUnused(ctx)
		} else {
			removed, err = envs.Evict(ctx)
		}
		var bytes int64
		for _, c := range removed {
			bytes += c.Size
		}
		fmt.Fprintf(stdout, "frognano: removed %d environment image(s), %s\n", len(removed), sandbox.FormatBytes(bytes))
		if err != nil {
			return fmt.Errorf("removing environment images: %w", err)
		}
		return nil
	}
	return usageError{fmt.Sprintf("unknown sandbox subcommand %q (want build, ls or prune)", args[0])}
}

// listSandboxes prints the sandbox containers on the engine (any owner), then the environment
// images, least recently used first, with the cache's total against its bound.
func listSandboxes(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := config.Runner(getenv)
	if err != nil {
		return usageError{err.Error()}
	}
	docker, err := sandbox.NewClient()
	if err != nil {
		return setupError{err}
	}
	defer docker.Close()
	list, err := sandbox.List(ctx, docker)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "SANDBOX\tPURPOSE\tRUN\tOWNER\tSTATE")
	for _, c := range list {
		fmt.Fprintf(tw, "%.12s\t%s\t%s\t%s\t%s\n", c.ID, c.Purpose, c.RunID, c.Owner, c.State)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	envs, err := envpkg.New(docker, cfg.Env, nil).List(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ENVIRONMENT\tREPOSITORY\tTENANT\tBASE IMAGE\tSIZE\tLAST USED\tIN USE")
	var total int64
	for _, e := range envs {
		total += e.Size
		name := e.Ref
		if name == "" {
			name = "(untagged) " + e.ID
		}
		if len(name) > 32 {
			name = clip.Prefix(name, 32) + clip.Ellipsis
		}
		tenant := e.Tenant
		if tenant == "" {
			tenant = "(none: made before environments had one; removed first)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", name, e.Repo, tenant, e.Base, sandbox.FormatBytes(e.Size), e.LastUsed.Local().Format(time.DateTime), e.InUse)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d environment image(s), %s of FROGNANO_ENV_CACHE_SIZE %s\n", len(envs), sandbox.FormatBytes(total), sandbox.FormatBytes(envpkg.New(docker, cfg.Env, nil).Config().CacheSize))
	return nil
}

// buildImage writes the embedded build files to a temporary folder and runs the offline
// build script there, so an installed binary needs no checkout.
func buildImage(ctx context.Context, force, withGo bool, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "frognano-sandbox-build-")
	if err != nil {
		return fmt.Errorf("creating a build folder: %w", err)
	}
	defer os.RemoveAll(dir)
	err = fs.WalkDir(sandboximage.Files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := sandboximage.Files.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, path), b, 0o755)
	})
	if err != nil {
		return fmt.Errorf("writing the build files: %w", err)
	}
	args := []string{filepath.Join(dir, "build-offline.sh")}
	if force {
		args = append(args, "--force")
	}
	if withGo {
		args = append(args, "--go")
	}
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return setupError{fmt.Errorf("building the sandbox image: %w", err)}
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	sandboximage "github.com/frognano/frognano/deploy/sandbox"
	"github.com/frognano/frognano/runner/sandbox"
)

// sandboxCmd is `frognano sandbox build|prune`.
func sandboxCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"frognano sandbox needs a subcommand: build or prune"}
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
	case "prune":
		fs := newFlagSet("sandbox prune", stderr)
		owner := fs.String("owner", "", "remove only sandboxes made by this owner (default: all frognano sandboxes)")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
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
		return nil
	}
	return usageError{fmt.Sprintf("unknown sandbox subcommand %q (want build or prune)", args[0])}
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

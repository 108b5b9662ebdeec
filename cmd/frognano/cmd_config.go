package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/frognano/frognano/settings"
)

// errInvalidSettings is a settings file `frognano config check` found invalid: its problems
// are on stdout already, and the command exits 1.
var errInvalidSettings = errors.New("the settings file is invalid")

// configCmd is `frognano config check [FILE]`: it checks a repository's settings file (by
// default .github/frognano.yml in the current directory) as a run reads it, and prints each
// problem as FILE:LINE:COL: message, or "FILE: valid".
func configCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		return usageError{"frognano config needs check (frognano config check [FILE])"}
	}
	fs := newFlagSet("config check", stderr)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 1 {
		return usageError{"frognano config check takes one file at most"}
	}
	name := settings.Path
	if fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("config check: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, settings.MaxSize+1))
	if err != nil {
		return fmt.Errorf("config check: read %s: %w", name, err)
	}
	_, err = settings.Parse(name, data)
	var invalid *settings.InvalidError
	switch {
	case errors.As(err, &invalid):
		for _, p := range invalid.Problems {
			fmt.Fprintln(stdout, p)
		}
		return errInvalidSettings
	case err != nil:
		return err
	}
	fmt.Fprintf(stdout, "%s: valid\n", name)
	return nil
}

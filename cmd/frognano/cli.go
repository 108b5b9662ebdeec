package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

const usage = `frognano: FrogNano-4B as a GitHub App, running in an offline sandbox.

Usage:
  frognano run --repo DIR (--task TEXT | --task-file FILE) --out DIR [flags]
                                one agent run on a local git checkout
  frognano serve [--workers N]  the webhook server and N workers (0: web only)
  frognano worker               workers only (more machines can work one queue)
  frognano migrate              apply River's and frognano's database migrations
  frognano setup --webhook-url URL [--github-url URL] [--org ORG] [--out FILE]
                                create the GitHub App with GitHub's manifest flow
  frognano doctor [--worker] [--quick]
                                check the set-up: configuration, PostgreSQL, Docker, the
                                sandbox, the model server, GitHub; one line per check
  frognano runs [--limit N]     the newest runs kept in PostgreSQL: who asked, how long each
                                took, its pull request and what became of it
  frognano runs show ID [--report|--trajectory|--patch|--setup-log|--audit]
                                one run: its facts and usage, report, trajectory, patch,
                                or what it did on GitHub (--audit)
  frognano runs start OWNER/REPO#N [--base B] [--attempts N] [--model M] [--instructions TEXT]
                                ask for a run through the service's API (FROGNANO_API_URL,
                                FROGNANO_API_TOKEN; docs/api.md)
  frognano tokens create --name NAME (--installation ID | --repo OWNER/REPO)...
  frognano tokens list | revoke ID
                                the API's tokens: made (printed once), listed, revoked
  frognano usage [--since DATE] [--by installation|repository|person] [--format table|csv|json]
                                what the runs used (tokens, times, sandbox CPU and memory)
  frognano stats [--since DATE|DURATION] [--by repository|model|week|label] [--format table|csv|json]
                                what became of frognano's pull requests: merged, closed,
                                acceptance and its interval, time to merge (docs/stats.md)
  frognano outcomes sync [--budget N]
                                ask GitHub now what became of the open pull requests runs
                                published to (docs/outcomes.md); prints what changed
  frognano budget set|show|clear --installation ID [--runs N] [--tokens N] [--repo-runs N] [--repo-tokens N]
                                an installation's budgets per UTC day, read by every worker
  frognano export --repo OWNER/REPO [--repo ...] --format leaf|chat-jsonl --out FILE
                [--since DATE|DURATION] [--outcome merged|closed|any] [--dry-run]
                                the runs of the named repositories as data to fine-tune or
                                choose a model on, with their labels (docs/export.md)
  frognano config check [FILE]  check a repository's settings file (.github/frognano.yml by
                                default): each problem as FILE:LINE:COL, or FILE: valid
  frognano eval --tasks FILE --out DIR [flags]
                                measure the model on SWE-bench-style tasks (docs/eval.md)
  frognano eval compare DIR_A DIR_B
                                which tasks flipped between two evaluations, and whether
                                the difference is significant
  frognano eval tasks --from-history REPO --out FILE [--since DATE] [--limit N]
                                make tasks of a repository's own fixes
  frognano eval tasks --from-history REPO --from-export FILE [--name OWNER/REPO] --out FILE
                                make tasks of the pull requests an export labels merged
  frognano sandbox build        build the sandbox image (offline when no registry answers)
  frognano sandbox ls           list sandboxes and cached environment images
  frognano sandbox prune [--environments]
                                remove sandboxes a previous process left behind, and
                                environment images past FROGNANO_ENV_CACHE_SIZE (or all unused)
  frognano docker-proxy [--listen unix:/run/frognano/docker.sock] [--engine URL]
                                serve the Docker API calls frognano makes, and nothing
                                else, in front of the engine's socket (docs/security.md)
  frognano version

Run "frognano COMMAND -h" for the flags of a command. Configuration is read from
FROGNANO_* environment variables (see docs/configuration.md); flags override them.
`

// usageError is a mistake on the command line; it exits with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// setupError is a broken setup (no Docker engine, image missing, model unreachable, not a
// git checkout); it exits with status 3 and one clear line.
type setupError struct{ err error }

func (e setupError) Error() string { return e.err.Error() }
func (e setupError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ue usageError
	var se setupError
	switch {
	case errors.As(err, &ue), errors.Is(err, flag.ErrHelp):
		return 2
	case errors.As(err, &se):
		return 3
	case errors.Is(err, context.Canceled):
		return 130
	}
	return 1
}

var version = "dev"

// run dispatches a command line. getenv is passed in (never os.Getenv deep inside) so that
// tests can run commands in parallel with their own environment.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{"no command given"}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return runCmd(ctx, rest, getenv, stdout, stderr)
	case "eval":
		return evalCmd(ctx, rest, getenv, stdout, stderr)
	case "sandbox":
		return sandboxCmd(ctx, rest, getenv, stdout, stderr)
	case "serve":
		return serveCmd(ctx, rest, getenv, stdout, stderr, true)
	case "worker":
		return serveCmd(ctx, rest, getenv, stdout, stderr, false)
	case "migrate":
		return migrateCmd(ctx, rest, getenv, stdout, stderr)
	case "runs":
		return runsCmd(ctx, rest, getenv, stdout, stderr)
	case "usage":
		return usageCmd(ctx, rest, getenv, stdout, stderr, time.Now())
	case "stats":
		return statsCmd(ctx, rest, getenv, stdout, stderr, time.Now())
	case "export":
		return exportCmd(ctx, rest, getenv, stdout, stderr, time.Now())
	case "budget":
		return budgetCmd(ctx, rest, getenv, stdout, stderr)
	case "outcomes":
		return outcomesCmd(ctx, rest, getenv, stdout, stderr)
	case "tokens":
		return tokensCmd(ctx, rest, getenv, stdout, stderr)
	case "config":
		return configCmd(ctx, rest, stdout, stderr)
	case "setup":
		return setupCmd(ctx, rest, getenv, stdout, stderr)
	case "doctor":
		return doctorCmd(ctx, rest, getenv, stdout, stderr)
	case "docker-proxy":
		return dockerProxyCmd(ctx, rest, getenv, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "frognano", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", cmd)}
}

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("frognano "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", strings.Join(fs.Args(), " "))}
	}
	return nil
}

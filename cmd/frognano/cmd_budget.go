package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/frognano/frognano/config"
	runs "github.com/frognano/frognano/run"
)

// optInt64 is a flag that is nil until set: a budget left alone.
type optInt64 struct{ p **int64 }

func (o optInt64) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatInt(**o.p, 10)
}

func (o optInt64) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a non-negative integer", s)
	}
	*o.p = &n
	return nil
}

// budgetCmd is `frognano budget set --installation ID [--runs N] [--tokens N] [--repo-runs N]
// [--repo-tokens N]`, `frognano budget clear --installation ID` and `frognano budget show
// --installation ID`: an installation's budgets, which every worker reads at each run's check
// (no restart).
func budgetCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "set" && args[0] != "show" && args[0] != "clear") {
		return usageError{"frognano budget needs set, show or clear (frognano budget set --installation ID --runs N)"}
	}
	sub := args[0]
	fs := newFlagSet("budget "+sub, stderr)
	installation := fs.Int64("installation", 0, "the installation's id (required)")
	var o runs.BudgetOverride
	if sub == "set" {
		bindBudgetFlags(fs, &o)
	}
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *installation <= 0 {
		return usageError{"--installation must be an installation's id (a positive number)"}
	}
	if sub == "set" && o.InstallationRuns == nil && o.InstallationTokens == nil && o.RepoRuns == nil && o.RepoTokens == nil {
		return usageError{"frognano budget set needs at least one of --runs, --tokens, --repo-runs, --repo-tokens"}
	}
	def, err := config.Budgets(getenv)
	if err != nil {
		return usageError{err.Error()}
	}
	st, done, err := openStore(ctx, getenv)
	if err != nil {
		return err
	}
	defer done()
	switch sub {
	case "set":
		err = st.SetBudget(ctx, *installation, o)
	case "clear":
		err = st.ClearBudget(ctx, *installation)
	}
	if err != nil {
		return err
	}
	b, over, err := st.Budget(ctx, *installation, def)
	if err != nil {
		return err
	}
	return writeBudget(stdout, *installation, b, over)
}

func bindBudgetFlags(fs *flag.FlagSet, o *runs.BudgetOverride) {
	fs.Var(optInt64{&o.InstallationRuns}, "runs", "runs per UTC day for the whole installation (0: no limit)")
	fs.Var(optInt64{&o.InstallationTokens}, "tokens", "tokens per UTC day for the whole installation (0: no limit)")
	fs.Var(optInt64{&o.RepoRuns}, "repo-runs", "runs per UTC day for each of its repositories (0: no limit)")
	fs.Var(optInt64{&o.RepoTokens}, "repo-tokens", "tokens per UTC day for each of its repositories (0: no limit)")
}

// writeBudget prints the budgets a check applies to installation, and where each comes from.
func writeBudget(w io.Writer, installation int64, b runs.Budgets, over *runs.BudgetOverride) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "installation\t%d (budgets per UTC day; they reset at 00:00 UTC)\n", installation)
	row := func(name string, v int64, o *int64, env string) {
		val := "no limit"
		if v > 0 {
			val = strconv.FormatInt(v, 10)
		}
		from := env
		if over != nil && o != nil {
			from = "frognano budget set"
		}
		fmt.Fprintf(tw, "%s\t%s\t(%s)\n", name, val, from)
	}
	var or runs.BudgetOverride
	if over != nil {
		or = *over
	}
	row("runs", b.InstallationRuns, or.InstallationRuns, runs.EnvBudgetInstallationRuns)
	row("tokens", b.InstallationTokens, or.InstallationTokens, runs.EnvBudgetInstallationTokens)
	row("runs per repository", b.RepoRuns, or.RepoRuns, runs.EnvBudgetRepoRuns)
	row("tokens per repository", b.RepoTokens, or.RepoTokens, runs.EnvBudgetRepoTokens)
	return tw.Flush()
}

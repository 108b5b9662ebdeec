package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/outcome"
)

// outcomesCmd is `frognano outcomes sync [--budget N]`: one reconciliation round of the pull
// requests runs published to, at once (what the service's periodic job does every
// FROGNANO_OUTCOMES_INTERVAL), printing each change and the calls it made (docs/outcomes.md).
func outcomesCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "sync" {
		return usageError{"frognano outcomes needs sync (frognano outcomes sync [--budget N])"}
	}
	ocfg, err := config.Outcomes(getenv)
	if err != nil {
		return usageError{"configuration: " + err.Error()}
	}
	fs := newFlagSet("outcomes sync", stderr)
	fs.IntVar(&ocfg.Budget, "budget", ocfg.Budget, "GitHub API calls this round may make at most (FROGNANO_OUTCOMES_BUDGET)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if least := outcome.CostOpen + outcome.CostPull; ocfg.Budget < least {
		return usageError{fmt.Sprintf("--budget must be at least %d (opening a repository and reading one pull request)", least)}
	}
	if config.DatabaseURL(getenv) == "" {
		return usageError{"DATABASE_URL is not set"} // before the App's settings, as every database command
	}
	ghcfg, err := config.GitHubApp(getenv)
	if err != nil {
		return usageError{"configuration: " + err.Error()}
	}
	log := slog.New(githubapp.RedactLogs(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ghcfg.Logger = log
	app, err := githubapp.New(ghcfg)
	if err != nil {
		return setupError{fmt.Errorf("configuring the GitHub App: %w", err)}
	}
	pool, err := openDatabase(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	ocfg.WorkDir, ocfg.Logger = os.TempDir(), log
	rec := outcome.NewReconciler(outcome.NewStore(pool), outcome.GitHubApp(app), ocfg)
	rep, err := rec.Round(ctx)
	for _, c := range rep.Changes {
		fmt.Fprintln(stdout, c)
	}
	stopped := ""
	switch rep.Stopped {
	case "budget":
		stopped = "; stopped at the budget (the next round goes on from there)"
	case "rate limit":
		stopped = "; stopped: GitHub's rate limit runs low"
	case "busy":
		stopped = "; another round is running, nothing done"
	}
	fmt.Fprintf(stdout, "frognano: %d pull request(s) asked about, %d API call(s), %d change(s)%s\n", rep.Asked, rep.Calls, len(rep.Changes), stopped)
	return err
}

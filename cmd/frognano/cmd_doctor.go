package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/doctor"
	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/runner"
	"github.com/jackc/pgx/v5/pgconn"
)

// doctorCmd is `frognano doctor`: every check of package doctor against the configuration
// `serve` (or, with --worker, `worker`) would start with, one line each; it fails (exit 1)
// when any check fails.
func doctorCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor", stderr)
	worker := fs.Bool("worker", false, "check a host that runs `frognano worker` (no webhook secret needed)")
	quick := fs.Bool("quick", false, "skip the checks that start a sandbox and send the model a probe")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, cfgErr := config.LoadService(getenv, !*worker)
	cfgErr = errors.Join(cfgErr, checkRunnerConfig(cfg.Runner))
	var results []doctor.Result
	if cfgErr != nil {
		results = append(results, doctor.Result{Name: "config", Status: doctor.Fail,
			Detail: strings.ReplaceAll(cfgErr.Error(), "\n", "; "), Fix: "set them in the environment or .env (docs/configuration.md)"})
	} else {
		results = append(results, doctor.Result{Name: "config", Status: doctor.Pass,
			Detail: fmt.Sprintf("complete: App %d at %s, model %s, %d worker(s), owner %s",
				cfg.GitHub.AppID, orDefault(cfg.GitHub.URL, "https://github.com"), cfg.Runner.Leaf.Model, cfg.Workers, cfg.Runner.Sandbox.Owner)})
	}

	if cfg.DatabaseURL == "" {
		results = append(results, doctor.Result{Name: "database", Status: doctor.Skip, Detail: "DATABASE_URL is not set"})
	} else {
		// A database that is not migrated yet is fine when the process doctor checks for
		// migrates it at start, as it does unless FROGNANO_AUTO_MIGRATE=false.
		starter := "serve"
		if *worker {
			starter = "worker"
		}
		db := doctor.Database(ctx, cfg.DatabaseURL, cfg.AutoMigrate, starter)
		results = append(results, db)
		if db.Status == doctor.Pass {
			results = append(results, settingsResult(ctx, cfg.DatabaseURL))
		}
	}

	dr, docker := doctor.Docker(ctx)
	results = append(results, dr)
	if docker == nil {
		for _, n := range []string{"sandbox-image", "sandbox"} {
			results = append(results, doctor.Result{Name: n, Status: doctor.Skip, Detail: "needs the Docker engine"})
		}
	} else {
		defer docker.Close()
		img := doctor.Image(ctx, docker, cfg.Runner.Sandbox.Image)
		results = append(results, img)
		switch {
		case *quick:
		case img.Status != doctor.Pass:
			results = append(results, doctor.Result{Name: "sandbox", Status: doctor.Skip, Detail: "needs the sandbox image"})
		default:
			results = append(results, doctor.Sandbox(ctx, docker, cfg.Runner.Sandbox))
		}
	}
	results = append(results, doctor.Executor(cfg.Runner.Sandbox.ExecutorPath))

	if cfg.Runner.Leaf.BaseURL == "" {
		results = append(results, doctor.Result{Name: "model", Status: doctor.Skip, Detail: "FROGNANO_MODEL_URL is not set"})
	} else {
		m := doctor.Model(ctx, cfg.Runner.Leaf)
		results = append(results, m)
		switch {
		case *quick:
		case m.Status != doctor.Pass:
			results = append(results, doctor.Result{Name: "model-tools", Status: doctor.Skip, Detail: "needs the model served"})
		default:
			results = append(results, doctor.ModelToolCall(ctx, cfg.Runner.Leaf))
		}
	}
	results = append(results, namedModels(ctx, cfg.Runner, *quick)...)

	if cfg.GitHub.AppID == 0 || len(cfg.GitHub.PrivateKey) == 0 {
		results = append(results, doctor.Result{Name: "github", Status: doctor.Skip, Detail: "the GitHub App settings are missing or invalid"})
	} else {
		gh := cfg.GitHub
		gh.MaxRetries = 1 // a preflight reports; it does not wait out a flaky GitHub
		results = append(results, doctor.GitHub(ctx, gh)...)
	}
	results = append(results, doctor.CommitSigning(cfg.GitHub))

	if failed := doctor.Write(stdout, results); failed > 0 {
		return fmt.Errorf("%d of %d checks failed", failed, len(results))
	}
	fmt.Fprintln(stdout, "frognano: everything checked is ready")
	return nil
}

// settingsResult lists the repositories whose settings file (.github/frognano.yml, or their
// organisation's) a run last found invalid: their runs do not start until it is fixed.
func settingsResult(ctx context.Context, url string) doctor.Result {
	const name = "settings"
	pool, err := openPool(ctx, url)
	if err != nil {
		return doctor.Result{Name: name, Status: doctor.Skip, Detail: "cannot open the database: " + err.Error()}
	}
	defer pool.Close()
	invalid, err := runs.NewStore(pool, nil).InvalidSettings(ctx)
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table: not migrated yet
		return doctor.Result{Name: name, Status: doctor.Skip, Detail: "the database is not migrated yet: no run has read a settings file"}
	}
	if err != nil {
		return doctor.Result{Name: name, Status: doctor.Fail, Detail: err.Error(), Fix: "check the database (frognano migrate)"}
	}
	if len(invalid) == 0 {
		return doctor.Result{Name: name, Status: doctor.Pass, Detail: "no repository's settings file was found invalid"}
	}
	var parts []string
	for _, v := range invalid {
		first, _, _ := strings.Cut(v.Problems, "\n")
		part := v.Owner + "/" + v.Repo + ": " + first
		if v.CommentURL != "" {
			part += " (" + v.CommentURL + ")"
		}
		parts = append(parts, part)
	}
	return doctor.Result{Name: name, Status: doctor.Warn,
		Detail: fmt.Sprintf("%d repositories have an invalid settings file, and no run starts there: %s", len(invalid), strings.Join(parts, "; ")),
		Fix:    "ask the repositories to fix it (frognano config check FILE shows every problem)"}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// namedModels checks each model server FROGNANO_MODELS_FILE names (the default one is checked
// above) as the default is: it serves its model and, unless quick, answers a tool call (the
// lines model/NAME and model-tools/NAME).
func namedModels(ctx context.Context, rc runner.Config, quick bool) []doctor.Result {
	if rc.Models == nil {
		return nil
	}
	var results []doctor.Result
	for _, s := range rc.Models.Servers {
		if s.Name == rc.Models.Default {
			continue
		}
		named := func(r doctor.Result) doctor.Result {
			r.Name += "/" + s.Name
			if r.Fix != "" {
				r.Fix += " (this model's entry in " + config.ModelsFileVar + ")"
			}
			return r
		}
		lc := s.Leaf(rc.Leaf)
		m := named(doctor.Model(ctx, lc))
		results = append(results, m)
		switch {
		case quick:
		case m.Status != doctor.Pass:
			results = append(results, named(doctor.Result{Name: "model-tools", Status: doctor.Skip, Detail: "needs the model served"}))
		default:
			results = append(results, named(doctor.ModelToolCall(ctx, lc)))
		}
	}
	return results
}

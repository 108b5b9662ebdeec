package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/frognano/frognano/githubapp"
	// runs, not run: package main has its run function.
	"github.com/frognano/frognano/report"
	runs "github.com/frognano/frognano/run"
	"github.com/frognano/frognano/stats"
)

// runsCmd is `frognano runs [--limit N]` (the newest runs) and `frognano runs show ID
// [--report|--trajectory|--patch|--setup-log]` (one run): the history kept in PostgreSQL, for operators.
func runsCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "start" {
		return runsStartCmd(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "show" {
		fs := newFlagSet("runs show", stderr)
		what := ""
		fs.BoolFunc("report", "print the run's report (markdown)", func(string) error { what = "report"; return nil })
		fs.BoolFunc("trajectory", "print the run's trajectory (JSON)", func(string) error { what = "trajectory"; return nil })
		fs.BoolFunc("patch", "print the run's patch", func(string) error { what = "patch"; return nil })
		fs.BoolFunc("setup-log", "print the output of the repository's setup script, when this run ran it", func(string) error { what = "setup-log"; return nil })
		fs.BoolFunc("audit", "print what the run did on GitHub (its audit trail), who started it and who stopped it", func(string) error { what = "audit"; return nil })
		// The id and the flags in either order: `runs show 12 --audit` or `runs show --audit 12`.
		var idArg string
		var flags []string
		for _, a := range args[1:] {
			if idArg == "" && !strings.HasPrefix(a, "-") {
				idArg = a
				continue
			}
			flags = append(flags, a)
		}
		if idArg == "" {
			return usageError{"frognano runs show needs a run id"}
		}
		id, err := strconv.ParseInt(idArg, 10, 64)
		if err != nil || id <= 0 {
			return usageError{fmt.Sprintf("run id %q is not a positive number", idArg)}
		}
		if err := parseFlags(fs, flags); err != nil {
			return err
		}
		reader, done, err := openStore(ctx, getenv)
		if err != nil {
			return err
		}
		defer done()
		r, err := reader.Run(ctx, id)
		if errors.Is(err, runs.ErrNoRun) {
			return usageError{fmt.Sprintf("there is no run %d", id)}
		}
		if err != nil {
			return err
		}
		switch what {
		case "report":
			_, err = io.WriteString(stdout, r.Report)
		case "trajectory":
			_, err = stdout.Write(append(r.Trajectory, '\n'))
		case "patch":
			_, err = stdout.Write(r.Patch)
		case "setup-log":
			if r.SetupLog == "" {
				fmt.Fprintf(stderr, "frognano: run %d ran no setup script (its environment: %s)\n", r.ID, dash(r.Environment))
				return nil
			}
			_, err = io.WriteString(stdout, r.SetupLog)
		case "audit":
			err = writeRunAudit(ctx, stdout, reader, r)
		default:
			err = writeRunFacts(stdout, r)
		}
		return err
	}
	fs := newFlagSet("runs", stderr)
	limit := fs.Int("limit", 20, "how many runs, newest first")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *limit < 1 {
		return usageError{"--limit must be at least 1"}
	}
	pool, err := openDatabase(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	list, err := runs.NewStore(pool, nil).Runs(ctx, runs.Filter{Limit: *limit})
	if err != nil {
		return err
	}
	// What became of each run's pull request (pull_outcomes), as the run pages' list says it.
	var keys []stats.PullKey
	for _, r := range list {
		if r.PRNumber > 0 {
			keys = append(keys, stats.PullKey{RepoID: r.RepoID, Number: r.PRNumber})
		}
	}
	outcomes, err := stats.NewStore(pool).PullStates(ctx, keys)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tISSUE\tSTATE\tEXIT\tSTEPS\tASKED BY\tCREATED\tTOOK\tPR\tPR NOW")
	for _, r := range list {
		took := ""
		if r.FinishedAt != nil {
			took = listDuration(r.FinishedAt.Sub(r.CreatedAt))
		}
		fmt.Fprintf(tw, "%d\t%s/%s#%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Owner, r.Repo, r.Issue, r.State,
			dash(r.ExitReason), r.Steps, dash(askedBy(r)), r.CreatedAt.UTC().Format("2006-01-02 15:04"), dash(took),
			dash(r.PRURL), dash(outcomes[stats.PullKey{RepoID: r.RepoID, Number: r.PRNumber}]))
	}
	return tw.Flush()
}

// openStore opens the runs of the database DATABASE_URL names for a command that reads or
// changes them (runs, usage, budget), as openDatabase does.
func openStore(ctx context.Context, getenv func(string) string) (*runs.Store, func(), error) {
	pool, err := openDatabase(ctx, getenv)
	if err != nil {
		return nil, nil, err
	}
	return runs.NewStore(pool, nil), pool.Close, nil
}

func writeRunFacts(w io.Writer, r runs.Record) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%d\n", r.ID)
	asked := "labelled by " + r.Labeler
	if r.Trigger == runs.TriggerAPI {
		asked = "asked through the API"
	}
	fmt.Fprintf(tw, "issue\t%s/%s#%d (%s)\n", r.Owner, r.Repo, r.Issue, asked)
	fmt.Fprintf(tw, "started by\t%s\n", runs.StartedBy(r))
	if by := runs.StoppedBy(r); by != "" {
		fmt.Fprintf(tw, "stopped by\t%s\n", by)
	}
	if r.State == runs.StateWaiting {
		fmt.Fprintf(tw, "state\t%s (for the active run of this pull request to end; it has no job yet)\n", r.State)
	} else {
		fmt.Fprintf(tw, "state\t%s\n", r.State)
	}
	if r.ExitReason != "" {
		fmt.Fprintf(tw, "exit reason\t%s\n", r.ExitReason)
	}
	fmt.Fprintf(tw, "steps\t%d\n", r.Steps)
	// Each figure once (issue 31): the tries are in the attempts line, the time in all in
	// the time line; a figure the run does not have is left out or says "not yet".
	if r.State != runs.StateWaiting { // a waiting run has not started: it used nothing
		for _, l := range runs.UsageLines(r) { // tokens, time, sandboxes, attempts, model (issue 22)
			fmt.Fprintf(tw, "%s\t%s\n", l[0], l[1])
		}
	}
	fmt.Fprintf(tw, "created\t%s\n", r.CreatedAt.UTC().Format(time.RFC3339))
	if r.FinishedAt != nil {
		fmt.Fprintf(tw, "finished\t%s\n", r.FinishedAt.UTC().Format(time.RFC3339))
	}
	if r.Environment != "" {
		fmt.Fprintf(tw, "environment\t%s\n", r.Environment)
	}
	switch {
	case r.PRURL != "":
		fmt.Fprintf(tw, "pull request\t%s\n", r.PRURL)
	case runs.Unfinished(r.State):
		fmt.Fprintf(tw, "pull request\tnot yet\n")
	default:
		fmt.Fprintf(tw, "pull request\tnone\n")
	}
	if r.Error != "" {
		fmt.Fprintf(tw, "error\t%s\n", r.Error)
	}
	fmt.Fprintf(tw, "kept\treport %d bytes, trajectory %d bytes, patch %d bytes, setup log %d bytes (frognano runs show %d --report|--trajectory|--patch|--setup-log|--audit)\n",
		len(r.Report), len(r.Trajectory), len(r.Patch), len(r.SetupLog), r.ID)
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeRunAudit prints who started run r, who stopped it, which model wrote its patch, and
// every write it made on GitHub (its audit trail), oldest first.
func writeRunAudit(ctx context.Context, w io.Writer, reader runs.Reader, r runs.Record) error {
	trail, err := reader.Audit(ctx, r.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "run %d on %s/%s#%d\nstarted by %s\n", r.ID, r.Owner, r.Repo, r.Issue, runs.StartedBy(r))
	if by := runs.StoppedBy(r); by != "" {
		fmt.Fprintf(w, "stopped by %s\n", by)
	}
	if r.Usage.Model != "" {
		fmt.Fprintf(w, "patch written by model %s\n", report.Visible(r.Usage.Model))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nTIME (UTC)\tACTION\tOBJECT\tSHA\tREQUEST ID\tURL\tOUTCOME")
	unknown := 0
	for _, e := range trail {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.At.UTC().Format("2006-01-02 15:04:05"), report.Visible(e.Action),
			report.Visible(dash(strings.TrimSpace(e.ObjectType+" "+e.ObjectID))), report.Visible(dash(e.ObjectSHA)), report.Visible(dash(e.RequestID)),
			report.Visible(dash(e.ObjectURL)), report.Visible(e.OutcomeText()))
		if e.Outcome == githubapp.OutcomeUnknown {
			unknown++
		}
	}
	if len(trail) == 0 {
		fmt.Fprintln(tw, "(no write on GitHub)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unknown > 0 {
		fmt.Fprintf(w, "\n%d write(s) got no answer that says what became of them (outcome unknown): each may have happened; look at its object on GitHub.\n", unknown)
	}
	return nil
}

// listDuration is how long a run took, for the list: to the second under two days, in days and
// hours beyond (the run pages' list says it the same way).
func listDuration(d time.Duration) string {
	if d >= 48*time.Hour {
		return stats.FormatDuration(d)
	}
	return d.Round(time.Second).String()
}

// askedBy is who asked for run r, short, for the list (runs show says how: runs.StartedBy).
func askedBy(r runs.Record) string {
	switch {
	case r.Trigger == runs.TriggerAPI:
		return "token " + strings.TrimPrefix(r.Labeler, runs.TokenRequester(""))
	case r.Kind == runs.KindCI:
		return "CI"
	case r.Labeler == "":
		return ""
	}
	return "@" + r.Labeler
}

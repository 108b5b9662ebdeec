package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/export"
)

// exportCmd is `frognano export --repo OWNER/REPO [--repo ...] --format leaf|chat-jsonl --out
// FILE [--since DATE|DURATION] [--outcome merged|closed|any] [--dry-run]`: the runs of the
// named repositories as data (package export, docs/export.md).
func exportCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, now time.Time) error {
	fs := newFlagSet("export", stderr)
	var repoArgs stringsFlag
	fs.Var(&repoArgs, "repo", "OWNER/REPO whose runs to export (repeat it for more; required: no repository is exported unless named)")
	sinceText := fs.String("since", "", "only runs created since: a UTC date (YYYY-MM-DD) or a duration before now (72h, 30d)")
	outcome := fs.String("outcome", export.OutcomeAny, "the pull request's outcome: merged, closed (without merge) or any (every run)")
	format := fs.String("format", "", "leaf (Leaf's trajectory documents) or chat-jsonl (chat-completions fine-tuning records)")
	out := fs.String("out", "", "the records file; the labels go to FILE"+export.LabelsSuffix)
	dry := fs.Bool("dry-run", false, "print what would be exported (runs per repository, total, estimated size) and write nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	opt := export.Options{Outcome: *outcome, Format: *format, Out: *out}
	if len(repoArgs) == 0 {
		return usageError{"give --repo OWNER/REPO for each repository whose runs to export: none is exported unless named"}
	}
	for _, a := range repoArgs {
		r, err := export.ParseRepo(a)
		if err != nil {
			return usageError{"--repo " + err.Error()}
		}
		opt.Repos = append(opt.Repos, r)
	}
	switch *format {
	case export.FormatLeaf, export.FormatChat:
	case "":
		return usageError{"give --format leaf or --format chat-jsonl"}
	default:
		return usageError{fmt.Sprintf("--format %q: use leaf or chat-jsonl", *format)}
	}
	switch *outcome {
	case export.OutcomeAny, export.OutcomeMerged, export.OutcomeClosed:
	default:
		return usageError{fmt.Sprintf("--outcome %q: use merged, closed or any", *outcome)}
	}
	if *out == "" {
		return usageError{"give --out FILE: the records file (its labels go to FILE" + export.LabelsSuffix + ")"}
	}
	if *sinceText != "" {
		t, err := export.ParseSince(*sinceText, now)
		if err != nil {
			return usageError{"--since " + err.Error()}
		}
		opt.Since = t
	}
	opt.Secrets = config.ExportSecrets(getenv)
	pool, err := openDatabase(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	if *dry {
		d, err := export.Plan(ctx, pool, opt)
		if err != nil {
			return exportError(err)
		}
		return writeDryRun(stdout, stderr, d, opt)
	}
	p := newExportProgress(stderr)
	opt.Progress = p.show
	sum, err := export.Run(ctx, pool, opt)
	p.clear()
	for _, m := range sum.Missing {
		fmt.Fprintf(stderr, "frognano: no run of %s is kept: nothing of it exported\n", m)
	}
	if err != nil {
		if sum.Written > 0 || sum.Kept > 0 {
			fmt.Fprintf(stderr, "frognano: stopped after run %d; run the same command again to continue\n", sum.LastID)
		}
		return exportError(err)
	}
	fmt.Fprintln(stderr, exportSummary(sum, opt))
	return nil
}

// exportError makes a refusal to continue a file of another format a usage error (exit 2).
func exportError(err error) error {
	var re *export.ResumeError
	if errors.As(err, &re) {
		return usageError{re.Error()}
	}
	return err
}

// exportSummary is the line an export ends with, on a terminal or not.
func exportSummary(s export.Summary, opt export.Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "frognano: exported %d run(s) to %s and %s (%s)", s.Written, opt.Out, opt.Out+export.LabelsSuffix, megabytes(s.Bytes))
	if s.Kept > 0 {
		fmt.Fprintf(&b, ", after the %d already there", s.Kept)
	}
	if len(s.Skipped) > 0 {
		fmt.Fprintf(&b, "; %d left out (no whole model turn, or an unreadable trajectory)", len(s.Skipped))
	}
	return b.String()
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// writeDryRun prints what an export would write: one line per repository, the total, and where
// it would continue.
func writeDryRun(stdout, stderr io.Writer, d export.DryRun, opt export.Options) error {
	for _, m := range d.Missing {
		fmt.Fprintf(stderr, "frognano: no run of %s is kept: nothing of it would be exported\n", m)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPOSITORY\tRUNS\tESTIMATED SIZE")
	for _, r := range d.Repos {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Repo, r.Runs, megabytes(r.Bytes))
	}
	fmt.Fprintf(tw, "total\t%d\t%s\n", d.Runs, megabytes(d.Bytes))
	if err := tw.Flush(); err != nil {
		return err
	}
	if d.Kept > 0 {
		fmt.Fprintf(stdout, "%s already holds %d record(s), up to run %d: the export would continue after it.\n", opt.Out, d.Kept, d.After)
	}
	fmt.Fprintf(stdout, "Dry run: nothing was written (format %s, outcome %s).\n", opt.Format, opt.Outcome)
	return nil
}

// exportProgress draws one line on a terminal, at most ten times a second; elsewhere nothing
// (the summary line says the end).
type exportProgress struct {
	w    io.Writer
	tty  bool
	mu   sync.Mutex
	last time.Time
	drew bool
}

func newExportProgress(w io.Writer) *exportProgress {
	return &exportProgress{w: w, tty: isTerminal(w)}
}

func (p *exportProgress) show(pr export.Progress) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 100*time.Millisecond && pr.Done < pr.Total {
		return
	}
	p.last, p.drew = time.Now(), true
	fmt.Fprintf(p.w, "\r\x1b[Kfrognano: exporting %d/%d run(s), %s", pr.Done, pr.Total, megabytes(pr.Bytes))
}

func (p *exportProgress) clear() {
	if p.tty && p.drew {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

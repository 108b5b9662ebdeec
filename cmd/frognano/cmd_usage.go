package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	runs "github.com/frognano/frognano/run"
)

// usageCmd is `frognano usage [--since DATE] [--by installation|repository|person|model]
// [--format table|csv|json]`: what the runs created since DATE (default: the last 30 days)
// used, from the database, the largest token use first.
func usageCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, now time.Time) error {
	fs := newFlagSet("usage", stderr)
	sinceText := fs.String("since", "", "count the runs created on or after this UTC date, YYYY-MM-DD (default: 30 days ago)")
	by := fs.String("by", runs.ByInstallation, "group by installation, repository, person (who started the runs) or model (which wrote the patch)")
	format := fs.String("format", "table", "table, csv or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	since := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -30)
	if *sinceText != "" {
		t, err := time.Parse("2006-01-02", *sinceText)
		if err != nil {
			return usageError{fmt.Sprintf("--since %q is not a date (YYYY-MM-DD)", *sinceText)}
		}
		since = t
	}
	switch *by {
	case runs.ByInstallation, runs.ByRepository, runs.ByPerson, runs.ByModel:
	default:
		return usageError{fmt.Sprintf("--by %q: use installation, repository, person or model", *by)}
	}
	switch *format {
	case "table", "csv", "json":
	default:
		return usageError{fmt.Sprintf("--format %q: use table, csv or json", *format)}
	}
	st, done, err := openStore(ctx, getenv)
	if err != nil {
		return err
	}
	defer done()
	rows, err := st.UsageReport(ctx, since, *by)
	if err != nil {
		return err
	}
	return writeUsage(stdout, rows, *by, *format, since)
}

// usageColumns are the columns of every format, in order.
var usageColumns = []string{"runs", "started", "prompt_tokens", "completion_tokens", "cached_tokens",
	"model_seconds", "tool_seconds", "test_seconds", "sandbox_cpu_seconds", "sandbox_peak_bytes"}

func usageValues(u runs.UsageRow) []string {
	sec := func(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) }
	return []string{strconv.FormatInt(u.Runs, 10), strconv.FormatInt(u.Started, 10), strconv.FormatInt(u.PromptTokens, 10),
		strconv.FormatInt(u.CompletionTokens, 10), strconv.FormatInt(u.CachedTokens, 10), sec(u.ModelMS), sec(u.ToolMS),
		sec(u.TestMS), sec(u.SandboxCPUMS), strconv.FormatInt(u.SandboxPeakBytes, 10)}
}

// writeUsage prints rows grouped by by in format (table, csv, json).
func writeUsage(w io.Writer, rows []runs.UsageRow, by, format string, since time.Time) error {
	switch format {
	case "json":
		type row struct {
			Key              string  `json:"key"`
			Runs             int64   `json:"runs"`
			Started          int64   `json:"started"`
			PromptTokens     int64   `json:"prompt_tokens"`
			CompletionTokens int64   `json:"completion_tokens"`
			CachedTokens     int64   `json:"cached_tokens"`
			ModelSeconds     float64 `json:"model_seconds"`
			ToolSeconds      float64 `json:"tool_seconds"`
			TestSeconds      float64 `json:"test_seconds"`
			SandboxCPU       float64 `json:"sandbox_cpu_seconds"`
			SandboxPeakBytes int64   `json:"sandbox_peak_bytes"`
		}
		out := struct {
			Since string `json:"since"`
			By    string `json:"by"`
			Rows  []row  `json:"rows"`
		}{Since: since.UTC().Format(time.RFC3339), By: by, Rows: []row{}}
		for _, u := range rows {
			out.Rows = append(out.Rows, row{u.Key, u.Runs, u.Started, u.PromptTokens, u.CompletionTokens, u.CachedTokens,
				float64(u.ModelMS) / 1000, float64(u.ToolMS) / 1000, float64(u.TestMS) / 1000, float64(u.SandboxCPUMS) / 1000, u.SandboxPeakBytes})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(append([]string{by}, usageColumns...)); err != nil {
			return err
		}
		for _, u := range rows {
			// A login or a repository's name cannot start a formula: GitHub allows letters,
			// digits, '-', '_' and '.' only; the key is written as is.
			if err := cw.Write(append([]string{u.Key}, usageValues(u)...)); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t%s\t\n", strings.ToUpper(by), strings.ToUpper(strings.Join(usageColumns, "\t")))
	for _, u := range rows {
		fmt.Fprintf(tw, "%s\t%s\t\n", u.Key, strings.Join(usageValues(u), "\t"))
	}
	if len(rows) == 0 {
		fmt.Fprintf(tw, "(no runs since %s)\t\n", since.UTC().Format("2006-01-02"))
	}
	return tw.Flush()
}

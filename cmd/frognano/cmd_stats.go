package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/frognano/frognano/stats"
)

// statsCmd is `frognano stats [--since DATE|DURATION] [--by repository|model|week|label]
// [--format table|csv|json]`: what became of frognano's pull requests opened since the start
// (default: 90 days), per group, with a row for all of them (docs/stats.md defines each figure).
func statsCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, now time.Time) error {
	fs := newFlagSet("stats", stderr)
	sinceText := fs.String("since", "", "count the runs created and the pull requests opened on or after this UTC date (YYYY-MM-DD) or this long ago (90d, 12w, 36h); default 90 days")
	by := fs.String("by", stats.ByRepository, "group by repository, model (that wrote the patch), week (ISO, UTC) or label (that started the run; else how it was asked for)")
	format := fs.String("format", "table", "table, csv or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	since, err := stats.ParseSince(*sinceText, now)
	if err != nil {
		return usageError{"--since " + err.Error()}
	}
	if !slices.Contains(stats.Groupings, *by) {
		return usageError{fmt.Sprintf("--by %q: use repository, model, week or label", *by)}
	}
	switch *format {
	case "table", "csv", "json":
	default:
		return usageError{fmt.Sprintf("--format %q: use table, csv or json", *format)}
	}
	pool, err := openDatabase(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	h, err := stats.NewStore(pool).History(ctx, since)
	if err != nil {
		return err
	}
	rep, err := h.Figures(*by, nil)
	if err != nil {
		return err
	}
	return writeStats(stdout, rep, *format)
}

// statsColumns are the columns of the table and of the CSV after the group's key.
var statsColumns = []string{"runs", "opened", "merged", "closed", "open", "acceptance", "acceptance_low", "acceptance_high",
	"median_hours_to_merge", "median_people_share", "followups_per_pr", "tokens_per_merged_pr"}

// statsJSON is one group in `--format json`; a figure with nothing to be computed from is null.
type statsJSON struct {
	Key                string   `json:"key"`
	RepoID             int64    `json:"repo_id,omitempty"`
	Runs               int      `json:"runs"`
	Opened             int      `json:"opened"`
	Merged             int      `json:"merged"`
	Closed             int      `json:"closed"`
	Open               int      `json:"open"`
	Acceptance         *float64 `json:"acceptance"`
	AcceptanceLow      *float64 `json:"acceptance_low"`
	AcceptanceHigh     *float64 `json:"acceptance_high"`
	MedianHoursToMerge *float64 `json:"median_hours_to_merge"`
	MedianPeopleShare  *float64 `json:"median_people_share"`
	ShareMeasured      int      `json:"share_measured"`
	FollowUpsPerPR     *float64 `json:"followups_per_pr"`
	TokensPerMergedPR  *float64 `json:"tokens_per_merged_pr"`
}

func statsRow(f stats.Figures) statsJSON {
	r := statsJSON{Key: f.Key, RepoID: f.RepoID, Runs: f.Runs, Opened: f.Opened, Merged: f.Merged, Closed: f.Closed, Open: f.Open,
		MedianPeopleShare: f.MedianPeopleShare, ShareMeasured: f.ShareMeasured, FollowUpsPerPR: f.FollowUpsPerPull, TokensPerMergedPR: f.TokensPerMerged}
	if a := f.Acceptance; a != nil {
		r.Acceptance, r.AcceptanceLow, r.AcceptanceHigh = &a.Value, &a.Low, &a.High
	}
	if d := f.MedianTimeToMerge; d != nil {
		h := d.Hours()
		r.MedianHoursToMerge = &h
	}
	return r
}

// csvValues are f's values in statsColumns' order, numbers as numbers, "" for none.
func csvValues(f stats.Figures) []string {
	r := statsRow(f)
	num := func(v *float64, prec int) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', prec, 64)
	}
	return []string{strconv.Itoa(r.Runs), strconv.Itoa(r.Opened), strconv.Itoa(r.Merged), strconv.Itoa(r.Closed), strconv.Itoa(r.Open),
		num(r.Acceptance, 4), num(r.AcceptanceLow, 4), num(r.AcceptanceHigh, 4), num(r.MedianHoursToMerge, 2),
		num(r.MedianPeopleShare, 4), num(r.FollowUpsPerPR, 2), num(r.TokensPerMergedPR, 0)}
}

// tableValues are f's values for people: a figure with nothing to be computed from is "-".
func tableValues(f stats.Figures) []string {
	acc, ttm, share, follow, tokens := "-", "-", "-", "-", "-"
	if a := f.Acceptance; a != nil {
		acc = fmt.Sprintf("%s (%s-%s)", stats.Percent(a.Value), stats.Percent(a.Low), stats.Percent(a.High))
	}
	if d := f.MedianTimeToMerge; d != nil {
		ttm = stats.FormatDuration(*d)
	}
	if s := f.MedianPeopleShare; s != nil {
		share = fmt.Sprintf("%s of %d", stats.Percent(*s), f.ShareMeasured)
	}
	if v := f.FollowUpsPerPull; v != nil {
		follow = strconv.FormatFloat(*v, 'f', 2, 64)
	}
	if v := f.TokensPerMerged; v != nil {
		tokens = strconv.FormatFloat(*v, 'f', 0, 64)
	}
	return []string{strconv.Itoa(f.Runs), strconv.Itoa(f.Opened), strconv.Itoa(f.Merged), strconv.Itoa(f.Closed), strconv.Itoa(f.Open),
		acc, ttm, share, follow, tokens}
}

// writeStats prints rep in format (table, csv, json).
func writeStats(w io.Writer, rep stats.Report, format string) error {
	switch format {
	case "json":
		out := struct {
			Since  string      `json:"since"`
			By     string      `json:"by"`
			Groups []statsJSON `json:"groups"`
			Total  statsJSON   `json:"total"`
		}{Since: rep.Since.UTC().Format(time.RFC3339), By: rep.By, Groups: []statsJSON{}, Total: statsRow(rep.Total)}
		for _, f := range rep.Groups {
			out.Groups = append(out.Groups, statsRow(f))
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(append([]string{rep.By}, statsColumns...)); err != nil {
			return err
		}
		for _, f := range append(slices.Clone(rep.Groups), rep.Total) {
			// A label is a person's text and could start a spreadsheet formula: such a key
			// is written after a quote mark, as spreadsheets recommend.
			if err := cw.Write(append([]string{csvSafe(f.Key)}, csvValues(f)...)); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tRUNS\tOPENED\tMERGED\tCLOSED\tOPEN\tACCEPTANCE (95%% CI)\tTIME TO MERGE\tPEOPLE CHANGED\tFOLLOW-UPS/PR\tTOKENS/MERGED\t\n", strings.ToUpper(rep.By))
	for _, f := range rep.Groups {
		fmt.Fprintf(tw, "%s\t%s\t\n", visibleKey(f.Key), strings.Join(tableValues(f), "\t"))
	}
	if len(rep.Groups) == 0 {
		fmt.Fprintf(tw, "(no runs and no pull requests since %s)\t\n", rep.Since.UTC().Format("2006-01-02 15:04"))
	} else {
		fmt.Fprintf(tw, "%s\t%s\t\n", rep.Total.Key, strings.Join(tableValues(rep.Total), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nSince %s. Acceptance: merged / (merged + closed without merge), 95%% Wilson interval. "+
		"Time to merge and the share of the patch people changed: medians over the merged pull requests (docs/stats.md).\n",
		rep.Since.UTC().Format("2006-01-02 15:04 UTC"))
	return err
}

// visibleKey is a key as a terminal shows it: a label's control characters and tabs (which
// would break the table) as their escapes.
func visibleKey(k string) string {
	q := strconv.QuoteToGraphic(k)
	if q[1:len(q)-1] == k {
		return k
	}
	return q
}

func csvSafe(k string) string {
	if k != "" && strings.ContainsRune("=+-@\t\r", rune(k[0])) && k != stats.None {
		return "'" + k
	}
	return k
}

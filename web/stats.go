package web

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/stats"
	"github.com/frognano/frognano/web/auth"
)

// statsView is what /stats shows: the figures of the repositories the viewer may read, and
// two charts of their acceptance (per week, per repository).
type statsView struct {
	Since     string // the start as given ("" : the default)
	From      time.Time
	By        string
	Groupings []string
	Report    stats.Report
	Charts    []chart
	Problem   string // a start or grouping that could not be used
	Unchecked bool   // access to some repository could not be checked: its figures are left out
}

// chart is a horizontal bar chart of acceptance rates, drawn as inline SVG on the server: no
// script, and the page's content security policy stays as it is.
type chart struct {
	ID, Title, Desc string
	Width, Height   int
	Bars            []bar
}

// bar is one group's acceptance: a bar as wide as the rate, a line over its 95% interval.
type bar struct {
	Label        string
	Y, TextY     int
	Width        float64 // of the bar, in the chart's units (barArea for 100%)
	Low, High    float64 // x of the interval's ends
	Value        string  // the rate as data-value (0.6667), for tests and tools
	Text         string  // what it says: "67% (2 of 3)"; "none decided" without a bar
	Title        string  // the bar's accessible name
	HasRate      bool
	ValueX, MidY int
}

// Chart geometry: a label column, the bars' area, then the value's text.
const (
	labelWidth = 170
	barArea    = 380
	rowHeight  = 28
	chartPad   = 8
)

// makeChart draws rep's groups, one bar each, in rep's order.
func makeChart(id, title, what string, rep stats.Report) chart {
	c := chart{ID: id, Title: title, Width: labelWidth + barArea + 170}
	decided := 0
	for i, f := range rep.Groups {
		y := chartPad + i*rowHeight
		b := bar{Label: clipLabel(f.Key), Y: y + 4, TextY: y + 18, MidY: y + 14, Text: "none decided", ValueX: labelWidth + 6}
		if a := f.Acceptance; a != nil {
			decided++
			b.HasRate = true
			b.Width = a.Value * barArea
			b.Low, b.High = labelWidth+a.Low*barArea, labelWidth+a.High*barArea
			b.Value = strconv.FormatFloat(a.Value, 'f', 4, 64)
			b.Text = fmt.Sprintf("%s (%d of %d)", stats.Percent(a.Value), a.Merged, a.Decided)
			b.ValueX = labelWidth + barArea + 6
			b.Title = fmt.Sprintf("%s: %s of the decided pull requests merged (%d of %d), 95%% interval %s to %s",
				f.Key, stats.Percent(a.Value), a.Merged, a.Decided, stats.Percent(a.Low), stats.Percent(a.High))
		} else {
			b.Title = f.Key + ": no pull request merged or closed yet"
		}
		c.Bars = append(c.Bars, b)
	}
	c.Height = 2*chartPad + len(rep.Groups)*rowHeight
	c.Desc = fmt.Sprintf("Acceptance (merged of merged and closed without merge) %s since %s: %d of %d with pull requests decided; each bar's line is its 95%% interval.",
		what, rep.Since.UTC().Format("2006-01-02"), decided, len(rep.Groups))
	return c
}

// clipLabel keeps a chart's label within its column; the full key is in the bar's title.
func clipLabel(s string) string {
	const max = 24
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

func (p *Pages) handleStats(w http.ResponseWriter, r *http.Request) {
	v, ok := p.viewer(w, r, true)
	if !ok {
		return
	}
	q := r.URL.Query()
	view := statsView{Since: q.Get("since"), By: q.Get("by"), Groupings: stats.Groupings}
	if view.By == "" {
		view.By = stats.ByRepository
	}
	from, err := stats.ParseSince(view.Since, time.Now())
	switch {
	case len(view.Since) > 40:
		view.Problem = "The start is a date (YYYY-MM-DD) or a duration (90d, 12w)."
	case err != nil:
		view.Problem = "The start is a date (YYYY-MM-DD) or a duration (90d, 12w): " + err.Error() + "."
	case !slices.Contains(stats.Groupings, view.By):
		view.Problem = "Figures are grouped by repository, model, week or label."
	}
	if view.Problem != "" {
		p.render(w, r, http.StatusBadRequest, "stats", page{Title: "Stats", Viewer: v.Login, Data: view})
		return
	}
	view.From = from
	h, err := p.cfg.Stats.History(r.Context(), from)
	if err != nil {
		p.cfg.Logger.ErrorContext(r.Context(), "reading the figures", logging.Err(err))
		http.Error(w, "the figures could not be read", http.StatusInternalServerError)
		return
	}
	// Only the repositories the viewer can read, asked by id as the runs list asks (each once);
	// a repository GitHub could not answer for is left out, and the page says so.
	readable := map[int64]bool{}
	for _, id := range h.RepoIDs() {
		can, err := p.cfg.Auth.CanRead(r.Context(), v, id)
		if errors.Is(err, auth.ErrSignedOut) {
			p.signIn(w, r, true)
			return
		}
		if err != nil {
			p.cfg.Logger.WarnContext(r.Context(), "checking read access", "viewer", v, "repo_id", id, logging.Err(err))
			view.Unchecked = true
			can = false
		}
		readable[id] = can
	}
	keep := func(id int64) bool { return readable[id] }
	reports := map[string]stats.Report{}
	for _, by := range []string{view.By, stats.ByWeek, stats.ByRepository} {
		if _, done := reports[by]; done {
			continue
		}
		if reports[by], err = h.Figures(by, keep); err != nil {
			p.cfg.Logger.ErrorContext(r.Context(), "computing the figures", logging.Err(err))
			http.Error(w, "the figures could not be computed", http.StatusInternalServerError)
			return
		}
	}
	view.Report = reports[view.By]
	view.Charts = []chart{
		makeChart("chart-week", "Acceptance per week", "per ISO week (UTC) of opening", reports[stats.ByWeek]),
		makeChart("chart-repository", "Acceptance per repository", "per repository", reports[stats.ByRepository]),
	}
	p.render(w, r, http.StatusOK, "stats", page{Title: "Stats", Viewer: v.Login, Data: view})
}

// The figures as the page words them: a figure with nothing to be computed from says why in
// words, never "-".

func acceptanceCell(r *stats.Rate) string {
	if r == nil {
		return "none decided"
	}
	return fmt.Sprintf("%s (%s to %s)", stats.Percent(r.Value), stats.Percent(r.Low), stats.Percent(r.High))
}

func timeToMergeCell(d *time.Duration) string {
	if d == nil {
		return "none merged"
	}
	return stats.FormatDuration(*d)
}

func shareCell(s *float64, measured int) string {
	if s == nil {
		return "not measured"
	}
	return fmt.Sprintf("%s (of %d)", stats.Percent(*s), measured)
}

func perPullCell(v *float64) string {
	if v == nil {
		return "none opened"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

func tokensCell(v *float64) string {
	if v == nil {
		return "none merged"
	}
	return strconv.FormatFloat(*v, 'f', 0, 64)
}

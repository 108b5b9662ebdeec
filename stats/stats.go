// Package stats owns the acceptance figures of frognano's pull requests (issue 31): how many
// runs there were, how many pull requests they opened, what people did with them (merged,
// closed without merge, still open), the acceptance rate with its 95% interval, the median
// time to merge, the median share of the patch people changed, follow-ups per pull request
// and tokens per merged pull request, for a period and grouped by repository, model, ISO week
// or label. `frognano stats` and the web stats page (and the runs list, for what became of a
// run's pull request) read them here. Every figure's definition is in docs/stats.md and on
// the Figures type.
//
// stats only reads: it never writes a table (pull_outcomes is package outcome's, runs is
// run.Store's), never talks to GitHub and holds no credential. It never decides who may see
// a figure either: its callers pass the repositories a person may read (Keep), and a figure
// is computed from those repositories' rows only.
package stats

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/frognano/frognano/eval"
)

// Groupings of Figures (`frognano stats --by`).
const (
	ByRepository = "repository" // GitHub's id of the repository, shown by its latest name
	ByModel      = "model"      // the operator's name of the model that wrote the patch
	ByWeek       = "week"       // the ISO week (UTC) a run was created or a pull request opened
	ByLabel      = "label"      // the label that started the run, else how it was asked for
)

// Groupings lists the groupings in the order the command's help names them.
var Groupings = []string{ByRepository, ByModel, ByWeek, ByLabel}

// None is the key of a group whose value was not recorded (a run from before the model or
// the trigger was kept).
const None = "-"

// Pull states as pull_outcomes.state holds them. A state not named here (a repository or a
// pull request deleted while open: "gone") is neither merged, nor closed, nor open: such a
// pull request counts as opened only.
const (
	StateOpen   = "open"
	StateMerged = "merged"
	StateClosed = "closed"
)

// Pull is one of frognano's own pull requests (pull_outcomes.ours) as the figures read it.
type Pull struct {
	RepoID int64
	Number int
	Name   string // owner/name as pull_outcomes last recorded it
	// Model is pull_outcomes.model (the model of the last run's patch), Label the label that
	// started the pull request's first run (runs.trigger_label, else runs.trigger); "" when
	// not recorded.
	Model, Label string
	OpenedAt     time.Time
	State        string
	EndedAt      *time.Time
	// PatchLines and PeopleLines are pull_outcomes' measure at merge (nil: not measured).
	PatchLines, PeopleLines *int
	FollowUps               int
	// Tokens is the prompt and completion tokens of every run that published to the pull
	// request (runs.pr_number), whenever it ran.
	Tokens int64
}

// RunCount is how many runs of one repository, model, week and label were created.
type RunCount struct {
	RepoID int64
	Model  string
	Week   time.Time // the Monday (UTC) of the runs' ISO week
	Label  string
	Runs   int
}

// History is what the figures are computed from: the runs created and frognano's pull
// requests opened at or after Since. Names maps a repository's id to its latest name.
type History struct {
	Since time.Time
	Pulls []Pull
	Runs  []RunCount
	Names map[int64]string
}

// RepoIDs returns the repositories the history holds, each once, in increasing order: what a
// caller asks a person's access about before Figures.
func (h *History) RepoIDs() []int64 {
	seen := map[int64]bool{}
	for _, p := range h.Pulls {
		seen[p.RepoID] = true
	}
	for _, r := range h.Runs {
		seen[r.RepoID] = true
	}
	ids := make([]int64, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Rate is an acceptance rate: Merged of Decided (merged + closed without merge), with the
// 95% Wilson score interval eval.Wilson gives (the statistics of `frognano eval`).
type Rate struct {
	Merged, Decided  int
	Value, Low, High float64
}

// Figures are one group's figures (or every group's, Report.Total). A pointer is nil when
// the figure has nothing to be computed from; the command prints it as "-", the page leaves
// it out.
type Figures struct {
	Key    string // the repository's name, the model, the week (2026-W10) or the label
	RepoID int64  // by repository: GitHub's id of the repository (0 otherwise)
	// Runs is how many runs were created in the period, in any state (queued, running,
	// skipped, refused and failed ones included).
	Runs int
	// Opened is how many of frognano's pull requests were opened in the period (a run
	// published it first at or after the start); Merged, Closed and Open are how many of
	// those are merged, closed without merge and still open now. A pull request in another
	// state (gone: deleted while open) counts in Opened only.
	Opened, Merged, Closed, Open int
	// Acceptance is Merged / (Merged + Closed), nil when both are 0.
	Acceptance *Rate
	// MedianTimeToMerge is the median, over the merged pull requests, of the time from
	// opened to merged; nil when none is merged.
	MedianTimeToMerge *time.Duration
	// MedianPeopleShare is the median, over the merged pull requests whose change was
	// measured (patch_lines > 0), of people_lines / patch_lines: the lines of the merged
	// result that differ from frognano's last head on the files its patches touched, per
	// line its patches changed there. 0 is merged as is; above 1, people changed more lines
	// than frognano wrote. ShareMeasured is how many pull requests it is the median of.
	MedianPeopleShare *float64
	ShareMeasured     int
	// FollowUpsPerPull is the follow-up runs asked on the pull requests opened
	// (pull_outcomes.followups, summed) divided by Opened; nil when none was opened.
	FollowUpsPerPull *float64
	// TokensPerMerged is the prompt and completion tokens of every run that published to a
	// merged pull request, summed over the merged ones and divided by Merged; nil when none
	// is merged.
	TokensPerMerged *float64
}

// Report is the figures of a history for one grouping.
type Report struct {
	Since  time.Time
	By     string
	Groups []Figures // sorted by key (weeks in time order)
	Total  Figures   // every group together (Key "(all)"), computed from the rows, not the groups
}

// TotalKey is Report.Total's key.
const TotalKey = "(all)"

// Week is the key of the ISO week (UTC) that holds t: 2026-W10.
func Week(t time.Time) string {
	y, w := t.UTC().ISOWeek()
	return fmt.Sprintf("%04d-W%02d", y, w)
}

// group is what Figures gathers of one group.
type group struct {
	f       Figures
	toMerge []time.Duration
	shares  []float64
	follow  int
	tokens  int64
}

func (g *group) addPull(p Pull) {
	g.f.Opened++
	g.follow += p.FollowUps
	switch p.State {
	case StateMerged:
		g.f.Merged++
		g.tokens += p.Tokens
		if p.EndedAt != nil {
			g.toMerge = append(g.toMerge, max(0, p.EndedAt.Sub(p.OpenedAt)))
		}
		if p.PatchLines != nil && p.PeopleLines != nil && *p.PatchLines > 0 {
			g.shares = append(g.shares, float64(*p.PeopleLines)/float64(*p.PatchLines))
		}
	case StateClosed:
		g.f.Closed++
	case StateOpen:
		g.f.Open++
	}
}

func (g *group) figures() Figures {
	f := g.f
	if n := f.Merged + f.Closed; n > 0 {
		lo, hi := eval.Wilson(f.Merged, n)
		f.Acceptance = &Rate{Merged: f.Merged, Decided: n, Value: float64(f.Merged) / float64(n), Low: lo, High: hi}
	}
	if len(g.toMerge) > 0 {
		d := medianDuration(g.toMerge)
		f.MedianTimeToMerge = &d
	}
	if len(g.shares) > 0 {
		s := median(g.shares)
		f.MedianPeopleShare, f.ShareMeasured = &s, len(g.shares)
	}
	if f.Opened > 0 {
		v := float64(g.follow) / float64(f.Opened)
		f.FollowUpsPerPull = &v
	}
	if f.Merged > 0 {
		v := float64(g.tokens) / float64(f.Merged)
		f.TokensPerMerged = &v
	}
	return f
}

// Figures computes h's figures grouped by by (ByRepository, ByModel, ByWeek or ByLabel),
// from the rows of the repositories keep accepts (nil: every repository).
func (h *History) Figures(by string, keep func(repoID int64) bool) (Report, error) {
	if !slices.Contains(Groupings, by) {
		return Report{}, fmt.Errorf("figures by %q: use %s", by, strings.Join(Groupings, ", "))
	}
	groups := map[string]*group{}
	total := &group{f: Figures{Key: TotalKey}}
	at := func(key string, repoID int64) *group {
		g := groups[key]
		if g == nil {
			g = &group{f: Figures{Key: key}}
			if by == ByRepository {
				g.f.RepoID = repoID
			}
			groups[key] = g
		}
		return g
	}
	keyOf := func(repoID int64, model, label string, week time.Time) string {
		switch by {
		case ByRepository:
			// The id decides the group; the name is shown. Two repositories that held the
			// same name at different times stay apart.
			return fmt.Sprintf("%s\x00%d", h.name(repoID), repoID)
		case ByModel:
			return orNone(model)
		case ByWeek:
			return Week(week)
		}
		return orNone(label)
	}
	for _, r := range h.Runs {
		if keep != nil && !keep(r.RepoID) {
			continue
		}
		at(keyOf(r.RepoID, r.Model, r.Label, r.Week), r.RepoID).f.Runs += r.Runs
		total.f.Runs += r.Runs
	}
	for _, p := range h.Pulls {
		if keep != nil && !keep(p.RepoID) {
			continue
		}
		at(keyOf(p.RepoID, p.Model, p.Label, p.OpenedAt), p.RepoID).addPull(p)
		total.addPull(p)
	}
	rep := Report{Since: h.Since, By: by, Total: total.figures()}
	for _, g := range groups {
		f := g.figures()
		f.Key, _, _ = strings.Cut(f.Key, "\x00")
		rep.Groups = append(rep.Groups, f)
	}
	sort.Slice(rep.Groups, func(i, j int) bool {
		a, b := rep.Groups[i], rep.Groups[j]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return a.RepoID < b.RepoID
	})
	return rep, nil
}

func (h *History) name(repoID int64) string {
	if n := h.Names[repoID]; n != "" {
		return n
	}
	return fmt.Sprintf("repository %d", repoID)
}

func orNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

// median is the middle value of xs (the mean of the two middle ones for an even count); xs
// must not be empty. It sorts a copy.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/run"
	"github.com/frognano/frognano/stats"
	"github.com/frognano/frognano/web/auth"
)

// states offered by the list's filter, in the order a run goes through them.
var states = []string{run.StateWaiting, run.StateQueued, run.StateRunning, run.StateSucceeded, run.StateFailed,
	run.StateCancelled, run.StateSkipped}

type listView struct {
	Repo, State string // the filter as given
	States      []string
	Runs        []listRow
	Problem     string // a filter that could not be used
	Unchecked   bool   // access to some repository could not be checked: its runs are not shown
	// NoOutcomes: what became of the pull requests could not be read (the runs are shown).
	NoOutcomes bool
}

// listRow is one run of the list with who asked for it, how long it took (from the request
// to its end) and what became of its pull request.
type listRow struct {
	run.Record
	AskedBy string
	Took    string // "" while it has not ended
	// PullState is pull_outcomes' open, merged or closed; "" when none is recorded, or in
	// another state (gone), which the list does not name.
	PullState string
}

// shownPullStates are the outcomes the list names.
var shownPullStates = map[string]bool{stats.StateOpen: true, stats.StateMerged: true, stats.StateClosed: true}

func newListRow(rec run.Record) listRow {
	row := listRow{Record: rec, AskedBy: run.StartedBy(rec)}
	if rec.FinishedAt != nil {
		row.Took = took(rec.FinishedAt.Sub(rec.CreatedAt))
	}
	return row
}

// outcomes fills the rows' PullState from pull_outcomes, by the pull request's repository id
// and number.
func (p *Pages) outcomes(r *http.Request, view *listView) {
	var keys []stats.PullKey
	for _, row := range view.Runs {
		if row.PRNumber > 0 {
			keys = append(keys, stats.PullKey{RepoID: row.RepoID, Number: row.PRNumber})
		}
	}
	states, err := p.cfg.Stats.PullStates(r.Context(), keys)
	if err != nil {
		p.cfg.Logger.WarnContext(r.Context(), "reading what became of the pull requests", logging.Err(err))
		view.NoOutcomes = true
		return
	}
	for i, row := range view.Runs {
		if st := states[stats.PullKey{RepoID: row.RepoID, Number: row.PRNumber}]; shownPullStates[st] {
			view.Runs[i].PullState = st
		}
	}
}

func (p *Pages) handleList(w http.ResponseWriter, r *http.Request) {
	v, ok := p.viewer(w, r, true)
	if !ok {
		return
	}
	q := r.URL.Query()
	view := listView{Repo: strings.TrimSpace(q.Get("repo")), State: q.Get("state"), States: states}
	f := run.Filter{Limit: scanLimit}
	if view.Repo != "" {
		owner, repo, ok := strings.Cut(view.Repo, "/")
		if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") || len(view.Repo) > 200 {
			view.Problem = "A repository is written owner/name."
		} else {
			f.Owner, f.Repo = owner, repo
		}
	}
	if view.State != "" {
		known := false
		for _, s := range states {
			known = known || s == view.State
		}
		if !known {
			view.Problem = "That is not a state a run can be in."
		} else {
			f.State = view.State
		}
	}
	if view.Problem != "" {
		p.render(w, r, http.StatusBadRequest, "runs", page{Title: "Runs", Viewer: v.Login, Data: view})
		return
	}
	// Only runs of repositories the viewer can read, decided on each run's repository id (the
	// name stored with a run may belong to another repository now); each is asked about once.
	readable := map[int64]bool{}
	check := func(rec run.Record) (can, handled bool) {
		if can, seen := readable[rec.RepoID]; seen {
			return can, false
		}
		can, err := p.cfg.Auth.CanRead(r.Context(), v, rec.RepoID)
		if errors.Is(err, auth.ErrSignedOut) {
			p.signIn(w, r, true)
			return false, true
		}
		if err != nil {
			// Not shown, and said so: one repository GitHub could not answer for does not
			// hide the others.
			p.cfg.Logger.WarnContext(r.Context(), "checking read access", "viewer", v, "repo_id", rec.RepoID, logging.Err(err))
			view.Unchecked = true
			can = false
		}
		readable[rec.RepoID] = can
		return can, false
	}
	// A repository asked for by name is found first: the one that has that name now, if the
	// viewer may read it, before anything is read of it, whether it has runs or not. The
	// answer (and the work behind it, which its time shows) must not tell a person who cannot
	// read a private repository whether frognano ever ran on it. Its runs are then selected by
	// its id, so runs stored under the name of a repository that had it before are not its.
	if f.Owner != "" {
		id, can, err := p.cfg.Auth.FindRepo(r.Context(), v, f.Owner, f.Repo)
		if errors.Is(err, auth.ErrSignedOut) {
			p.signIn(w, r, true)
			return
		}
		if err != nil {
			p.cfg.Logger.WarnContext(r.Context(), "finding a repository", "viewer", v, logging.Repo(f.Owner, f.Repo), logging.Err(err))
			view.Unchecked = true
			can = false
		}
		if !can {
			p.render(w, r, http.StatusOK, "runs", page{Title: "Runs", Viewer: v.Login, Data: view})
			return
		}
		if id != 0 {
			// The shared token knows no ids (0): it reads every repository, and each run is
			// still checked by its own id below.
			f.RepoID, f.Owner, f.Repo = id, "", ""
		}
	}
	runs, err := p.cfg.Runs.Runs(r.Context(), f)
	if err != nil {
		p.cfg.Logger.ErrorContext(r.Context(), "listing runs", logging.Err(err))
		http.Error(w, "the runs could not be read", http.StatusInternalServerError)
		return
	}
	for _, rec := range runs {
		if len(view.Runs) >= p.cfg.ListLimit {
			break
		}
		can, handled := check(rec)
		if handled {
			return
		}
		if can {
			view.Runs = append(view.Runs, newListRow(rec))
		}
	}
	p.outcomes(r, &view)
	p.render(w, r, http.StatusOK, "runs", page{Title: "Runs", Viewer: v.Login, Data: view})
}

// took is how long a run took for the list: to the second under two days (1h30m5s), in days
// and hours beyond (3d4h).
func took(d time.Duration) string {
	if d >= 48*time.Hour {
		return stats.FormatDuration(d)
	}
	return durMS(d.Milliseconds())
}

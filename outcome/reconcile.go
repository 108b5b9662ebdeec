package outcome

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/logging"
)

// Defaults of Config (FROGNANO_OUTCOMES_*: config/vars.go).
const (
	DefaultInterval         = 15 * time.Minute
	DefaultMaxAge           = 30 * 24 * time.Hour
	DefaultBudget           = 200
	DefaultMinRateRemaining = 500
)

// What a round counts against its Budget, in API calls.
const (
	// CostOpen is opening a repository (githubapp.App.ForRepository: the installation, a
	// token for the repository, the repository by id); once per repository per round.
	CostOpen = 3
	// CostOpenRefused is an opening GitHub refused: a token refused for the repository (one
	// deleted or taken out of the installation) is asked for twice, with the installation
	// each time, before the repository is read.
	CostOpenRefused = 4
	// CostPull is reading a pull request (githubapp.Client.PullState).
	CostPull = 1
	// CostTimeline is reading an issue's timeline (githubapp.Client.MergedReplacement).
	CostTimeline = 1
)

// Config configures a Reconciler. Zero values take the defaults above.
type Config struct {
	// MaxAge: pull requests opened longer ago are not asked about any more (still open in
	// the table: the figures say so).
	MaxAge time.Duration
	// Budget is how many API calls one round may make at most (counted with CostOpen,
	// CostPull, CostTimeline).
	Budget int
	// MinRateRemaining: a round stops once GitHub says fewer calls than this remain in the
	// installation's rate limit (X-RateLimit-Remaining), leaving them to the runs.
	MinRateRemaining int
	// WorkDir is where the measure's repositories are made (a temporary one each).
	WorkDir string
	Logger  *slog.Logger
}

// Reconciler asks GitHub about the pull requests frognano follows that events may have
// missed, and measures merged ones.
type Reconciler struct {
	store *Store
	gh    GitHub
	cfg   Config
}

// NewReconciler returns the Reconciler writing through store and asking gh.
func NewReconciler(store *Store, gh GitHub, cfg Config) *Reconciler {
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.MinRateRemaining <= 0 {
		cfg.MinRateRemaining = DefaultMinRateRemaining
	}
	if cfg.WorkDir == "" {
		cfg.WorkDir = os.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Reconciler{store: store, gh: gh, cfg: cfg}
}

// Change is one thing a round changed.
type Change struct {
	Owner, Repo string
	Number      int
	What        string // "merged by alice", "closed", "gone", "2 commits by people", ...
}

func (c Change) String() string {
	return fmt.Sprintf("%s/%s#%d: %s", c.Owner, c.Repo, c.Number, c.What)
}

// Report is what a round did.
type Report struct {
	Asked   int // pull requests asked about
	Calls   int // API calls counted against the budget
	Changes []Change
	// Stopped says why the round ended before asking about every candidate: "budget",
	// "rate limit", "busy" (another round holds the lock); "" it did not.
	Stopped string
}

// roundLock is the advisory lock one round at a time holds across processes, with the
// schema's hash as its second key: advisory locks are the database's, and two schemas
// (deployments, or tests) do not share their rounds.
const roundLock = 0x6f67_3331 // "og31"

// Round asks GitHub about the open pull requests frognano follows, oldest synced first
// (and, for frognano's pull requests closed without merge, whether a person's merged pull
// request replaced them), within Config.Budget calls and while the rate limit lasts, and
// records what it finds; merged ones are measured (Measure). A repository or pull request
// GitHub no longer has (404, 410) is recorded as gone and never asked about again.
func (r *Reconciler) Round(ctx context.Context) (Report, error) {
	conn, err := r.store.pool.Acquire(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("reconciling pull requests: %w", err)
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1::int4, hashtext(current_schema()))`, roundLock).Scan(&locked); err != nil {
		return Report{}, fmt.Errorf("reconciling pull requests: %w", err)
	}
	if !locked {
		return Report{Stopped: "busy"}, nil
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1::int4, hashtext(current_schema()))`, roundLock)
	}()

	rows, err := r.candidates(ctx)
	if err != nil {
		return Report{}, err
	}
	rep := Report{}
	repos := map[int64]Repo{}
	failed := map[int64]bool{}
	for _, row := range rows {
		if failed[row.RepoID] {
			continue
		}
		c, ok := repos[row.RepoID]
		if !ok {
			if rep.Calls+CostOpen+CostPull > r.cfg.Budget {
				rep.Stopped = "budget"
				break
			}
			rep.Calls += CostOpen
			c, err = r.gh.ForRepo(ctx, row.InstallationID, row.RepoID, row.Owner, row.Repo)
			if err != nil {
				rep.Calls += CostOpenRefused - CostOpen
				failed[row.RepoID] = true
				if githubapp.Gone(err) {
					n, gerr := r.store.goneRepo(ctx, row.RepoID)
					if gerr != nil {
						return rep, gerr
					}
					rep.Changes = append(rep.Changes, Change{row.Owner, row.Repo, row.Number, fmt.Sprintf("repository gone (%d pull request(s))", n)})
					continue
				}
				r.cfg.Logger.WarnContext(ctx, "reconciling: opening the repository", logging.Repo(row.Owner, row.Repo), logging.Err(err))
				// Its rows go to the back of the queue: a repository that keeps failing must
				// not fill every round's list and starve the others.
				if err := r.store.touchRepo(ctx, row.RepoID); err != nil {
					return rep, err
				}
				continue
			}
			repos[row.RepoID] = c
		}
		if row.State == StateClosed {
			if rep.Calls+CostTimeline > r.cfg.Budget {
				rep.Stopped = "budget"
				break
			}
			rep.Calls += CostTimeline
			rep.Asked++
			if ch, err := r.replacement(ctx, c, row); err != nil {
				r.cfg.Logger.WarnContext(ctx, "reconciling: reading the issue's timeline", logging.Repo(row.Owner, row.Repo), logging.Issue(row.Issue), logging.Err(err))
			} else if ch != "" {
				rep.Changes = append(rep.Changes, Change{row.Owner, row.Repo, row.Number, ch})
			}
			continue
		}
		if rep.Calls+CostPull > r.cfg.Budget {
			rep.Stopped = "budget"
			break
		}
		rep.Calls += CostPull
		rep.Asked++
		st, err := c.PullState(ctx, row.Number)
		if githubapp.Gone(err) {
			if err := r.store.gone(ctx, row.RepoID, row.Number); err != nil {
				return rep, err
			}
			rep.Changes = append(rep.Changes, Change{row.Owner, row.Repo, row.Number, "gone"})
			continue
		}
		if err != nil {
			r.cfg.Logger.WarnContext(ctx, "reconciling: reading the pull request", logging.Repo(row.Owner, row.Repo), "pull_request", row.Number, logging.Err(err))
			if err := r.store.touch(ctx, row.RepoID, row.Number); err != nil {
				return rep, err
			}
		} else {
			changes, err := r.store.synced(ctx, row, st)
			if err != nil {
				return rep, err
			}
			for _, ch := range changes {
				rep.Changes = append(rep.Changes, Change{row.Owner, row.Repo, row.Number, ch})
			}
			if st.Merged && row.State == StateOpen {
				if err := r.measure(ctx, c, row.RepoID, row.Number); err != nil {
					r.cfg.Logger.WarnContext(ctx, "reconciling: measuring the merged pull request", logging.Repo(row.Owner, row.Repo), "pull_request", row.Number, logging.Err(err))
				}
			}
		}
		if st.RateRemaining >= 0 && st.RateRemaining < r.cfg.MinRateRemaining {
			rep.Stopped = "rate limit"
			break
		}
	}
	return rep, nil
}

// candidates are the rows a round may ask about, oldest synced first: the open ones opened
// within MaxAge, and frognano's own closed without merge whose replacement is not known yet.
func (r *Reconciler) candidates(ctx context.Context) ([]Row, error) {
	rows, err := r.store.pool.Query(ctx, `SELECT `+rowColumns+` FROM pull_outcomes
		WHERE opened_at > now() - make_interval(secs => $1)
		  AND (state = 'open' OR (state = 'closed' AND ours AND issue IS NOT NULL AND replaced_by IS NULL))
		ORDER BY synced_at NULLS FIRST, opened_at LIMIT $2`, r.cfg.MaxAge.Seconds(), r.cfg.Budget)
	if err != nil {
		return nil, fmt.Errorf("listing the pull requests to reconcile: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Row, error) { return scanRow(row) })
	if err != nil {
		return nil, fmt.Errorf("listing the pull requests to reconcile: %w", err)
	}
	return out, nil
}

// replacement looks for the person's merged pull request that replaced row (closed without
// merge) and records it; it returns what changed ("" nothing).
func (r *Reconciler) replacement(ctx context.Context, c Repo, row Row) (string, error) {
	since := row.OpenedAt
	n, err := c.MergedReplacement(ctx, row.Issue, since)
	if githubapp.Gone(err) {
		// The issue is deleted or transferred: no timeline to read, now or later.
		return "", r.store.noReplacement(ctx, row.RepoID, row.Number)
	}
	if err != nil {
		if err := r.store.touch(ctx, row.RepoID, row.Number); err != nil {
			return "", err
		}
		return "", err
	}
	if err := r.store.replaced(ctx, row.RepoID, row.Number, n); err != nil {
		return "", err
	}
	if n == 0 || n == row.Number {
		return "", nil
	}
	return fmt.Sprintf("replaced by #%d", n), nil
}

// Measure records how many lines of merged pull request number of repository repoID people
// changed after frognano's last head (people_lines), on the files frognano's patches touched:
// 0 without git when the merged head is frognano's. It is the queue's measure job.
func (r *Reconciler) Measure(ctx context.Context, repoID int64, number int) error {
	row, err := r.store.Get(ctx, repoID, number)
	if err != nil {
		return err
	}
	if row.State != StateMerged || row.PeopleLines != nil {
		return nil
	}
	if row.BotHeadSHA != "" && row.HeadSHA == row.BotHeadSHA {
		return r.store.measured(ctx, repoID, number, 0)
	}
	c, err := r.gh.ForRepo(ctx, row.InstallationID, row.RepoID, row.Owner, row.Repo)
	if githubapp.Gone(err) {
		return nil // deleted after the merge: the lines stay unknown
	}
	if err != nil {
		return err
	}
	return r.measure(ctx, c, repoID, number)
}

func (r *Reconciler) measure(ctx context.Context, c Repo, repoID int64, number int) error {
	row, err := r.store.Get(ctx, repoID, number)
	if err != nil {
		return err
	}
	if row.State != StateMerged || row.PeopleLines != nil {
		return nil
	}
	if row.BotHeadSHA == "" || row.HeadSHA == "" {
		return nil // nothing of frognano's to compare with
	}
	if row.HeadSHA == row.BotHeadSHA {
		return r.store.measured(ctx, repoID, number, 0)
	}
	files, err := r.store.patchFiles(ctx, repoID, number)
	if err != nil {
		return err
	}
	lines, err := c.PeopleLines(ctx, r.cfg.WorkDir, number, row.BotHeadSHA, row.HeadSHA, files, row.OpenedAt)
	if errors.Is(err, githubapp.ErrNotFetched) {
		// frognano's head was force-pushed away: the lines stay unknown, and no retry
		// (another fetch of the repository) can change that.
		r.cfg.Logger.InfoContext(ctx, "the merged pull request cannot be measured: frognano's head is not in it any more",
			logging.Repo(row.Owner, row.Repo), "pull_request", number)
		return nil
	}
	if err != nil {
		return fmt.Errorf("measuring %s/%s#%d: %w", row.Owner, row.Repo, number, err)
	}
	return r.store.measured(ctx, repoID, number, lines)
}

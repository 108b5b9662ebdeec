package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/run"
)

// LabelCacheAge is how long the trigger label read from a repository's settings is trusted
// (run.Store.KnownLabel) before a labelled issue makes the settings be read again.
const LabelCacheAge = 10 * time.Minute

// LabelDecision is what a labelled issue asks of the intake (DecideLabel).
type LabelDecision int

const (
	LabelIgnore LabelDecision = iota // not the repository's trigger label: nothing to do
	LabelRun                         // the trigger label: Accept the run (which checks the settings again)
	LabelCheck                       // not known: CheckLabel reads the settings first
)

// DecideLabel says what a labelled issue of repository repoID asks for: a run when label is
// the trigger label its settings named when last read (operator's, FROGNANO_LABEL, when they name none),
// nothing when it is another, and a check of the settings when they were never read or not
// for LabelCacheAge. The operator's label on a repository known to name none (or never read)
// starts the run at once: the run reads the settings before anything else and ends quietly
// when they name another label.
func (c *Client) DecideLabel(ctx context.Context, repoID int64, label, operator string) (LabelDecision, error) {
	known, age, ok, err := c.runs.KnownLabel(ctx, repoID)
	if err != nil {
		return LabelIgnore, err
	}
	switch {
	case ok && age < LabelCacheAge:
		if strings.EqualFold(label, cmp.Or(known, operator)) {
			return LabelRun, nil
		}
		return LabelIgnore, nil
	case strings.EqualFold(label, operator) && known == "":
		return LabelRun, nil
	default:
		return LabelCheck, nil
	}
}

// CheckLabel queues the check of a labelled issue whose label may be its repository's trigger
// label (DecideLabel said LabelCheck): a job reads the settings and, when the label is the
// trigger label (operator's when the settings name none), accepts req from delivery d as the
// label's event would have been. Nothing is recorded of the delivery until then; a redelivery
// while the check is queued is the same job.
func (c *Client) CheckLabel(ctx context.Context, d Delivery, req RunRequest, operator string) error {
	_, err := c.river.Insert(ctx, labelCheckArgs{Delivery: d, Request: req, OperatorLabel: operator}, nil)
	if err != nil {
		return fmt.Errorf("queueing the label's check: %w", err)
	}
	return nil
}

// labelCheckArgs is a labelled issue whose label's meaning on its repository is not known.
type labelCheckArgs struct {
	Delivery      Delivery   `json:"delivery"`
	Request       RunRequest `json:"request"`
	OperatorLabel string     `json:"operator_label"`
}

// Kind implements river.JobArgs.
func (labelCheckArgs) Kind() string { return "frognano_label_check" }

// InsertOpts implements river.JobArgsWithInsertOpts: one job per delivery.
func (labelCheckArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SmallQueueName, MaxAttempts: MaxAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: 24 * time.Hour}}
}

// labelCheckWorker performs labelCheckArgs jobs.
type labelCheckWorker struct {
	river.WorkerDefaults[labelCheckArgs]
	client *Client // set once the client exists
	gh     run.GitHub
	log    *slog.Logger
}

func (w *labelCheckWorker) Timeout(*river.Job[labelCheckArgs]) time.Duration { return 2 * time.Minute }

// Work reads the repository's settings (keeping their label for the server) and accepts the
// run when the event's label is the trigger label.
func (w *labelCheckWorker) Work(ctx context.Context, job *river.Job[labelCheckArgs]) error {
	req, d := job.Args.Request, job.Args.Delivery
	// The checks of a burst of labels are queued before the first one reads the settings: the
	// others decide from what it learnt, so the settings are read once per LabelCacheAge,
	// not once per label.
	label, age, known, err := w.client.runs.KnownLabel(ctx, req.RepoID)
	if err != nil {
		return err
	}
	if !known || age >= LabelCacheAge {
		repo, err := w.gh.ForRepo(ctx, req.InstallationID, req.RepoID, req.Owner, req.Repo)
		if err != nil {
			return fmt.Errorf("opening repository %s/%s: %w", req.Owner, req.Repo, err)
		}
		if label, err = w.client.runs.SettingsLabel(ctx, repo, req.InstallationID, req.RepoID, req.Repo); err != nil {
			return err
		}
	}
	trigger := cmp.Or(label, job.Args.OperatorLabel)
	log := w.log.With("repo", req.Owner+"/"+req.Repo, "issue", req.Issue, "label", req.TriggerLabel)
	if !strings.EqualFold(req.TriggerLabel, trigger) {
		log.InfoContext(ctx, "the label is not the repository's trigger label", "trigger_label", trigger)
		return nil
	}
	res, err := w.client.Accept(ctx, d, req)
	if err != nil {
		return err
	}
	log.InfoContext(ctx, "the repository's trigger label: run accepted", "run_id", res.RunID, "duplicate", res.Duplicate, "already_active", res.AlreadyActive)
	return nil
}

// LabelRemoved says whether label coming off issue of repository repoID stops the issue's
// run: it is the trigger label as the settings named it when last read, whatever their age
// (operator when they name none or were never read), or the label that started the active run
// (runs.trigger_label: the settings may have named another since). Its checks still queued
// (CheckLabel) are withdrawn either way: a label added and removed before its check ran starts
// nothing.
func (c *Client) LabelRemoved(ctx context.Context, repoID int64, issue int, label, operator string) (bool, error) {
	if err := c.withdrawLabelChecks(ctx, repoID, issue, label); err != nil {
		return false, err
	}
	known, _, _, err := c.runs.KnownLabel(ctx, repoID)
	if err != nil {
		return false, err
	}
	if strings.EqualFold(label, cmp.Or(known, operator)) {
		return true, nil
	}
	started, err := c.pool.Query(ctx, `SELECT trigger_label FROM runs WHERE repo_id = $1 AND issue = $2
		AND state IN ('queued', 'running') AND trigger_label IS NOT NULL`, repoID, issue)
	if err != nil {
		return false, fmt.Errorf("reading the issue's run's label: %w", err)
	}
	names, err := pgx.CollectRows(started, pgx.RowTo[string])
	if err != nil {
		return false, fmt.Errorf("reading the issue's run's label: %w", err)
	}
	return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, label) }), nil
}

// WithdrawLabelChecks withdraws the label checks still queued of issue of repository repoID,
// whatever their label: the issue was closed, deleted or transferred, and a check that found
// its label to be the trigger label would start a run after that.
func (c *Client) WithdrawLabelChecks(ctx context.Context, repoID int64, issue int) error {
	return c.withdrawLabelChecks(ctx, repoID, issue, "")
}

// withdrawLabelChecks cancels the label checks still queued (or working) of issue of
// repository repoID whose label is label, or of every label when label is "": the label came
// off, or the issue was closed, deleted or transferred, before its check ran.
func (c *Client) withdrawLabelChecks(ctx context.Context, repoID int64, issue int, label string) error {
	rows, err := c.pool.Query(ctx, `SELECT id, args->'request'->>'TriggerLabel' FROM river_job WHERE kind = $1
		AND state IN ('available', 'scheduled', 'retryable', 'running', 'pending')
		AND (args->'request'->>'RepoID')::bigint = $2 AND (args->'request'->>'Issue')::bigint = $3`,
		labelCheckArgs{}.Kind(), repoID, issue)
	if err != nil {
		return fmt.Errorf("finding the label's checks: %w", err)
	}
	var checks []int64
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			rows.Close()
			return fmt.Errorf("finding the label's checks: %w", err)
		}
		if label == "" || strings.EqualFold(name, label) {
			checks = append(checks, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("finding the label's checks: %w", err)
	}
	for _, id := range checks {
		if _, err := c.river.JobCancel(ctx, id); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
			return fmt.Errorf("withdrawing the label's check: %w", err)
		}
	}
	return nil
}

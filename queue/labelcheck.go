package queue

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/riverqueue/river"

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

// TriggerLabel is the label that starts runs on repository repoID as its settings named it
// when last read, whatever their age, or operator when they name none or were never read:
// removing it from an issue stops the issue's run.
func (c *Client) TriggerLabel(ctx context.Context, repoID int64, operator string) (string, error) {
	known, _, _, err := c.runs.KnownLabel(ctx, repoID)
	if err != nil {
		return "", err
	}
	return cmp.Or(known, operator), nil
}

package queue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/run"
)

// activeReplyArgs answers a mention of the App on an issue that came while a run of the issue
// was active: no second run starts (the request is counted on the active run, waiting.go), and
// the requester is told which run works on it. Accept queues it in the request's transaction.
type activeReplyArgs struct {
	InstallationID int64  `json:"installation_id"`
	RepoID         int64  `json:"repo_id"`
	Owner          string `json:"owner"`
	Repo           string `json:"repo"`
	Issue          int    `json:"issue"`
	Requester      string `json:"requester"`
	RunID          int64  `json:"run_id"` // the active run
}

// Kind implements river.JobArgs.
func (activeReplyArgs) Kind() string { return "frognano_active_reply" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (activeReplyArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SmallQueueName, MaxAttempts: MaxAttempts}
}

// activeReplyWorker performs activeReplyArgs jobs.
type activeReplyWorker struct {
	river.WorkerDefaults[activeReplyArgs]
	gh        run.GitHub
	publicURL string
	log       *slog.Logger
}

func (w *activeReplyWorker) Timeout(*river.Job[activeReplyArgs]) time.Duration {
	return 2 * time.Minute
}

// Work posts the reply; it is the active run's write (its audit trail holds it).
func (w *activeReplyWorker) Work(ctx context.Context, job *river.Job[activeReplyArgs]) error {
	a := job.Args
	repo, err := w.gh.ForRepo(ctx, a.InstallationID, a.RepoID, a.Owner, a.Repo)
	if err != nil {
		return fmt.Errorf("opening repository %s/%s: %w", a.Owner, a.Repo, err)
	}
	body := run.ActiveRunReply(a.Requester, a.RunID, run.RunPageURL(w.publicURL, a.RunID))
	if _, err := repo.Comment(githubapp.WithAuditRun(ctx, a.RunID), a.Issue, body); err != nil {
		return fmt.Errorf("answering a mention while run %d is active: %w", a.RunID, err)
	}
	w.log.InfoContext(ctx, "told a requester which run is active", "requester", a.Requester, "run_id", a.RunID)
	return nil
}

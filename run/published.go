package run

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Publication is what a run that succeeded published to a pull request: the pull request and
// the commit it put at its head (outcome.Publication has the same fields; the queue converts). The Store hands it to its Published hook in the transaction
// that records the run's success, so that what became of the pull request (package outcome,
// table pull_outcomes) is followed from the same commit on, or not at all.
type Publication struct {
	RunID  int64
	Number int // the pull request
	// Ours: frognano opened the pull request (its branch is BranchName(Issue)); false: a
	// person's pull request a writer's request added a commit to.
	Ours  bool
	Issue int // the issue frognano's pull request was made for; 0: a person's
	// Head is the commit the run put at the head of the pull request's branch, and Commits
	// the pull request's count of commits then (GitHub's; 0: not known).
	Head    string
	Commits int
}

// Published records, in tx, which has just ended run p.RunID as succeeded, what it published.
// A transient error (fault.IsTransient) rolls the end back: the run's retry publishes again
// (Publish is idempotent) and records both. Any other is logged, and its writes alone are
// rolled back: the run still succeeded.
type Published func(ctx context.Context, tx pgx.Tx, p Publication) error

// WithPublished makes s hand every Publication to f; it returns s.
func (s *Store) WithPublished(f Published) *Store {
	s.published = f
	return s
}

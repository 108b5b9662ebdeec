// Package logging owns what every frognano log line shares: the attribute keys, one
// constructor per key so that each key always has the same type, and the logger a context
// carries.
//
// The rules it fixes:
//   - run_id is the database's run id, an int64, everywhere (RunID). The runner's own ids of a
//     run ("run-12", "run-12-a2" for an attempt, "local-…" for `frognano run`) name its
//     sandboxes and trajectories; they are logged as sandbox_run (SandboxRun), never as run_id.
//   - An error is logged under the key "error" (Err), never "err".
//   - A logger in a context (WithLogger) wins over a package's own: it carries the attributes of
//     the delivery or run being handled. FromContext falls back to slog.Default, FromContextOr
//     to the logger given.
//
// Redaction is not done here: the service's handler redacts every record once
// (githubapp.RedactLogs, wrapped around the service's logger by cmd/frognano, and by githubapp
// around any logger it is given), so a log call never redacts by hand.
//
// logging must stay free of other frognano packages: runner, which never imports githubapp,
// uses it too.
package logging

import (
	"context"
	"log/slog"
)

// The attribute keys of frognano's log lines. Use the constructors below where there is one.
const (
	DeliveryIDKey     = "delivery_id"     // string: GitHub's X-GitHub-Delivery
	InstallationIDKey = "installation_id" // int64
	RepoKey           = "repo"            // string: "owner/name"
	IssueKey          = "issue"           // int: the issue or pull request number
	RunIDKey          = "run_id"          // int64: the runs table's id
	RunIDsKey         = "run_ids"         // []int64: several runs' ids
	JobIDKey          = "job_id"          // int64: River's job id
	SandboxRunKey     = "sandbox_run"     // string: the runner's id of a run or attempt
	ErrorKey          = "error"           // an error, or its (cut) text
)

// DeliveryID is a webhook delivery's attribute.
func DeliveryID(id string) slog.Attr { return slog.String(DeliveryIDKey, id) }

// InstallationID is an installation's attribute.
func InstallationID(id int64) slog.Attr { return slog.Int64(InstallationIDKey, id) }

// Repo is a repository's attribute, "owner/name".
func Repo(owner, name string) slog.Attr { return slog.String(RepoKey, owner+"/"+name) }

// Issue is an issue's or pull request's number.
func Issue(n int) slog.Attr { return slog.Int(IssueKey, n) }

// RunID is a run's attribute: its id in the database.
func RunID(id int64) slog.Attr { return slog.Int64(RunIDKey, id) }

// RunIDs is the attribute of several runs (the runs a webhook cancelled).
func RunIDs(ids []int64) slog.Attr { return slog.Any(RunIDsKey, ids) }

// JobID is a River job's attribute.
func JobID(id int64) slog.Attr { return slog.Int64(JobIDKey, id) }

// SandboxRun is the runner's id of a run or of one attempt ("run-12", "run-12-a2"), which
// labels its sandboxes.
func SandboxRun(id string) slog.Attr { return slog.String(SandboxRunKey, id) }

// Err is an error's attribute. The handler prints the error's text.
func Err(err error) slog.Attr { return slog.Any(ErrorKey, err) }

type loggerKey struct{}

// WithLogger returns ctx carrying l.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// FromContext returns the logger ctx carries, or slog.Default().
func FromContext(ctx context.Context) *slog.Logger { return FromContextOr(ctx, slog.Default()) }

// FromContextOr returns the logger ctx carries, or fallback: for a package that has a logger
// of its own and is also called with a run's.
func FromContextOr(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return fallback
}

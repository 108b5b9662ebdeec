package runner

import (
	"context"
	"log/slog"
)

// CheckPatch runs a run's checks of the patch (checkPatch) on raw, a diff of the checkout dir
// against its commit base, under cfg, and returns the Result they filled: for runner_test,
// whose tests also read what the report makes of it. setupCommit is Spec.SetupCommit.
func CheckPatch(ctx context.Context, cfg Config, log *slog.Logger, dir, base, setupCommit string, raw []byte) *Result {
	x := &run{r: &Runner{cfg: cfg, log: log}, spec: Spec{RepoDir: dir, SetupCommit: setupCommit}, log: log, base: base, res: &Result{}}
	x.checkPatch(ctx, raw)
	return x.res
}

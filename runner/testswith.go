package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
)

// TestsWith runs testCmd (empty: the command a run of spec would use) once on spec's checkout
// with diff applied, in a fresh sandbox of spec's environment: exactly what a run's tests after
// do (runTests), for `frognano eval`, which applies a model's patch and a task's hidden tests
// together after the run. The environment is prepared as a run prepares it (the cache makes
// that a look-up). Every sandbox it creates is removed before it returns. An error means the
// tests could not be run at all; a TestRun with Error set, that the sandbox or git apply failed.
func (r *Runner) TestsWith(ctx context.Context, spec Spec, testCmd string, diff []byte) (*TestRun, error) {
	x := &run{r: r, spec: spec, start: time.Now()}
	defer x.close()
	ctx = x.identify(ctx)
	ended, err := x.prepare(ctx)
	if err != nil {
		return nil, err
	}
	if ended {
		return nil, &SetupError{fmt.Errorf("the repository's setup failed: %s", x.res.SetupFailed)}
	}
	cmd := cmp.Or(testCmd, x.testCmd)
	if cmd == "" {
		return nil, &SetupError{errors.New("no test command: none was given and none was detected")}
	}
	return r.runTests(ctx, x.sbCfg, x.repo, x.spec, "eval-tests", cmd, diff), nil
}

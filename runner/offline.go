package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/frognano/frognano/check/secrets"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/runner/egress"
	"github.com/frognano/frognano/runner/sandbox"
)

// pathCheckTimeout bounds the check of which commands the sandbox's PATH lacks.
const pathCheckTimeout = 30 * time.Second

// reportEgress builds Result.Egress from what the agent's sandbox observed (x.network, taken
// before Quiesce), the commands its PATH lacks and the base's files. sb is the agent's sandbox
// after Quiesce (nil when the run was cancelled: no PATH check, so no command is reported as
// not found).
func (x *run) reportEgress(ctx context.Context, sb *sandbox.Sandbox) {
	var missing []string
	if cands := egress.NotFoundCandidates(x.network.Calls); sb != nil && len(cands) > 0 {
		var err error
		if missing, err = notOnPath(ctx, sb, cands); err != nil {
			x.log.Warn("checking which commands the sandbox lacks", logging.Err(err))
		}
	}
	files, hasSetup := baseFiles(x.spec.RepoDir)
	x.res.Egress = redactEgress(egress.Analyze(x.network, egress.Input{Missing: missing, Files: files, HasSetup: hasSetup}))
}

// redactEgress puts every text of r the model chose (its commands, the names it looked up,
// the programs it ran) through secrets.Redact, as the transcript is: a command such as `curl
// -u KEY:x ...` must not show the key in the report.
func redactEgress(r *egress.Report) *egress.Report {
	if r == nil {
		return nil
	}
	for i := range r.Hosts {
		r.Hosts[i].Name = secrets.Redact(r.Hosts[i].Name)
	}
	for i := range r.Calls {
		c := &r.Calls[i]
		c.Command, c.NotFound = secrets.Redact(c.Command), secrets.Redact(c.NotFound)
		for j := range c.Hosts {
			c.Hosts[j] = secrets.Redact(c.Hosts[j])
		}
	}
	for i := range r.Missing {
		r.Missing[i].Command = secrets.Redact(r.Missing[i].Command)
	}
	for i := range r.Advice {
		r.Advice[i].NotFound = secrets.Redact(r.Advice[i].NotFound)
	}
	return r
}

// notOnPath returns the names among cands that a login shell of the sandbox user does not find.
// It runs after Quiesce: every process of the model is gone and /tmp (its HOME, where it could
// have written a .bash_profile) is empty again, so the PATH is the image's and the answer is
// not the model's. A name the answer holds that was not asked about is ignored.
func notOnPath(ctx context.Context, sb *sandbox.Sandbox, cands []string) ([]string, error) {
	const script = `for c; do command -v -- "$c" >/dev/null 2>&1 || printf '%s\n' "$c"; done`
	argv := append([]string{"/bin/bash", "-lc", script, "bash"}, cands...)
	res, err := sb.Exec(ctx, argv, nil, pathCheckTimeout, 64<<10)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		if slices.Contains(cands, line) && !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out, nil
}

// baseFiles are the ecosystem files (egress.Manifests) at the root of the checkout, regular
// files only, and whether it has .frognano/setup.sh.
func baseFiles(dir string) (files []string, hasSetup bool) {
	regular := func(p string) bool {
		fi, err := os.Lstat(filepath.Join(dir, p))
		return err == nil && fi.Mode().IsRegular()
	}
	for _, f := range egress.Manifests {
		if regular(f) {
			files = append(files, f)
		}
	}
	return files, regular(filepath.Join(".frognano", "setup.sh"))
}

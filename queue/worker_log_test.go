package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/run"
)

// lockedBuffer is a log sink the worker's goroutines may write to at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestWorkerLogLinesNameTheRunAndNeverAToken: every line of a run's attempt, the worker's own
// and those of whatever it calls with the job's context (here the runner), carries the run's
// attributes with their types (run_id the database's int64), and a token in a logged error or
// message is redacted by the logger NewClient wraps, though the caller handed in a plain one.
func TestWorkerLogLinesNameTheRunAndNeverAToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var logs lockedBuffer
	cfg := b.worker.cfg
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) // plain: withDefaults wraps it
	b.worker = &runWorker{pool: b.pool, cfg: cfg.withDefaults()}

	token := "ghs_" + strings.Repeat("T", 36)
	b.runner.Set(func(ctx context.Context, _ run.RunSpec, _ func(run.Progress)) (*run.Outcome, error) {
		logging.FromContext(ctx).Info("the runner's line", "output", "pushed with "+token)
		return nil, fault.Transient(fmt.Errorf("pulling the image with %s: connection reset", token))
	})
	res := b.accept(t, 7)
	if r := b.work(t, res, 1); !r.retried() {
		t.Fatalf("attempt 1 = %v, want a retry", r)
	}

	out := logs.String()
	if strings.Contains(out, token) {
		t.Errorf("the logs carry the token:\n%s", out)
	}
	want := map[string]string{
		logging.RunIDKey:          strconv.FormatInt(res.RunID, 10),
		logging.InstallationIDKey: "5",
		logging.RepoKey:           "octo/pager",
		logging.IssueKey:          "7",
	}
	seen := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var rec map[string]any
		if err := d.Decode(&rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		msg, _ := rec["msg"].(string)
		seen[msg] = rec
		for k, v := range want {
			if got := fmt.Sprint(rec[k]); got != v {
				t.Errorf("line %q: %s = %v, want %s", msg, k, rec[k], v)
			}
		}
		for _, k := range []string{logging.RunIDKey, logging.InstallationIDKey, logging.IssueKey, logging.JobIDKey} {
			if _, ok := rec[k].(json.Number); !ok {
				t.Errorf("line %q: %s = %#v, want a number", msg, k, rec[k])
			}
		}
		if n, _ := rec[logging.JobIDKey].(json.Number).Int64(); n <= 0 {
			t.Errorf("line %q: job_id = %v, want the job's id", msg, rec[logging.JobIDKey])
		}
	}
	for _, msg := range []string{"the runner's line", "transient failure; will retry"} {
		if seen[msg] == nil {
			t.Errorf("no line %q in:\n%s", msg, out)
		}
	}
	if got, _ := seen["transient failure; will retry"][logging.ErrorKey].(string); !strings.Contains(got, "pulling the image with [REDACTED]") {
		t.Errorf("the retry's line has error %q, want the redacted error", got)
	}
}

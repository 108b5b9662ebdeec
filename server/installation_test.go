package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/frognano/frognano/run"
)

// lockedBuffer is a log sink the handler writes from its own goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWebhookNewPermissionsAccepted: the `installation` event GitHub sends when an owner
// approves the App's new permissions (issue 18 section 1) is accepted and recorded, and the log
// says so with the installation. It changes no run: every run reads its installation's grants
// when it starts, so a queued run gets the new permissions, and nothing is cancelled (as an
// uninstall would) or started.
func TestWebhookNewPermissionsAccepted(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	b := setup(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	queued := decodeResponse(t, b.send(t, "issues", labeled(t, issueNumber(1))))
	if queued.Status != "queued" {
		t.Fatalf("label: %+v", queued)
	}
	rec := b.send(t, "installation", fixture(t, "installation/created.payload.json", installation(5), action("new_permissions_accepted")))
	res := decodeResponse(t, rec)
	if rec.Code != http.StatusOK || res.Status != "recorded" || len(res.RunIDs) != 0 {
		t.Fatalf("new_permissions_accepted: %d %s", rec.Code, rec.Body.String())
	}
	if c := b.stored(t); c.deliveries != 2 || c.runs != 1 || c.jobs != 1 {
		t.Errorf("stored %+v, want both deliveries and the one queued run", c)
	}
	var state string
	if err := b.pool.QueryRow(context.Background(), `SELECT state FROM runs WHERE id = $1`, queued.RunIDs[0]).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != run.StateQueued {
		t.Errorf("the queued run is %s, want it left queued", state)
	}
	if l := logs.String(); !strings.Contains(l, "accepted the App's new permissions") || !strings.Contains(l, "installation_id=5") {
		t.Errorf("the log does not record the change:\n%s", l)
	}
}

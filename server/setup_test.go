package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/queue"
)

var testSecret = []byte("It's a Secret to Everybody")

const testLabel = "frognano"

type bundle struct {
	pool *pgxpool.Pool
	srv  *Server
	seq  atomic.Int64
}

func setup(t testing.TB, edit ...func(*Config)) *bundle {
	t.Helper()
	pool := dbtest.New(t)
	return setupWithPool(t, pool, nil, edit...)
}

func setupWithPool(t testing.TB, pool *pgxpool.Pool, ready func(context.Context) error, edit ...func(*Config)) *bundle {
	t.Helper()
	qc, err := queue.NewClient(pool, queue.Config{}) // insert-only, as in a web-only process
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Intake: qc, Secret: testSecret, Label: testLabel, AppSlug: testSlug,
		Logger: slog.New(slog.DiscardHandler), ReadyCheck: ready}
	for _, e := range edit {
		e(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{pool: pool, srv: srv}
}

// fixture loads an upstream example payload and edits a copy of it: App
// deliveries carry an installation, and the label is set to ours.
func fixture(t testing.TB, name string, edits ...func(map[string]any)) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "github-webhooks", name))
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) == 0 {
		return raw
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		e(m)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func installation(id int64) func(map[string]any) {
	return func(m map[string]any) { m["installation"] = map[string]any{"id": id} }
}

func label(name string) func(map[string]any) {
	return func(m map[string]any) { m["label"].(map[string]any)["name"] = name }
}

func issueNumber(n int) func(map[string]any) {
	return func(m map[string]any) { m["issue"].(map[string]any)["number"] = n }
}

func action(a string) func(map[string]any) {
	return func(m map[string]any) { m["action"] = a }
}

// labeled is a signed-ready issues.labeled App delivery with our label.
func labeled(t testing.TB, edits ...func(map[string]any)) []byte {
	return fixture(t, "issues/labeled.payload.json", append([]func(map[string]any){installation(5), label(testLabel)}, edits...)...)
}

type request struct {
	event, delivery string
	body            io.Reader
	signature       *string // nil: sign the body correctly
	raw             []byte
	headers         map[string]string
}

func (b *bundle) nextDelivery() string {
	return fmt.Sprintf("72d3162e-cc78-11e3-81ab-%012d", b.seq.Add(1))
}

func (b *bundle) do(t testing.TB, rq request) *httptest.ResponseRecorder {
	t.Helper()
	body := rq.body
	if body == nil {
		body = bytes.NewReader(rq.raw)
	}
	req := httptest.NewRequest(http.MethodPost, "/webhook", body)
	if rq.body != nil {
		req.ContentLength = -1 // streamed, size unknown (chunked)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", rq.event)
	req.Header.Set("X-GitHub-Delivery", rq.delivery)
	req.Header.Set("X-GitHub-Hook-ID", "292430182")
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	req.Header.Set("X-GitHub-Hook-Installation-Target-ID", "29310")
	if rq.signature == nil {
		req.Header.Set("X-Hub-Signature-256", Sign(testSecret, rq.raw))
	} else if *rq.signature != "" {
		req.Header.Set("X-Hub-Signature-256", *rq.signature)
	}
	for k, v := range rq.headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	return rec
}

func (b *bundle) send(t testing.TB, event string, raw []byte) *httptest.ResponseRecorder {
	t.Helper()
	return b.do(t, request{event: event, delivery: b.nextDelivery(), raw: raw})
}

type counts struct{ deliveries, runs, jobs int }

func (b *bundle) stored(t testing.TB) counts {
	t.Helper()
	var c counts
	err := b.pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM deliveries), (SELECT count(*) FROM runs), (SELECT count(*) FROM river_job WHERE kind = 'frognano_run')`).
		Scan(&c.deliveries, &c.runs, &c.jobs)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func decodeResponse(t testing.TB, rec *httptest.ResponseRecorder) response {
	t.Helper()
	var r struct {
		Status string  `json:"status"`
		RunIDs []int64 `json:"run_ids"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("response %d %q is not JSON: %v", rec.Code, rec.Body.String(), err)
	}
	return response{Status: r.Status, RunIDs: r.RunIDs, code: rec.Code}
}

func ptr(s string) *string { return &s }

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func newGet(path string) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }

// newRawRequest builds a webhook request whose body declares size bytes.
func newRawRequest(rq request, body io.Reader, size int64) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhook", body)
	req.ContentLength = size
	req.Header.Set("X-GitHub-Event", rq.event)
	req.Header.Set("X-GitHub-Delivery", rq.delivery)
	if rq.signature != nil {
		req.Header.Set("X-Hub-Signature-256", *rq.signature)
	}
	return req
}

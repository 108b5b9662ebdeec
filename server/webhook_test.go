package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/riverqueue/river/rivertype"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/run"
)

func TestSignatureGitHubVector(t *testing.T) {
	t.Parallel()
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got := Sign(testSecret, []byte("Hello, World!")); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	if err := VerifySignature(testSecret, []byte("Hello, World!"), want); err != nil {
		t.Fatalf("VerifySignature(GitHub's vector) = %v", err)
	}
}

func TestVerifySignatureRejects(t *testing.T) {
	t.Parallel()
	body := []byte("Hello, World!")
	good := Sign(testSecret, body)
	tests := []struct{ name, header string }{
		{"Missing", ""},
		{"SHA1Only", "sha1=01dc10d0c83e72ed246219cdd91669667fe2ca59"},
		{"Wrong", "sha256=" + strings.Repeat("0", 64)},
		{"OtherSecret", Sign([]byte("another secret"), body)},
		{"NotHex", "sha256=" + strings.Repeat("z", 64)},
		{"Truncated", good[:len(good)-2]},
		{"UpperCasePrefix", "SHA256=" + strings.TrimPrefix(good, "sha256=")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := VerifySignature(testSecret, body, tt.header); !errors.Is(err, ErrUnauthorized) {
				t.Errorf("VerifySignature(%q) = %v, want ErrUnauthorized", tt.header, err)
			}
		})
	}
}

func TestNewRefusesEmptySecret(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.srv.cfg
	cfg.Secret = nil
	if _, err := New(cfg); err == nil {
		t.Fatal("New accepted an empty secret")
	}
}

func TestWebhookBadSignatureStoresNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	raw := labeled(t)
	for _, sig := range []string{"", "sha1=" + strings.Repeat("a", 40), "sha256=" + strings.Repeat("0", 64), Sign(testSecret, []byte("other body"))} {
		rec := b.do(t, request{event: "issues", delivery: b.nextDelivery(), raw: raw, signature: ptr(sig)})
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("signature %q: status %d, want 401", sig, rec.Code)
		}
	}
	if c := b.stored(t); c != (counts{}) {
		t.Errorf("stored %+v after bad signatures", c)
	}
}

// countingReader yields n bytes of JSON-ish filler and counts reads.
type countingReader struct {
	remaining int64
	read      int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.remaining <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > r.remaining {
		n = r.remaining
	}
	for i := range p[:n] {
		p[i] = ' '
	}
	r.remaining -= n
	r.read += n
	return int(n), nil
}

func TestWebhookOver25MBIs413AndStoresNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const size = 30 << 20

	// Declared size: refused without reading the body.
	declared := &countingReader{remaining: size}
	req := request{event: "issues", delivery: b.nextDelivery(), signature: ptr(Sign(testSecret, nil))}
	httpReq, rec := newRawRequest(req, declared, size), newRecorder()
	b.srv.ServeHTTP(rec, httpReq)
	if rec.Code != http.StatusRequestEntityTooLarge || declared.read != 0 {
		t.Errorf("declared 30 MB: status %d after reading %d bytes, want 413 after 0", rec.Code, declared.read)
	}

	// Undeclared size (chunked): reading stops just past the cap.
	streamed := &countingReader{remaining: size}
	rec2 := b.do(t, request{event: "issues", delivery: b.nextDelivery(), body: streamed, signature: ptr(Sign(testSecret, nil))})
	if rec2.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("streamed 30 MB: status %d, want 413", rec2.Code)
	}
	if streamed.read > DefaultMaxBodyBytes+64<<10 {
		t.Errorf("streamed 30 MB: read %d bytes, want at most the cap plus a buffer", streamed.read)
	}
	if c := b.stored(t); c != (counts{}) {
		t.Errorf("stored %+v after oversized bodies", c)
	}
}

func TestWebhookMalformedJSONIs400AndStoresNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct{ name, event, body string }{
		{"Truncated", "issues", `{"action":"labeled","label":{"name":"frognano"`},
		{"NotJSON", "issues", `action=labeled`},
		{"WrongTypes", "issues", `{"action":"labeled","label":{"name":"frognano"},"issue":{"number":"seven"}}`},
		{"MissingInstallation", "issues", string(fixture(t, "issues/labeled.payload.json", label(testLabel)))},
		{"BadOwner", "issues", `{"action":"labeled","label":{"name":"frognano"},"issue":{"number":7},"installation":{"id":5},"sender":{"login":"u"},"repository":{"id":1,"name":"r","owner":{"login":"../../x"}}}`},
		{"InstallationNotJSON", "installation", `{"action":`},
		{"Ping", "ping", `{zen}`},
	}
	for _, tt := range tests {
		rec := b.send(t, tt.event, []byte(tt.body))
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: status %d (%s), want 400", tt.name, rec.Code, rec.Body.String())
		}
	}
	if c := b.stored(t); c != (counts{}) {
		t.Errorf("stored %+v after malformed payloads", c)
	}
}

func TestWebhookUnhandledEventsAre202AndStoreNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	knowLabel(t, b, 186853002, "", 0) // the repository's settings name no label: "bug" is only a label
	tests := []struct{ name, event string }{
		{"issue_comment/created.payload.json", "issue_comment"},
		{"pull_request_review/submitted.payload.json", "pull_request_review"},
		{"issues/opened.payload.json", "issues"},
		{"issues/labeled.payload.json", "issues"}, // label "bug", not ours
	}
	for _, tt := range tests {
		raw := fixture(t, tt.name, installation(5))
		rec := b.send(t, tt.event, raw)
		if rec.Code != http.StatusAccepted || decodeResponse(t, rec).Status != "ignored" {
			t.Errorf("%s: %d %s, want 202 ignored", tt.name, rec.Code, rec.Body.String())
		}
	}
	if c := b.stored(t); c != (counts{}) {
		t.Errorf("stored %+v after unhandled events", c)
	}
}

func TestWebhookPingAndInstallationEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if rec := b.send(t, "ping", fixture(t, "ping/payload.json")); rec.Code != http.StatusOK {
		t.Errorf("ping: %d", rec.Code)
	}
	for _, tt := range []struct{ name, event string }{
		{"installation/created.payload.json", "installation"},
		{"installation_repositories/added.payload.json", "installation_repositories"},
	} {
		if rec := b.send(t, tt.event, fixture(t, tt.name)); rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s", tt.name, rec.Code, rec.Body.String())
		}
	}
	if c := b.stored(t); c.deliveries != 2 || c.runs != 0 {
		t.Errorf("stored %+v, want the 2 installation deliveries and no run", c)
	}
}

func TestWebhookLabeledQueuesOneRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rec := b.send(t, "issues", labeled(t, label("FrogNano"))) // labels compare case-insensitively
	res := decodeResponse(t, rec)
	if rec.Code != http.StatusOK || res.Status != "queued" || len(res.RunIDs) != 1 {
		t.Fatalf("labeled: %d %s", rec.Code, rec.Body.String())
	}
	var owner, repo, labeler string
	var issue int
	var installationID, repoID int64
	err := b.pool.QueryRow(context.Background(), `SELECT owner, repo, issue, labeler, installation_id, repo_id FROM runs WHERE id = $1`, res.RunIDs[0]).
		Scan(&owner, &repo, &issue, &labeler, &installationID, &repoID)
	if err != nil {
		t.Fatal(err)
	}
	if owner != "Codertocat" || repo != "Hello-World" || issue != 1 || labeler != "Codertocat" || installationID != 5 || repoID != 186853002 {
		t.Errorf("run = %s/%s#%d by %s (installation %d, repo %d)", owner, repo, issue, labeler, installationID, repoID)
	}
	if c := b.stored(t); c != (counts{1, 1, 1}) {
		t.Errorf("stored %+v", c)
	}
	// Labeled again (a new delivery) while active: no second run.
	rec = b.send(t, "issues", labeled(t))
	if res2 := decodeResponse(t, rec); res2.Status != "already_active" || res2.RunIDs[0] != res.RunIDs[0] {
		t.Errorf("second label: %s", rec.Body.String())
	}
	if c := b.stored(t); c.runs != 1 || c.jobs != 1 {
		t.Errorf("stored %+v after a second label", c)
	}
}

func TestWebhookSameDelivery20TimesAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	raw, id := labeled(t), b.nextDelivery()
	const n = 20
	codes := make(chan int, n)
	statuses := make(chan string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			rec := b.do(t, request{event: "issues", delivery: id, raw: raw})
			codes <- rec.Code
			statuses <- decodeResponse(t, rec).Status
		})
	}
	close(start)
	wg.Wait()
	close(codes)
	close(statuses)
	for c := range codes {
		if c != http.StatusOK {
			t.Errorf("status %d, want 200", c)
		}
	}
	queued := 0
	for s := range statuses {
		if s == "queued" {
			queued++
		} else if s != "duplicate" {
			t.Errorf("status %q", s)
		}
	}
	if queued != 1 {
		t.Errorf("%d deliveries queued a run, want 1", queued)
	}
	if c := b.stored(t); c != (counts{1, 1, 1}) {
		t.Errorf("stored %+v, want one delivery, one run, one job", c)
	}
}

func TestWebhookRedeliveryAfterRiverDeletedFinishedJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	raw, id := labeled(t), b.nextDelivery()
	if rec := b.do(t, request{event: "issues", delivery: id, raw: raw}); decodeResponse(t, rec).Status != "queued" {
		t.Fatalf("first delivery: %s", rec.Body.String())
	}
	// The run finished and, a day later, River deleted its job.
	if _, err := b.pool.Exec(context.Background(), `UPDATE runs SET state = 'succeeded';
		DELETE FROM river_job; UPDATE deliveries SET received_at = now() - interval '25 hours'`); err != nil {
		t.Fatal(err)
	}
	rec := b.do(t, request{event: "issues", delivery: id, raw: raw})
	if rec.Code != http.StatusOK || decodeResponse(t, rec).Status != "duplicate" {
		t.Errorf("redelivery: %d %s, want 200 duplicate", rec.Code, rec.Body.String())
	}
	if c := b.stored(t); c.runs != 1 || c.jobs != 0 {
		t.Errorf("stored %+v, want still one run and no new job", c)
	}
	// The same GUID from another App is a different delivery.
	rec = b.do(t, request{event: "issues", delivery: id, raw: raw, headers: map[string]string{"X-GitHub-Hook-Installation-Target-ID": "1"}})
	if decodeResponse(t, rec).Status != "queued" {
		t.Errorf("same GUID from another App: %s", rec.Body.String())
	}
}

func TestWebhookUnlabelOrCloseCancels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		event func(t testing.TB) []byte
	}{
		{"Unlabeled", func(t testing.TB) []byte {
			return fixture(t, "issues/unlabeled.payload.json", installation(5), label(testLabel))
		}},
		{"Closed", func(t testing.TB) []byte {
			return fixture(t, "issues/opened.payload.json", installation(5), action("closed"), issueNumber(1))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			queued := decodeResponse(t, b.send(t, "issues", labeled(t)))
			if queued.Status != "queued" {
				t.Fatalf("label: %+v", queued)
			}
			rec := b.send(t, "issues", tt.event(t))
			res := decodeResponse(t, rec)
			if rec.Code != http.StatusOK || res.Status != "cancelled" || len(res.RunIDs) != 1 || res.RunIDs[0] != queued.RunIDs[0] {
				t.Fatalf("cancel: %d %s", rec.Code, rec.Body.String())
			}
			var state string
			var jobState rivertype.JobState
			if err := b.pool.QueryRow(context.Background(), `SELECT r.state, j.state FROM runs r JOIN river_job j ON j.id = r.job_id WHERE r.id = $1`,
				queued.RunIDs[0]).Scan(&state, &jobState); err != nil {
				t.Fatal(err)
			}
			if state != run.StateCancelled || jobState != rivertype.JobStateCancelled {
				t.Errorf("run %s, job %s; want both cancelled", state, jobState)
			}
		})
	}
}

func TestWebhookUnlabelOfAnotherLabelIsIgnored(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.send(t, "issues", labeled(t))
	rec := b.send(t, "issues", fixture(t, "issues/unlabeled.payload.json", installation(5)))
	if rec.Code != http.StatusAccepted {
		t.Errorf("unlabel of %q: %d", "bug", rec.Code)
	}
	var state string
	if err := b.pool.QueryRow(context.Background(), `SELECT state FROM runs`).Scan(&state); err != nil || state != run.StateQueued {
		t.Errorf("run state %q (%v), want queued", state, err)
	}
}

func TestWebhookDatabaseDownIs5xx(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.pool.Close()
	for _, tt := range []struct {
		event string
		raw   []byte
	}{
		{"issues", labeled(t)},
		{"issues", fixture(t, "issues/unlabeled.payload.json", installation(5), label(testLabel))},
		{"installation", fixture(t, "installation/created.payload.json")},
	} {
		rec := b.send(t, tt.event, tt.raw)
		if rec.Code < 500 {
			t.Errorf("%s with the database down: %d, want 5xx", tt.event, rec.Code)
		}
	}
}

func TestHealthAndReady(t *testing.T) {
	t.Parallel()
	failing := errors.New("docker unreachable")
	tests := []struct {
		name      string
		pool      func(t *testing.T) *bundle
		wantReady int
	}{
		{"Migrated", func(t *testing.T) *bundle { return setup(t) }, http.StatusOK},
		{"NotMigrated", func(t *testing.T) *bundle { return setupWithPool(t, dbtest.NewEmpty(t), nil) }, http.StatusServiceUnavailable},
		{"ExtraCheckFails", func(t *testing.T) *bundle {
			return setupWithPool(t, dbtest.New(t), func(context.Context) error { return failing })
		}, http.StatusServiceUnavailable},
		{"DatabaseDown", func(t *testing.T) *bundle {
			b := setup(t)
			b.pool.Close()
			return b
		}, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := tt.pool(t)
			for path, want := range map[string]int{"/healthz": http.StatusOK, "/readyz": tt.wantReady} {
				rec := newRecorder()
				b.srv.ServeHTTP(rec, newGet(path))
				if rec.Code != want {
					t.Errorf("GET %s = %d %s, want %d", path, rec.Code, rec.Body.String(), want)
				}
			}
		})
	}
}

func TestHookTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"App", map[string]string{"X-GitHub-Hook-Installation-Target-Type": "integration", "X-GitHub-Hook-Installation-Target-ID": "29310", "X-GitHub-Hook-ID": "1"}, "integration:29310"},
		{"RepoHook", map[string]string{"X-GitHub-Hook-ID": "292430182"}, "hook:292430182"},
		{"TypeWithoutID", map[string]string{"X-GitHub-Hook-Installation-Target-Type": "integration", "X-GitHub-Hook-ID": "7"}, "hook:7"},
		{"Nothing", nil, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if got := hookTarget(h); got != tt.want {
				t.Errorf("hookTarget = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStatusOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want int
	}{
		{ErrUnauthorized, 401},
		{ErrBadRequest, 400},
		{ErrTooLarge, 413},
		{fault.Transient(errors.New("connection reset")), 503},
		{errors.New("boom"), 500},
	}
	for _, tt := range tests {
		if got := statusOf(tt.err); got != tt.want {
			t.Errorf("statusOf(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestWebhookUninstallCancelsTheInstallationsRuns: the App removed (or suspended) from an
// installation cancels its queued runs at once; other installations' runs are untouched.
func TestWebhookUninstallCancelsTheInstallationsRuns(t *testing.T) {
	t.Parallel()
	for _, act := range []string{"deleted", "suspend"} {
		t.Run(act, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ours := decodeResponse(t, b.send(t, "issues", labeled(t, issueNumber(1))))
			other := decodeResponse(t, b.send(t, "issues", labeled(t, issueNumber(2), installation(6))))
			if ours.Status != "queued" || other.Status != "queued" {
				t.Fatalf("label: %+v %+v", ours, other)
			}
			rec := b.send(t, "installation", fixture(t, "installation/deleted.payload.json", installation(5), action(act)))
			res := decodeResponse(t, rec)
			if rec.Code != http.StatusOK || res.Status != "cancelled" || len(res.RunIDs) != 1 || res.RunIDs[0] != ours.RunIDs[0] {
				t.Fatalf("uninstall: %d %s", rec.Code, rec.Body.String())
			}
			for id, want := range map[int64]string{ours.RunIDs[0]: run.StateCancelled, other.RunIDs[0]: run.StateQueued} {
				var state string
				if err := b.pool.QueryRow(context.Background(), `SELECT state FROM runs WHERE id = $1`, id).Scan(&state); err != nil {
					t.Fatal(err)
				}
				if state != want {
					t.Errorf("run %d is %s, want %s", id, state, want)
				}
			}
		})
	}
}

package metrics

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/web/webtest"
)

const adminTestToken = "admin-token-of-the-admin-test-0123"

// idleArgs is a job nobody works: it stays available until someone cancels it.
type idleArgs struct{}

func (idleArgs) Kind() string { return "admin_test_idle" }

// adminBundle is an admin listener with River's UI over a test schema holding idle jobs.
type adminBundle struct {
	pool  *pgxpool.Pool
	river *river.Client[pgx.Tx]
	url   string // http://127.0.0.1:port, the admin listener's origin
}

func setupAdmin(t *testing.T) *adminBundle {
	t.Helper()
	pool := dbtest.New(t)
	// An insert-only client (no queues): River's UI reads and acts through it.
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("creating the River client: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a, err := New().StartAdmin(ctx, AdminConfig{Addr: "127.0.0.1:0", Token: adminTestToken, River: rc, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("starting the admin listener: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return &adminBundle{pool: pool, river: rc, url: "http://" + a.Addr().(*net.TCPAddr).String()}
}

// job inserts an idle job and returns its id.
func (b *adminBundle) job(t *testing.T) int64 {
	t.Helper()
	res, err := b.river.Insert(context.Background(), idleArgs{}, nil)
	if err != nil {
		t.Fatalf("inserting a job: %v", err)
	}
	return res.Job.ID
}

// state reads job id's state from PostgreSQL.
func (b *adminBundle) state(t *testing.T, id int64) string {
	t.Helper()
	var s string
	if err := b.pool.QueryRow(context.Background(), `SELECT state FROM river_job WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatalf("reading job %d's state: %v", id, err)
	}
	return s
}

// TestBrowserRiverUIRefusesAnotherSite is the cross-site attack on River's UI in headless
// Chromium: the operator has opened River's UI with the admin token (basic authentication,
// which the browser then sends by itself), and visits another site, served from another port
// of 127.0.0.1 (another origin), whose page posts a form to River's cancel API. The form's
// body is text/plain shaped as JSON ({"ids":[...],"x":"="}), which River's UI would read. The
// job must stay available. River's UI's own request, from its page, still cancels a job, so the
// browser did hold the credentials.
func TestBrowserRiverUIRefusesAnotherSite(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	target, own := b.job(t), b.job(t)
	cancelURL := b.url + "/riverui/api/jobs/cancel"

	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>
<form method="post" enctype="text/plain" action="%s">
<input type="hidden" name="%s" value='"}'>
</form>
<script>document.forms[0].submit()</script>
</body></html>`, html.EscapeString(cancelURL), html.EscapeString(fmt.Sprintf(`{"ids":["%d"],"x":"`, target)))
	}))
	t.Cleanup(attacker.Close)

	ctx := webtest.Browser(t)
	// The operator opens River's UI with the token, as a browser asks for it (basic
	// authentication); the browser keeps it for the listener from then on.
	withToken := strings.Replace(b.url, "http://", "http://operator:"+adminTestToken+"@", 1) + "/riverui/"
	if err := chromedp.Do(ctx, chromedp.Navigate(withToken), chromedp.WaitVisible(chromedp.CSS("#root"))); err != nil {
		t.Fatalf("opening River's UI: %v", err)
	}

	// The attack: another site's page posts its form; wait for the browser's answer to it.
	responses := chromedp.Events(ctx, network.ResponseReceived)
	if err := chromedp.Do(ctx, chromedp.Navigate(attacker.URL)); err != nil {
		t.Fatalf("visiting the other site: %v", err)
	}
	var status int64
	for ev, err := range responses {
		if err != nil {
			t.Fatalf("waiting for the answer to the other site's form: %v", err)
		}
		if ev.Response.URL == cancelURL {
			status = ev.Response.Status
			break
		}
	}
	webtest.Screenshot(t, ctx, "after-the-form")
	if got := b.state(t, target); got != "available" || status != http.StatusForbidden {
		t.Errorf("another site's form: answered %d, the job is %s; want 403 and available", status, got)
	}

	// River's UI itself, from its own page, still acts: the same request as its cancel button.
	if err := chromedp.Do(ctx, chromedp.Navigate(b.url+"/riverui/"), chromedp.WaitVisible(chromedp.CSS("#root"))); err != nil {
		t.Fatalf("opening River's UI again: %v", err)
	}
	js := fmt.Sprintf(`fetch('/riverui/api/jobs/cancel', {method: 'POST', headers: {Accept: 'application/json'}, body: JSON.stringify({ids: ['%d']})}).then(r => r.status)`, own)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("cancelling from River's UI: %v", err)
	}
	if got != http.StatusOK || b.state(t, own) != "cancelled" {
		t.Errorf("River's UI's own cancel: %d, job %s", got, b.state(t, own))
	}
}

// TestAdminRefusesOtherOrigins sends each of River's UI's state-changing API requests (and a
// POST to /metrics: the rule holds for the whole listener), with the token, as a browser sends them from another site (another origin, the same site on
// another port, or an old browser that only sends Origin): each is refused with 403 before
// River's UI sees it. Reads pass (a link to River's UI works), as do River's UI's own
// requests (same-origin) and requests no browser page sent (curl with the token).
func TestAdminRefusesOtherOrigins(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	id := b.job(t)
	ids := fmt.Sprintf(`{"ids":["%d"]}`, id)
	routes := []struct{ method, path, body string }{
		{"POST", "/riverui/api/jobs/cancel", ids},
		{"POST", "/riverui/api/jobs/delete", ids},
		{"POST", "/riverui/api/jobs/retry", ids},
		{"PUT", "/riverui/api/queues/default/pause", ""},
		{"PUT", "/riverui/api/queues/default/resume", ""},
		{"PATCH", "/riverui/api/queues/default", `{"concurrency":null}`},
		{"POST", "/metrics", ""},
	}
	foreign := map[string]map[string]string{
		"CrossSite":          {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
		"SameSiteOtherPort":  {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"},
		"OldBrowserOrigin":   {"Origin": "http://127.0.0.1:1"},
		"OldBrowserNullOrig": {"Origin": "null"},
	}
	send := func(t *testing.T, method, path, body string, header map[string]string) int {
		t.Helper()
		req, err := http.NewRequest(method, b.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("operator", adminTestToken)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for name, header := range foreign {
		for _, rt := range routes {
			if got := send(t, rt.method, rt.path, rt.body, header); got != http.StatusForbidden {
				t.Errorf("%s: %s %s answered %d, want 403", name, rt.method, rt.path, got)
			}
		}
		if got := send(t, "GET", "/riverui/api/jobs?state=available", "", header); got != http.StatusOK {
			t.Errorf("%s: a read answered %d, want 200", name, got)
		}
	}
	if got := b.state(t, id); got != "available" {
		t.Fatalf("the job is %s after the refused requests", got)
	}

	// River's UI's own request: same-origin, the Origin its page has.
	if got := send(t, "POST", "/riverui/api/jobs/cancel", ids, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": b.url}); got != http.StatusOK {
		t.Errorf("a same-origin cancel answered %d", got)
	}
	if got := b.state(t, id); got != "cancelled" {
		t.Errorf("the same-origin cancel left the job %s", got)
	}
	// A script with the token, no browser: no Sec-Fetch-Site, no Origin.
	other := b.job(t)
	if got := send(t, "POST", "/riverui/api/jobs/cancel", fmt.Sprintf(`{"ids":["%d"]}`, other), nil); got != http.StatusOK || b.state(t, other) != "cancelled" {
		t.Errorf("a cancel from a script answered %d, the job is %s", got, b.state(t, other))
	}
}

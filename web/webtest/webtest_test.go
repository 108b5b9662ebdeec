package webtest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/frognano/frognano/web/webtest"
)

func TestBrowserShowsPage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>t</title><p id="msg">hello from the test server</p>`)
	}))
	t.Cleanup(srv.Close)

	ctx := webtest.Browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if got := webtest.Text(t, ctx, "#msg"); got != "hello from the test server" {
		t.Fatalf("text = %q", got)
	}
	path := webtest.Screenshot(t, ctx, "page")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "\x89PNG") {
		t.Fatalf("screenshot %s is not a PNG", path)
	}
}

func TestFindChromiumNamesWhatIsMissing(t *testing.T) {
	t.Setenv(webtest.EnvChromium, "/nonexistent/chromium")
	_, err := webtest.FindChromium()
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/chromium") {
		t.Fatalf("err = %v, want one naming the missing path", err)
	}
}

// TestWaitTextAcrossANavigation: after a click that submits a form, WaitText reads the new
// page's text even though the old page has an element with the same id.
func TestWaitTextAcrossANavigation(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.Method == http.MethodPost {
			fmt.Fprint(w, `<!doctype html><title>t</title><p id="msg">after</p>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>t</title><p id="msg">before</p><form method="post"><button id="go">go</button></form>`)
	}))
	t.Cleanup(srv.Close)
	ctx := webtest.Browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL), chromedp.Click(chromedp.CSS("#go"))); err != nil {
		t.Fatal(err)
	}
	webtest.WaitText(t, ctx, "#msg", "after")
	if got := webtest.Text(t, ctx, "#msg"); got != "after" {
		t.Errorf("text %q after WaitText", got)
	}
}

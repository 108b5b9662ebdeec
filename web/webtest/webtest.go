// Package webtest drives a real headless Chromium from Go tests (through chromedp) for the web
// pages: it finds the browser, starts it with a throwaway profile and saves screenshots as test
// artifacts. A test that needs the browser fails when it is missing; it never skips.
//
// webtest is for tests only; it never reaches a host other than the ones a test gives it.
package webtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvChromium names the browser binary to use instead of searching PATH.
const EnvChromium = "FROGNANO_CHROMIUM"

// envArtifacts is the directory screenshots are written to (default <repository>/.artifacts).
const envArtifacts = "FROGNANO_TEST_ARTIFACTS"

// defaultTimeout bounds one browser session (a test's whole use of its browser): generous,
// because the machine running the suite may be loaded; tests wait on the page's content, never
// on durations.
const defaultTimeout = 3 * time.Minute

// browserNames are searched on PATH in this order: Debian's package first.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// FindChromium returns the path of the Chromium binary: $FROGNANO_CHROMIUM when set, else the
// first of chromium, chromium-browser, google-chrome found on PATH.
func FindChromium() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", errors.New("webtest: " + EnvChromium + "=" + p + " does not exist")
		}
		return p, nil
	}
	for _, n := range browserNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("webtest: no Chromium found on PATH (looked for " + strings.Join(browserNames, ", ") +
		"); deploy/testenv/setup.sh installs Debian's chromium package, or set " + EnvChromium)
}

// Browser starts a headless Chromium with a fresh profile for t and returns a chromedp context
// (a first tab) bounded by 3 minutes (defaultTimeout). The browser is stopped when t ends. The test fails
// at once when no Chromium is installed.
func Browser(t testing.TB) context.Context {
	t.Helper()
	bin, err := FindChromium()
	if err != nil {
		t.Fatal(err)
	}
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts,
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1024),
		chromedp.Flag("disable-dev-shm-usage", true),
		// No component updates, safe-browsing or other calls home: a test reaches only
		// the hosts it names.
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox on (containers, CI machines).
		opts = append(opts, chromedp.NoSandbox)
	}
	ctx, cancelTimeout := context.WithTimeout(context.Background(), defaultTimeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	// Start the browser now, so a browser that cannot start fails here with its own error.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("webtest: starting %s: %v", bin, err)
	}
	return bctx
}

// artifactsDir returns the directory test artifacts are written to, creating it:
// $FROGNANO_TEST_ARTIFACTS, else .artifacts at the repository's root (the directory holding
// go.mod above the test's working directory).
func artifactsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(envArtifacts)
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, ".artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("webtest: creating the artifacts directory: %v", err)
	}
	return dir
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("webtest: no go.mod above the working directory; set " + envArtifacts)
		}
		dir = parent
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Screenshot saves a full-page PNG (quality 100 is what makes Chromium write PNG) of the page ctx shows as <artifacts>/<test name>-<name>.png
// and returns its path. A screenshot that cannot be taken fails the test.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("webtest: taking screenshot %q: %v", name, err)
	}
	file := unsafeName.ReplaceAllString(t.Name()+"-"+name, "_")
	if !strings.HasSuffix(file, ".png") {
		file += ".png"
	}
	path := filepath.Join(artifactsDir(t), file)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatalf("webtest: writing screenshot: %v", err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// Text returns the visible text of the first element matching the CSS selector sel, waiting
// until it is visible. A page that navigates meanwhile (a form just submitted) is read again
// once the new document is there, instead of failing on the old one's lost context.
func Text(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	for {
		err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel)))
		var s string
		if err == nil {
			s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		}
		if err == nil {
			return s
		}
		if !navigated(err) || ctx.Err() != nil {
			t.Fatalf("webtest: reading the text of %q: %v", sel, err)
		}
		if !pause(ctx) {
			t.Fatalf("webtest: reading the text of %q: %v", sel, ctx.Err())
		}
	}
}

// WaitText waits until the first element matching sel has the text want (textContent, spaces
// at the ends trimmed), across page loads, and fails the test if the browser's session ends
// first. Use it after an action that navigates, where the old page may still be showing.
func WaitText(t testing.TB, ctx context.Context, sel, want string) {
	t.Helper()
	js := `(function () { var e = document.querySelector(` + strconv.Quote(sel) + `); return e ? e.textContent.trim() : null; })()`
	last := "(no element)"
	for {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[*string](js))
		switch {
		case err == nil && got != nil && *got == want:
			return
		case err == nil && got != nil:
			last = strconv.Quote(*got)
		case err != nil && !navigated(err):
			t.Fatalf("webtest: waiting for %q to read %q: %v", sel, want, err)
		}
		if !pause(ctx) {
			t.Fatalf("webtest: %q never read %q (last %s): %v", sel, want, last, ctx.Err())
		}
	}
}

// navigated reports whether err is the browser's answer to a query on a document that has
// just been replaced by another.
func navigated(err error) bool {
	msg := err.Error()
	for _, s := range []string{"Cannot find context with specified id", "Execution context was destroyed",
		"Could not find node with given id", "No node with given id", "Inspected target navigated or closed"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// pause waits a moment between two looks at a page; false when ctx ended.
func pause(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(50 * time.Millisecond):
		return true
	}
}

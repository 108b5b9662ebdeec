package main

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/frognano/frognano/config"
	"github.com/frognano/frognano/githubapp"
)

// DefaultSetupTimeout is how long `frognano setup` waits for the operator to confirm the App.
const DefaultSetupTimeout = 15 * time.Minute

// setupOptions are `frognano setup`'s flags.
type setupOptions struct {
	githubURL, org, webhookURL, out, name, listen string
	timeout                                       time.Duration
}

// setupCmd is `frognano setup`: it creates the GitHub App with GitHub's manifest flow. A page
// on a loopback address posts the manifest (name, the permissions and events the service
// needs, the webhook URL) to GitHub; GitHub shows it to the operator and, once confirmed,
// redirects back with a one-time code, which is exchanged for the App's id, key and webhook
// secret. Those are written with mode 0600 (the key to a file of its own, the settings to
// --out, which `make serve` and docker compose read); no secret is printed.
func setupCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o := setupOptions{}
	fs := newFlagSet("setup", stderr)
	fs.StringVar(&o.githubURL, "github-url", orDefault(strings.TrimSpace(config.GitHubURL(getenv)), githubapp.DefaultURL), "GitHub: https://github.com or a GitHub Enterprise Server such as https://ghe.example.com (GITHUB_URL)")
	fs.StringVar(&o.org, "org", "", "create the App in this organization (default: the signed-in user's account)")
	fs.StringVar(&o.webhookURL, "webhook-url", "", "where GitHub delivers webhooks: https://YOUR-HOST/webhook (required)")
	fs.StringVar(&o.out, "out", ".env", "file to write the settings to (mode 0600; the private key goes beside it)")
	fs.StringVar(&o.name, "name", "frognano", "the App's name (unique on the GitHub instance)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "loopback address of the local page")
	fs.DurationVar(&o.timeout, "timeout", DefaultSetupTimeout, "how long to wait for the App to be confirmed on GitHub")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return usageError{err.Error()}
	}
	keyPath := strings.TrimSuffix(o.out, filepath.Ext(o.out)) + "." + config.SafeName(o.name) + ".private-key.pem"
	if filepath.Base(o.out) == ".env" {
		keyPath = filepath.Join(filepath.Dir(o.out), config.SafeName(o.name)+".private-key.pem")
	}
	for _, p := range []string{o.out, keyPath} {
		if _, err := os.Lstat(p); err == nil {
			return usageError{fmt.Sprintf("%s exists; move it away or choose another --out (setup never overwrites)", p)}
		}
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return setupError{fmt.Errorf("listening on %s: %w", o.listen, err)}
	}
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		ln.Close()
		return usageError{"--listen must be a loopback address: the page hands GitHub's one-time code to this process only"}
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	f := &manifestFlow{opts: o, state: hex.EncodeToString(b[:]), keyPath: keyPath,
		base: "http://" + ln.Addr().String(), done: make(chan error, 1)}
	srv := &http.Server{Handler: f.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		// Shutdown, not Close: the browser is still reading the page that says it worked.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	fmt.Fprintf(stdout, "frognano setup: open %s/ in a browser on this machine (signed in to %s as an owner of %s)\n",
		f.base, o.githubURL, orDefault(o.org, "your account"))
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	select {
	case <-ctx.Done():
		return fmt.Errorf("no App was confirmed on GitHub within %s: %w", o.timeout, ctx.Err())
	case err := <-f.done:
		if err != nil {
			return err
		}
	}
	app := f.app
	fmt.Fprintf(stdout, "frognano setup: created the GitHub App %q (id %d)\n", app.Slug, app.ID)
	fmt.Fprintf(stdout, "  wrote %s (settings) and %s (private key), both mode 0600\n", o.out, keyPath)
	fmt.Fprintf(stdout, "next:\n")
	fmt.Fprintf(stdout, "  1. install the App on the repositories frognano may work on: %s/installations/new\n", strings.TrimRight(app.HTMLURL, "/"))
	fmt.Fprintf(stdout, "  2. create the label %q in those repositories\n", config.DefaultLabel)
	fmt.Fprintf(stdout, "  3. add FROGNANO_MODEL_URL to %s, then check everything with `frognano doctor` and start `make serve`\n", o.out)
	return nil
}

var appNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._-]{0,33}$`)

func (o setupOptions) check() error {
	var errs []error
	cfg := githubapp.Config{URL: o.githubURL}
	if _, err := cfg.Endpoints(); err != nil {
		errs = append(errs, fmt.Errorf("--github-url: %w", err))
	}
	u, err := url.Parse(o.webhookURL)
	switch {
	case o.webhookURL == "":
		errs = append(errs, errors.New("--webhook-url is required: where GitHub reaches frognano, e.g. https://frognano.example.com/webhook"))
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil:
		errs = append(errs, fmt.Errorf("--webhook-url %q is not an http(s) URL", o.webhookURL))
	}
	if o.org != "" && !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}$`).MatchString(o.org) {
		errs = append(errs, fmt.Errorf("--org %q is not an organization login", o.org))
	}
	if !appNameRE.MatchString(o.name) {
		errs = append(errs, fmt.Errorf("--name %q: up to 34 letters, digits, spaces, dots, dashes or underscores", o.name))
	}
	return errors.Join(errs...)
}

// manifestFlow is the local side of GitHub's App manifest flow.
type manifestFlow struct {
	opts    setupOptions
	state   string // one-time; sent to GitHub and required back
	keyPath string
	base    string // http://127.0.0.1:PORT
	done    chan error
	used    atomic.Bool
	app     githubapp.ManifestApp
}

func (f *manifestFlow) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", f.handleStart)
	mux.HandleFunc("GET /callback", f.handleCallback)
	return mux
}

// manifest is the App that frognano needs, all of it: see githubapp.RequiredPermissions.
func (f *manifestFlow) manifest() ([]byte, error) {
	u, _ := url.Parse(f.opts.webhookURL)
	return json.Marshal(map[string]any{
		"name":                f.opts.name,
		"url":                 u.Scheme + "://" + u.Host + "/",
		"description":         "Answers an issue labelled frognano with a draft pull request written by FrogNano-4B, with its transcript and the repository's test results.",
		"hook_attributes":     map[string]any{"url": f.opts.webhookURL, "active": true},
		"redirect_url":        f.base + "/callback",
		"public":              false,
		"default_permissions": githubapp.RequiredPermissions(true),
		"default_events":      githubapp.ManifestEvents(),
	})
}

var startPage = template.Must(template.New("start").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>frognano setup</title></head>
<body onload="document.forms[0].submit()">
<p>Creating the GitHub App <b>{{.Name}}</b> on {{.Where}}. If nothing happens, press the button.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<button type="submit">Create the GitHub App on GitHub</button>
</form></body></html>
`))

func (f *manifestFlow) handleStart(w http.ResponseWriter, r *http.Request) {
	m, err := f.manifest()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	web := strings.TrimRight(f.opts.githubURL, "/")
	action := web + "/settings/apps/new"
	where := web
	if f.opts.org != "" {
		action = web + "/organizations/" + url.PathEscape(f.opts.org) + "/settings/apps/new"
		where = web + " for " + f.opts.org
	}
	action += "?state=" + url.QueryEscape(f.state)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	_ = startPage.Execute(w, map[string]any{"Name": f.opts.name, "Where": where, "Action": template.URL(action), "Manifest": string(m)})
}

var donePage = template.Must(template.New("done").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>frognano setup</title></head><body>
<p>The GitHub App <b>{{.Slug}}</b> (id {{.ID}}) was created and its settings were written. Go back to the terminal for the next steps.</p>
</body></html>
`))

// handleCallback receives GitHub's redirect: it checks the state, exchanges the code once and
// writes the settings.
func (f *manifestFlow) handleCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.state)) != 1 {
		http.Error(w, "this page was not opened by this frognano setup (state mismatch)", http.StatusBadRequest)
		return
	}
	if !f.used.CompareAndSwap(false, true) {
		http.Error(w, "the App was already created", http.StatusConflict)
		return
	}
	app, err := githubapp.ConvertManifest(r.Context(), githubapp.Config{URL: f.opts.githubURL}, q.Get("code"))
	if err == nil {
		err = f.write(app)
	}
	if err != nil {
		http.Error(w, "creating the App failed; see the terminal", http.StatusBadGateway)
		f.done <- err
		return
	}
	f.app = app
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = donePage.Execute(w, app)
	f.done <- nil
}

// write stores the key and the settings, each created new with mode 0600.
func (f *manifestFlow) write(app githubapp.ManifestApp) error {
	key, err := filepath.Abs(f.keyPath)
	if err != nil {
		return err
	}
	if err := writeNew(f.keyPath, []byte(app.PEM)); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by `frognano setup` for the GitHub App %s (%s). Secrets: keep this file mode 0600.\n", app.Slug, app.HTMLURL)
	for _, kv := range [][2]string{
		{githubapp.EnvURL, strings.TrimRight(f.opts.githubURL, "/")},
		{githubapp.EnvAppID, fmt.Sprint(app.ID)},
		{githubapp.EnvPrivateKeyFile, key},
		{"GITHUB_WEBHOOK_SECRET", app.WebhookSecret},
		{"GITHUB_APP_CLIENT_ID", app.ClientID},
	} {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], envQuote(kv[1]))
	}
	b.WriteString("# FROGNANO_MODEL_URL=http://gpu-host:8000/v1\n")
	return writeNew(f.opts.out, []byte(b.String()))
}

// envQuote leaves plain values bare and single-quotes the others, which both bash (`make
// serve` sources the file) and docker compose's env_file read the same way.
func envQuote(v string) string {
	if regexp.MustCompile(`^[A-Za-z0-9_./:@+-]*$`).MatchString(v) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

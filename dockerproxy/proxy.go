// Package dockerproxy is a filtering proxy in front of a Docker engine's API, so that frognano
// can run its sandboxes without holding the engine's socket, which is root on the engine's
// host. It forwards only the calls frognano makes (runner/sandbox, runner/env, doctor), lets
// them act only on containers and images that carry frognano's labels, and refuses every
// container configuration that would reach the host: privileged, host paths, devices, added
// capabilities beyond the setup phase's, the host's or another container's namespaces,
// unconfined security profiles. Everything else gets 403 with a message that says why.
//
// The proxy never forwards a request it has not checked, and it forwards the checked body it
// re-encoded itself, never the client's bytes, so that the engine reads exactly what was
// checked. It holds no credential and logs no request body.
package dockerproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/logging"
)

// DefaultNetworks are the networks a container may join besides "none" when Config.Networks
// is empty: the engine's default bridge, the default of FROGNANO_SETUP_NETWORK.
var DefaultNetworks = []string{"bridge"}

// minAPIVersion is the oldest API version a request may name in its path. Older versions
// read fields at other places (a HostConfig given to start, for example) that the checks here
// do not look at. Docker 20.10 speaks 1.41.
const minAPIVersion = "1.40"

// maxJSONBody bounds the JSON bodies the proxy reads to check them (create, exec, commit).
const maxJSONBody = 1 << 20

// lookupTimeout bounds each request the proxy makes of its own to check one (an inspect).
const lookupTimeout = 30 * time.Second

// Config configures a Proxy.
type Config struct {
	// Engine is the engine's address: unix:///var/run/docker.sock (or unix:/path), or
	// tcp://host:port (plain HTTP: only on a private link).
	Engine string
	// Networks are the Docker networks a container may join besides "none" (the setup
	// network, FROGNANO_SETUP_NETWORK); default DefaultNetworks. "host" and "container:…"
	// are refused whatever this says.
	Networks []string
	// Owner, when not empty, is the only dev.frognano.owner whose containers may be created
	// and acted on: one proxy per worker keeps workers off each other's sandboxes.
	Owner  string
	Logger *slog.Logger // default: discard
	// Version is frognano's version, shown in the engine's /version answer (ComponentName).
	Version string
}

// ComponentName is the component the proxy adds to the engine's /version answer, so that a
// client (frognano doctor) can tell that it talks to the filter and not to the engine itself.
const ComponentName = "frognano docker-proxy"

// Proxy is an http.Handler that serves the filtered API. The zero value is not usable; use New.
type Proxy struct {
	cfg      Config
	dial     func(ctx context.Context) (net.Conn, error)
	rp       *httputil.ReverseProxy
	client   *http.Client // the proxy's own lookups
	networks map[string]bool
	log      *slog.Logger
}

// New returns a proxy for cfg. It does not contact the engine.
func New(cfg Config) (*Proxy, error) {
	dial, err := dialer(cfg.Engine)
	if err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	nets := cfg.Networks
	if len(nets) == 0 {
		nets = DefaultNetworks
	}
	p := &Proxy{cfg: cfg, dial: dial, networks: map[string]bool{"none": true}, log: cfg.Logger}
	for _, n := range nets {
		if n == "host" || strings.Contains(n, ":") || n == "" {
			return nil, fmt.Errorf("network %q may not be allowed to sandboxes", n)
		}
		p.networks[n] = true
	}
	tr := &http.Transport{
		DialContext:           func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // wait and attach answer when the container ends
	}
	p.client = &http.Client{Transport: tr, Timeout: lookupTimeout}
	p.rp = &httputil.ReverseProxy{
		Rewrite:       func(*httputil.ProxyRequest) {}, // the request is built by ServeHTTP
		Transport:     tr,
		FlushInterval: -1, // wait, logs and archives stream
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.log.Warn("docker-proxy: the engine did not answer", "method", r.Method, "path", r.URL.Path, logging.Err(err))
			writeError(w, http.StatusBadGateway, "frognano docker-proxy: the Docker engine did not answer: "+err.Error())
		},
	}
	return p, nil
}

// dialer parses an engine address.
func dialer(engine string) (func(ctx context.Context) (net.Conn, error), error) {
	var d net.Dialer
	switch {
	case strings.HasPrefix(engine, "unix://"), strings.HasPrefix(engine, "unix:"):
		path := strings.TrimPrefix(strings.TrimPrefix(engine, "unix:"), "//")
		if !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("engine %q: a unix socket needs an absolute path", engine)
		}
		return func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "unix", path) }, nil
	case strings.HasPrefix(engine, "tcp://"):
		u, err := url.Parse(engine)
		if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("engine %q: want tcp://HOST:PORT", engine)
		}
		return func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", u.Host) }, nil
	}
	return nil, fmt.Errorf("engine %q: want unix:///path/docker.sock or tcp://HOST:PORT", engine)
}

// Refusal is a request the proxy does not forward. Status is the HTTP status it answers.
type Refusal struct {
	Status int
	Reason string
	detail string // for the proxy's log alone: what Reason may not tell the client
}

func (r *Refusal) Error() string { return r.Reason }

func refuse(format string, args ...any) *Refusal {
	return &Refusal{Status: http.StatusForbidden, Reason: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *Refusal {
	return &Refusal{Status: http.StatusBadRequest, Reason: fmt.Sprintf(format, args...)}
}

// writeError answers in the engine's error shape, which Docker clients show as is.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

var versionRE = regexp.MustCompile(`^/v([0-9]{1,3})\.([0-9]{1,3})(/.*)$`)

// splitVersion returns the path without its /vX.Y prefix, and whether the version (if any) is
// recent enough.
func splitVersion(p string) (string, error) {
	m := versionRE.FindStringSubmatch(p)
	if m == nil {
		if strings.HasPrefix(p, "/v") && len(p) > 2 && p[2] >= '0' && p[2] <= '9' {
			return "", badRequest("unreadable API version in %q", p)
		}
		return p, nil
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	minMajor, minMinor := 1, 40
	if major < minMajor || (major == minMajor && minor < minMinor) {
		return "", refuse("API version %s.%s is older than %s, which the proxy requires", m[1], m[2], minAPIVersion)
	}
	return m[3], nil
}

// ServeHTTP checks a request and forwards it, or answers why not.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fw, err := p.check(r)
	if err != nil {
		var ref *Refusal
		if !errors.As(err, &ref) {
			p.log.Warn("docker-proxy: checking a request failed", "method", r.Method, "path", r.URL.Path, logging.Err(err))
			writeError(w, http.StatusBadGateway, "frognano docker-proxy: checking the request: "+err.Error())
			return
		}
		p.log.Info("docker-proxy: request refused", "method", r.Method, "path", r.URL.Path, "reason", ref.Reason, "detail", ref.detail)
		writeError(w, ref.Status, "frognano docker-proxy refused "+r.Method+" "+r.URL.Path+": "+ref.Reason)
		return
	}
	out := r.Clone(r.Context())
	out.URL = &url.URL{Scheme: "http", Host: "docker", Path: fw.path, RawQuery: fw.query.Encode()}
	out.Host = "docker"
	out.RequestURI = ""
	switch {
	case fw.stream:
		// The engine reads its parameters with Go's ParseForm, which takes a form-encoded
		// POST or PUT body's values before the query's: the streamed body is a tar, always.
		out.Header.Set("Content-Type", "application/x-tar")
	case fw.body == nil:
		// No other call that streams takes a body, so none goes: a form-encoded one would
		// override the checked query (a tag's repo, for one).
		out.Body = http.NoBody
		out.ContentLength = 0
		out.Header.Del("Content-Length")
		out.Header.Del("Content-Type")
		out.TransferEncoding = nil
	}
	if fw.body != nil {
		out.Body = io.NopCloser(bytes.NewReader(fw.body))
		out.ContentLength = int64(len(fw.body))
		out.Header.Set("Content-Length", strconv.Itoa(len(fw.body)))
		out.Header.Set("Content-Type", "application/json")
		out.TransferEncoding = nil
	}
	if fw.serve != nil {
		fw.serve(w, out)
		return
	}
	if fw.list {
		p.serveList(w, out)
		return
	}
	if fw.version {
		p.serveVersion(w, out)
		return
	}
	if fw.hijack && r.Header.Get("Upgrade") != "" {
		p.forwardUpgrade(w, out)
		return
	}
	p.rp.ServeHTTP(w, out)
}

// forward is a checked request: where it goes, and the body to send instead of the client's
// (nil: the client's tar when stream, else none).
type forward struct {
	path    string
	query   url.Values
	body    []byte
	hijack  bool // attach or exec start: the connection may be upgraded to a raw stream
	stream  bool // archive: the client's body (a tar) is streamed to the engine
	list    bool // a container list to keep to the owner's containers
	version bool // the engine's version, to which the proxy adds itself
	// serve, when set, answers in place of passing the engine's answer on as it is (what
	// the proxy hides of other workloads: hide.go).
	serve func(w http.ResponseWriter, out *http.Request)
}

// readJSON reads a JSON body of at most maxJSONBody bytes.
func readJSON(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	if len(b) > maxJSONBody {
		return nil, &Refusal{Status: http.StatusRequestEntityTooLarge, Reason: fmt.Sprintf("the body is over %d bytes", maxJSONBody)}
	}
	return b, nil
}

// decodeStrict decodes exactly one JSON value into v, refusing unknown fields and trailing
// data: what the proxy cannot name it does not forward.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("unreadable JSON body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("unreadable JSON body: data after the value")
	}
	return nil
}

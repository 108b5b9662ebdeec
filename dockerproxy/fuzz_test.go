package dockerproxy

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/frognano/frognano/runner/sandbox"
)

// permissive answers every lookup as favourably as the engine ever could: every image an
// operator's, every container and volume user a sandbox of the owner. What the checks refuse
// then, they refuse on the request alone.
type permissive struct{ owner string }

func (p permissive) labels() map[string]string {
	return map[string]string{sandbox.LabelSandbox: "1", sandbox.LabelOwner: p.owner}
}
func (p permissive) image(context.Context, string) (imageFacts, error) {
	return imageFacts{ID: "sha256:" + strings.Repeat("a", 64)}, nil
}
func (p permissive) container(_ context.Context, ref string) (string, map[string]string, error) {
	return strings.Repeat("b", 64), p.labels(), nil
}
func (p permissive) volumeUsers(context.Context, string) ([]map[string]string, error) {
	return []map[string]string{p.labels()}, nil
}

var fuzzSeeds = []string{
	`{"Image":"frognano-sandbox:latest","User":"65534:65534","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o"},"NetworkDisabled":true,"Volumes":{"/workspace":{}},"HostConfig":{"NetworkMode":"none","CapDrop":["ALL"],"SecurityOpt":["no-new-privileges:true"],"ReadonlyRootfs":true,"IpcMode":"private","LogConfig":{"Type":"none"},"Tmpfs":{"/tmp":"rw,exec,size=1g"},"Memory":1024,"PidsLimit":64}}`,
	`{"Image":"frognano-sandbox:latest","User":"0:0","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o"},"HostConfig":{"NetworkMode":"bridge","CapAdd":["CHOWN","SETUID","cap_kill"],"Mounts":[{"Type":"volume","Target":"/workspace"}]}}`,
	`{"Image":"debian:bookworm-slim","Entrypoint":["timeout","-s","KILL","60","/bin/sh","-c","x"],"Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o","dev.frognano.watches":"abc"},"HostConfig":{"NetworkMode":"none","ReadonlyRootfs":true,"CapAdd":["DAC_READ_SEARCH"],"Mounts":[{"Type":"volume","Source":"` + strings.Repeat("c", 64) + `","Target":"/workspace","ReadOnly":true,"VolumeOptions":{"NoCopy":true}}]}}`,
	`{"Image":"x","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o"},"HostConfig":{"Privileged":false,"privileged":true}}`,
	`{"Image":"x","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o"},"Privileged":true,"Binds":["/:/h"]}`,
	`{"Image":"x","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o"},"HostConfig":{"Mounts":[{"Type":"volume","Target":"/h","VolumeOptions":{"DriverConfig":{"Name":"local","Options":{"o":"bind","device":"/"}}}}]}}`,
	`{"Image":"x","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o"},"HostConfig":{"NetworkMode":"container:x","PidMode":"host","SecurityOpt":["seccomp=unconfined"],"MaskedPaths":[]}}`,
	`{"Image":"x","Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o"},"HostConfig":{"CapAdd":["ALL"],"Devices":[{"PathOnHost":"/dev/sda"}]}}`,
	`{"Image":"x","Labels":{"dev.frognano.sandbox":"1"},"HostConfig":null,"NetworkingConfig":{"EndpointsConfig":{"host":{}}}}`,
}

// FuzzCheckCreate: whatever body a client sends, what the proxy forwards (it forwards its own
// encoding) is a labelled container of the owner with no privilege, no host path, no device,
// no added capability beyond setup's (and the watcher's DAC_READ_SEARCH for the watcher's own
// command), no host or other container's namespace, no unconfined profile, an allowed network;
// and checking it again accepts it unchanged.
func FuzzCheckCreate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	p, err := New(Config{Engine: "unix:///nonexistent.sock", Owner: "o"})
	if err != nil {
		f.Fatal(err)
	}
	lk := permissive{owner: "o"}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := p.checkCreate(context.Background(), body, lk)
		if err != nil {
			if _, ok := err.(*Refusal); !ok {
				t.Fatalf("a failure that is not a refusal: %v", err)
			}
			return
		}
		var req container.CreateRequest
		if err := json.Unmarshal(out, &req); err != nil || req.Config == nil || req.HostConfig == nil {
			t.Fatalf("the forwarded body does not decode: %v %s", err, out)
		}
		c, h := req.Config, req.HostConfig
		if c.Labels[sandbox.LabelSandbox] != "1" || c.Labels[sandbox.LabelOwner] != "o" {
			t.Errorf("forwarded without the owner's labels: %v", c.Labels)
		}
		if h.Privileged || len(h.Binds) > 0 || len(h.Devices) > 0 || len(h.DeviceRequests) > 0 || len(h.VolumesFrom) > 0 ||
			h.PidMode != "" || h.UTSMode != "" || h.UsernsMode != "" || h.CgroupParent != "" || h.MaskedPaths != nil || h.ReadonlyPaths != nil ||
			len(h.Sysctls) > 0 || h.Runtime != "" || len(h.PortBindings) > 0 || h.PublishAllPorts || h.ContainerIDFile != "" {
			t.Errorf("forwarded a host-reaching configuration: %s", out)
		}
		if !slices.Contains([]string{"", "private", "none"}, string(h.IpcMode)) || !slices.Contains([]string{"", "default", "none", "bridge"}, string(h.NetworkMode)) {
			t.Errorf("forwarded namespaces ipc %q network %q", h.IpcMode, h.NetworkMode)
		}
		for _, capName := range h.CapAdd {
			n := normCap(capName)
			if !slices.Contains(sandbox.SetupCapabilities, n) && !(n == watcherCapability && sandbox.IsWatcherEntrypoint(c.Entrypoint)) {
				t.Errorf("forwarded capability %q", capName)
			}
		}
		for _, o := range h.SecurityOpt {
			if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(o)), "no-new-privileges") {
				t.Errorf("forwarded security option %q", o)
			}
		}
		for _, m := range h.Mounts {
			if m.Type != mount.TypeVolume || m.BindOptions != nil || (m.VolumeOptions != nil && m.VolumeOptions.DriverConfig != nil) ||
				(m.Source != "" && !anonymousVolume.MatchString(m.Source)) {
				t.Errorf("forwarded mount %+v", m)
			}
		}
		again, err := p.checkCreate(context.Background(), out, lk)
		if err != nil || string(again) != string(out) {
			t.Errorf("the forwarded body is not accepted unchanged when checked again: %v\n%s\n%s", err, out, again)
		}
	})
}

// allowedRoutes is the API surface frognano uses, written out again independently of the
// router: a request the router forwards must match one of these.
var allowedRoutes = []struct {
	method string
	path   *regexp.Regexp
}{
	{"GET", regexp.MustCompile(`^/_ping$`)}, {"HEAD", regexp.MustCompile(`^/_ping$`)}, {"GET", regexp.MustCompile(`^/version$`)},
	{"GET", regexp.MustCompile(`^/containers/json$`)}, {"POST", regexp.MustCompile(`^/containers/create$`)},
	{"GET", regexp.MustCompile(`^/containers/b{64}/json$`)},
	{"POST", regexp.MustCompile(`^/containers/b{64}/(start|stop|kill|wait|attach|exec)$`)},
	{"DELETE", regexp.MustCompile(`^/containers/b{64}$`)}, {"PUT", regexp.MustCompile(`^/containers/b{64}/archive$`)},
	{"POST", regexp.MustCompile(`^/exec/e{64}/start$`)}, {"GET", regexp.MustCompile(`^/exec/e{64}/json$`)},
	{"POST", regexp.MustCompile(`^/commit$`)}, {"GET", regexp.MustCompile(`^/images/json$`)},
	{"GET", regexp.MustCompile(`^/images/[^?#]+/json$`)}, {"POST", regexp.MustCompile(`^/images/sha256:f{64}/tag$`)},
	{"DELETE", regexp.MustCompile(`^/images/frognano-env:.*$`)},
	{"GET", regexp.MustCompile(`^/networks/[^/]+$`)}, {"DELETE", regexp.MustCompile(`^/volumes/[0-9a-f]{64}$`)},
}

// fakeEngine answers the proxy's own lookups: containers whose reference starts with "mine"
// are sandboxes of owner o (ID b…), others belong to nobody; an exec's container is its
// reference's; images named frognano-env:… are environment images (ID f…).
func fakeEngine(t testing.TB) string {
	dir, err := os.MkdirTemp("", "fnfuzz")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "e.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/v"+minAPIVersion)
		switch {
		case p == "/containers/json":
			w.Write([]byte(`[{"Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o"}}]`))
		case strings.HasPrefix(p, "/containers/") && strings.HasSuffix(p, "/json"):
			ref := strings.TrimSuffix(strings.TrimPrefix(p, "/containers/"), "/json")
			if strings.HasPrefix(ref, "mine") || ref == strings.Repeat("b", 64) {
				w.Write([]byte(`{"Id":"` + strings.Repeat("b", 64) + `","Config":{"Labels":{"dev.frognano.sandbox":"1","dev.frognano.owner":"o"}}}`))
				return
			}
			w.Write([]byte(`{"Id":"` + strings.Repeat("d", 64) + `","Config":{"Labels":{}}}`))
		case strings.HasPrefix(p, "/exec/"):
			ref := strings.TrimSuffix(strings.TrimPrefix(p, "/exec/"), "/json")
			w.Write([]byte(`{"ID":"` + strings.Repeat("e", 64) + `","ContainerID":` + strconvQuote(ref) + `}`))
		case strings.HasPrefix(p, "/images/"):
			ref := strings.TrimSuffix(strings.TrimPrefix(p, "/images/"), "/json")
			if strings.HasPrefix(ref, "frognano-env:") {
				w.Write([]byte(`{"Id":"sha256:` + strings.Repeat("f", 64) + `","Config":{"Labels":{"dev.frognano.env":"1"}}}`))
				return
			}
			w.Write([]byte(`{"Id":"sha256:` + strings.Repeat("a", 64) + `","Config":{"Labels":{}}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return "unix://" + sock
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// FuzzRoute: whatever method, path and query a client sends, the router forwards only the
// endpoints frognano uses, acting on a labelled sandbox by its full ID, and never panics.
func FuzzRoute(f *testing.F) {
	for _, s := range [][3]string{
		{"GET", "/v1.41/_ping", ""}, {"POST", "/v1.41/containers/create", "name=x"}, {"POST", "/v1.41/containers/mine1/exec", ""},
		{"POST", "/v1.41/containers/other/exec", ""}, {"POST", "/v1.41/exec/mine2/start", ""}, {"POST", "/v1.41/exec/other/start", ""},
		{"DELETE", "/v1.41/images/frognano-env:abc", ""}, {"DELETE", "/v1.41/images/debian:bookworm-slim", "force=1"},
		{"POST", "/v1.41/images/frognano-env:abc/tag", "repo=frognano-env&tag=x"}, {"POST", "/v1.41/commit", "container=mine&repo=frognano-env"},
		{"DELETE", "/v1.41/volumes/" + strings.Repeat("0", 64), ""}, {"GET", "/v1.41/containers/json", "filters={\"label\":[\"x\"]}"},
		{"POST", "/v1.23/containers/mine/start", ""}, {"GET", "/v1.41/containers/mine/../../info", ""}, {"POST", "/v1.41/images/create", "fromImage=x"},
		{"GET", "/v1.41/networks/bridge", ""}, {"POST", "/v1.41/containers/mine/attach", "stream=1&stdin=1"}, {"PUT", "/v1.41/containers/mine/archive", "path=/workspace"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	p, err := New(Config{Engine: fakeEngine(f), Owner: "o"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, method, path, query string) {
		r, err := http.NewRequest(method, "http://docker/", strings.NewReader(`{"Cmd":["true"],"Labels":{"dev.frognano.env":"1"}}`))
		if err != nil {
			return
		}
		r.URL.Path, r.URL.RawQuery = path, query
		method = r.Method // NewRequest reads "" as GET
		fw, err := p.check(r)
		if err != nil {
			if _, ok := err.(*Refusal); !ok && !strings.Contains(err.Error(), "engine") {
				t.Fatalf("%s %s?%s: a failure that is neither a refusal nor the engine's: %v", method, path, query, err)
			}
			return
		}
		rest, err := splitVersion(fw.path)
		if err != nil {
			t.Fatalf("forwarded %q with a refused version", fw.path)
		}
		for _, a := range allowedRoutes {
			if a.method == method && a.path.MatchString(rest) {
				return
			}
		}
		t.Errorf("%s %s?%s was forwarded as %s %s", method, path, query, method, fw.path)
	})
}

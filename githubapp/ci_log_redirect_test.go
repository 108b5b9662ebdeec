package githubapp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
)

// redirectingTransport answers the job log's download (on the log host) with a redirect to
// next, as a download host that sends the client on would; every other request goes on.
type redirectingTransport struct {
	next string
	base http.RoundTripper
}

func (rt redirectingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/_services/pipelines/logs/") {
		h := http.Header{}
		h.Set("Location", rt.next)
		return &http.Response{StatusCode: http.StatusFound, Status: "302 Found", Header: h, Body: http.NoBody,
			Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	}
	return rt.base.RoundTrip(r)
}

// TestLogRedirectKeepsTheRule: the log's download address must be https (plain http only
// on loopback), and a redirect from it must follow the same rule: a download host that sends
// the host on to plain http elsewhere (a metadata address, an internal service) must not make
// frognano fetch it and hand its answer to the model. 127.0.0.2 stands for such an address: it
// is on this machine, but not one of the loopback names the rule allows.
func TestLogRedirectKeepsTheRule(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2: %v", err)
	}
	internal := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("##[error]instance-secret-from-the-metadata-service\n"))
	}))
	internal.Listener.Close()
	internal.Listener = ln
	internal.Start()
	t.Cleanup(internal.Close)

	b := setup(t, func(c *Config) {
		c.ChecksWrite = true
		c.Transport = redirectingTransport{next: internal.URL + "/latest/meta-data/", base: http.DefaultTransport}
	})
	suite, _ := b.gh.AddCheckSuite(b.repo, strings.Repeat("c", 40), "github-actions",
		githubtest.CheckRunSpec{Name: "test", Conclusion: "failure", Summary: "pytest failed", Log: actionsLog})
	checks, _, err := b.client.FailedChecks(context.Background(), suite)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 {
		t.Fatalf("checks = %+v", checks)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect to plain http on %s was followed (%d requests)", internal.URL, n)
	}
	if c := checks[0]; strings.Contains(c.Log, "metadata") || c.Log != "" || !strings.Contains(c.LogNote, "not https") {
		t.Errorf("log %q, note %q: want no log and a note that the address is not https", c.Log, c.LogNote)
	}
}

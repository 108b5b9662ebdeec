package eval

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/gittest"
)

// testHost is a name under .test (RFC 6761), which no resolver answers: a clone of it
// succeeds only if git connects to the address frognano checked and handed it.
const testHost = "git.frognano.test"

// gitServer serves a bare clone of a small repository as acme.git over smart HTTP (git
// http-backend) on 127.0.0.1, behind handler's routes.
func gitServer(t *testing.T) (root string, backend http.Handler) {
	t.Helper()
	src, _ := gittest.Repo(t, map[string]string{"a.txt": "one\n"})
	root = t.TempDir()
	gittest.Git(t, root, "clone", "-q", "--bare", src, filepath.Join(root, "acme.git"))
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	return root, &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
}

// tlsFor makes a self-signed certificate for host and writes it as a CA file git trusts.
func tlsFor(t *testing.T, host string) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, ca
}

// TestURLPinnedToTheCheckedAddress: git connects to the address frognano resolved and
// checked, not to whatever the name resolves to when git asks: here the name resolves
// nowhere but in frognano's check (127.0.0.1, allowed by the operator's flag), and the clone
// over https, with the certificate checked against the name, succeeds only through the pin.
func TestURLPinnedToTheCheckedAddress(t *testing.T) {
	t.Parallel()
	_, backend := gitServer(t)
	cfg, ca := tlsFor(t, testHost)
	srv := httptest.NewUnstartedServer(backend)
	srv.TLS = cfg
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	pol := newPolicy(nil, Options{Allow: Allow{LocalAddresses: true}})
	pol.lookup = fakeDNS(map[string][]string{testHost: {"127.0.0.1"}})
	s := &sources{policy: pol, cache: t.TempDir(), gitEnv: []string{"GIT_SSL_CAINFO=" + ca}}
	got, err := s.source(context.Background(), policyTask(func(t *Task) { t.RepoURL = "https://" + testHost + ":" + port + "/acme.git" }))
	if err != nil {
		t.Fatalf("the pinned clone failed: %v", err)
	}
	if out := gittest.Git(t, got, "cat-file", "-p", "HEAD:a.txt"); out != "one" {
		t.Errorf("cloned %q", out)
	}

	// Without the operator's flag the same check refuses the address the name resolves to.
	strict := newPolicy(nil, Options{})
	strict.lookup = pol.lookup
	if _, err := (&sources{policy: strict, cache: t.TempDir()}).source(context.Background(),
		policyTask(func(t *Task) { t.RepoURL = "https://" + testHost + ":" + port + "/acme.git" })); err == nil || !strings.Contains(err.Error(), "a loopback address") {
		t.Errorf("a name resolving to loopback: %v", err)
	}
}

// TestURLRedirectNotFollowed: an allowed server that answers with a redirect cannot send the
// host's git on to another address (a redirect is not checked): the clone fails.
func TestURLRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	_, backend := gitServer(t)
	var redirected atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/moved.git/", func(w http.ResponseWriter, r *http.Request) {
		redirected.Add(1)
		http.Redirect(w, r, strings.Replace(r.URL.String(), "/moved.git/", "/acme.git/", 1), http.StatusFound)
	})
	mux.Handle("/", backend)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	pol := newPolicy(nil, Options{Allow: Allow{PlainURLs: true, LocalAddresses: true}})
	s := &sources{policy: pol, cache: t.TempDir()}
	if _, err := s.source(context.Background(), policyTask(func(t *Task) { t.RepoURL = srv.URL + "/acme.git" })); err != nil {
		t.Fatalf("the server itself: %v", err)
	}
	_, err := s.source(context.Background(), policyTask(func(t *Task) { t.RepoURL = srv.URL + "/moved.git" }))
	if err == nil || redirected.Load() == 0 {
		t.Errorf("the redirect was followed (%d redirects answered): %v", redirected.Load(), err)
	}
}

// TestURLSSHPinned: over ssh, frognano runs ssh connecting to the checked address while it
// checks the host key recorded for the name (the URL's host, with its port when not 22).
func TestURLSSHPinned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "ssh")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+args+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	pol := newPolicy(nil, Options{})
	pol.lookup = fakeDNS(map[string][]string{testHost: {"203.0.113.7"}})
	for _, tc := range []struct{ url, alias string }{
		{"ssh://git@" + testHost + "/acme.git", "HostKeyAlias=" + testHost},
		{"ssh://git@" + testHost + ":2222/acme.git", "HostKeyAlias=[" + testHost + "]:2222"},
	} {
		s := &sources{policy: pol, cache: t.TempDir(), ssh: fake}
		if _, err := s.source(context.Background(), policyTask(func(t *Task) { t.RepoURL = tc.url })); err == nil {
			t.Fatalf("%s: the fake ssh failed, yet the clone did not", tc.url)
		}
		b, err := os.ReadFile(args)
		if err != nil {
			t.Fatalf("%s: ssh did not run: %v", tc.url, err)
		}
		got := strings.Split(strings.TrimSpace(string(b)), "\n")
		for _, w := range []string{"HostName=203.0.113.7", tc.alias} {
			found := false
			for i, a := range got {
				found = found || (a == w && i > 0 && got[i-1] == "-o")
			}
			if !found {
				t.Errorf("%s: ssh ran with %q, lacking -o %s", tc.url, got, w)
			}
		}
	}
}

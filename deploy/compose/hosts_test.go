package compose

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/internal/hoststest"
	"github.com/frognano/frognano/runner/sandbox"
)

// cluster is the several-hosts set-up: containers on one private Docker network.
type cluster struct {
	t       *testing.T
	prefix  string // of every name this test gives the engine
	network string
	gateway string // the host's address on the network
	image   string
	env     map[string]string // every service container's environment
	made    []string          // containers to remove at the end
	volumes []string
	ca      string // the test CA's certificate, the services' only trusted root
}

// docker runs the docker CLI and fails the test on an error.
func (c *cluster) docker(timeout time.Duration, args ...string) string {
	c.t.Helper()
	out, err := command(c.t, nil, timeout, "docker", args...)
	if err != nil {
		c.t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

// forward serves on the network's gateway a TCP relay to a server of this test on the loopback,
// so that the containers reach it; it returns the relay's host:port. With cert, the relay
// speaks TLS to the containers (frognano sends GitHub tokens only over https, or to the
// loopback).
func (c *cluster) forward(target string, cert *tls.Certificate) string {
	c.t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(c.gateway, "0"))
	if err != nil {
		c.t.Fatalf("listening on the network's gateway: %v", err)
	}
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
	}
	c.t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer out.Close()
				done := make(chan struct{}, 2)
				go func() { io.Copy(out, in); done <- struct{}{} }()
				go func() { io.Copy(in, out); done <- struct{}{} }()
				<-done // either side gone (a killed worker): close both
			}()
		}
	}()
	return ln.Addr().String()
}

// proxy starts `frognano docker-proxy` for owner in a container of its own that alone mounts
// the engine's socket, and returns the volume that holds the proxy's socket.
func (c *cluster) proxy(name, owner string, dockerGID uint32) string {
	c.t.Helper()
	vol := c.prefix + "-" + name + "-api"
	c.docker(time.Minute, "volume", "create", "--label", "dev.frognano.test=1", vol)
	c.volumes = append(c.volumes, vol)
	cname := c.prefix + "-" + name + "-proxy"
	c.made = append(c.made, cname)
	c.docker(time.Minute, "run", "-d", "--name", cname, "--label", "dev.frognano.test=1", "--network", "none",
		"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges:true", "--group-add", fmt.Sprint(dockerGID),
		"-v", "/var/run/docker.sock:/var/run/docker.sock", "-v", vol+":/run/frognano",
		c.image, "docker-proxy", "--listen", "unix:/run/frognano/docker.sock", "--engine", "unix:///var/run/docker.sock",
		"--owner", owner, "--networks", "bridge")
	return vol
}

// service starts a frognano container (serve or worker) for owner on the network, reaching the
// engine through its own proxy.
func (c *cluster) service(name, owner string, dockerGID uint32, publish bool, args ...string) string {
	c.t.Helper()
	vol := c.proxy(name, owner, dockerGID)
	cname := c.prefix + "-" + name
	c.made = append(c.made, cname)
	run := []string{"run", "-d", "--name", cname, "--label", "dev.frognano.test=1", "--network", c.network,
		"-v", vol + ":/run/frognano", "-e", "DOCKER_HOST=unix:///run/frognano/docker.sock", "-e", "FROGNANO_SANDBOX_OWNER=" + owner,
		"-v", c.ca + ":/etc/ssl/certs/ca-certificates.crt:ro"}
	if publish {
		run = append(run, "-p", "127.0.0.1::8080")
	}
	for k, v := range c.env {
		run = append(run, "-e", k+"="+v)
	}
	c.docker(time.Minute, append(append(run, c.image), args...)...)
	return cname
}

// TestSeveralHostsInContainers runs one `frognano serve --workers 0` and two `frognano worker`
// containers from the service image, with distinct owners, on a private Docker network with a
// PostgreSQL container; each reaches the engine through a docker-proxy container of its own,
// limited to its owner; the scripted model and the fake GitHub are reached through relays on
// the network's gateway. 20 issues on two installations (FROGNANO_PER_INSTALLATION=1) are
// queued; the worker container holding the slow first run is killed (docker kill) while its
// model turn is pending, then started again. Every run finishes exactly once (one attempt
// each, two for the runs the killed worker held; one status comment per issue; every job
// completed), no sandbox or clone is left, and no installation ever has two runs running at
// once across both workers.
func TestSeveralHostsInContainers(t *testing.T) {
	t.Parallel()
	image, pgImage := testImages(t)
	var st syscall.Stat_t
	if err := syscall.Stat("/var/run/docker.sock", &st); err != nil {
		t.Fatalf("no Docker socket: %v", err)
	}
	engine, err := sandbox.NewClient()
	if err != nil {
		t.Fatalf("no Docker engine: %v", err)
	}
	defer engine.Close()

	suffix := randHex(t, 4)
	c := &cluster{t: t, prefix: "fnhosts-" + suffix, image: image}
	c.network = c.prefix + "-net"
	c.docker(time.Minute, "network", "create", "--label", "dev.frognano.test=1", c.network)
	c.gateway = c.docker(time.Minute, "network", "inspect", "-f", "{{(index .IPAM.Config 0).Gateway}}", c.network)
	owners := map[string]string{"web": "web-" + suffix, "w1": "w1-" + suffix, "w2": "w2-" + suffix}
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range c.made {
				out, _ := command(t, nil, time.Minute, "docker", "logs", "--tail", "30", name)
				t.Logf("log of %s:\n%s", name, out)
			}
		}
		if len(c.made) > 0 {
			if out, err := command(t, nil, 2*time.Minute, "docker", append([]string{"rm", "-f", "-v"}, c.made...)...); err != nil {
				t.Errorf("removing the containers: %v %s", err, out)
			}
		}
		for _, owner := range owners {
			if _, err := sandbox.Prune(context.Background(), engine, owner); err != nil {
				t.Errorf("removing sandboxes of %s: %v", owner, err)
			}
		}
		for _, v := range c.volumes {
			command(t, nil, time.Minute, "docker", "volume", "rm", v)
		}
		if out, err := command(t, nil, time.Minute, "docker", "network", "rm", c.network); err != nil {
			t.Errorf("removing the network: %v %s", err, out)
		}
	})

	// PostgreSQL on the network; the test reads it through a port on the loopback.
	pgPassword := randHex(t, 16)
	pgName := c.prefix + "-postgres"
	c.made = append(c.made, pgName)
	c.docker(time.Minute, "run", "-d", "--name", pgName, "--label", "dev.frognano.test=1", "--network", c.network,
		"--network-alias", "postgres", "-p", "127.0.0.1::5432",
		"-e", "POSTGRES_USER=frognano", "-e", "POSTGRES_PASSWORD="+pgPassword, "-e", "POSTGRES_DB=frognano", pgImage)
	pgAddr := c.docker(time.Minute, "port", pgName, "5432")
	db, err := pgxpool.New(context.Background(), "postgres://frognano:"+pgPassword+"@"+pgAddr+"/frognano?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hoststest.Wait(t, 2*time.Minute, "PostgreSQL", func() (bool, string) {
		err := db.Ping(context.Background())
		return err == nil, fmt.Sprint(err)
	})

	sc := hoststest.New(t, "maintainer-hosts", "several hosts in containers: one slow turn, then quick final answers")
	caFile, cert := testCA(t, c.gateway)
	c.ca = caFile
	ghAddr := c.forward(strings.TrimPrefix(sc.GitHub.URL, "http://"), cert)
	modelHost := strings.TrimPrefix(strings.TrimSuffix(sc.Model.URL, "/v1"), "http://")
	modelAddr := c.forward(modelHost, nil)
	c.env = sc.Env(map[string]string{
		"DATABASE_URL":       "postgres://frognano:" + pgPassword + "@postgres:5432/frognano?sslmode=disable",
		"GITHUB_URL":         "https://" + ghAddr,
		"FROGNANO_MODEL_URL": "http://" + modelAddr + "/v1",
		"FROGNANO_ADDR":      ":8080",
	})

	// serve first: it applies the migrations; then the two workers.
	web := c.service("web", owners["web"], st.Gid, true, "serve", "--workers", "0", "--test-cmd", "none")
	webAddr := c.docker(time.Minute, "port", web, "8080")
	hoststest.Wait(t, 3*time.Minute, "serve's /readyz", func() (bool, string) {
		if out, _ := command(t, nil, time.Minute, "docker", "inspect", "-f", "{{.State.Running}}", web); strings.TrimSpace(out) != "true" {
			t.Fatalf("serve's container stopped")
		}
		resp, err := http.Get("http://" + webAddr + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	workers := map[string]string{} // owner → container
	for _, name := range []string{"w1", "w2"} {
		workers[owners[name]] = c.service(name, owners[name], st.Gid, false, "worker", "--test-cmd", "none")
	}

	sampler := hoststest.Sample(t, db)
	sc.DeliverAll(t, webAddr)

	// The first model request waits: kill the worker container whose agent sandbox is up,
	// then start it again (same owner, same work folder), which takes its run back at once.
	sc.WaitSlowTurn(t, 3*time.Minute)
	var victimOwner string
	hoststest.Wait(t, 50*time.Second, "the agent sandbox of the slow turn", func() (bool, string) {
		for owner := range workers {
			out, err := command(t, nil, time.Minute, "docker", "ps", "--filter", "label="+sandbox.LabelOwner+"="+owner,
				"--filter", "label="+sandbox.LabelPurpose+"=agent", "--format", "{{.CreatedAt}}")
			if err != nil {
				continue
			}
			// Quick runs come and go within seconds; the slow turn's sandbox has stayed up.
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				created, err := time.Parse("2006-01-02 15:04:05 -0700 MST", line)
				if err == nil && time.Since(created) > 8*time.Second {
					victimOwner = owner
					return true, ""
				}
			}
		}
		return false, "no agent sandbox up for 8 s while the slow turn is pending"
	})
	c.docker(time.Minute, "kill", workers[victimOwner])
	held := hoststest.Held(t, db, victimOwner)
	c.docker(time.Minute, "start", workers[victimOwner])

	sc.CheckAllRunsOnce(t, db, sampler, held, 4*time.Minute)

	// Nothing is left: no sandbox of any worker on the engine, no clone in a worker's container.
	var workerOwners []string
	for owner := range workers {
		workerOwners = append(workerOwners, owner)
	}
	hoststest.NothingLeft(t, workerOwners, func(owner string) (bool, string) {
		out, err := command(t, nil, time.Minute, "docker", "ps", "-a", "-q", "--filter", "label="+sandbox.LabelOwner+"="+owner)
		return err == nil && strings.TrimSpace(out) == "", fmt.Sprintf("containers %q (%v)", out, err)
	}, func(owner string) (bool, string) {
		out, err := command(t, nil, time.Minute, "docker", "exec", workers[owner], "sh", "-c", "ls -A /var/lib/frognano/work/frognano-"+owner+" 2>/dev/null || true")
		return err == nil && strings.TrimSpace(out) == "", fmt.Sprintf("%q (%v)", out, err)
	})
}

// testCA makes a CA and a certificate for ip signed by it; it returns the CA's certificate
// file (readable by the services' user) and the certificate.
func testCA(t *testing.T, ip string) (string, *tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "frognano test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: ip},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP(ip)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, &tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
}

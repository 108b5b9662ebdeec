package compose

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/runner/leaf/leaftest"
	"github.com/frognano/frognano/runner/sandbox"
)

// hostsRuns is how many issues the several-hosts test queues: half on each of two installations.
const hostsRuns = 20

// hostsMaintainer is the labeler of every issue: a writer of both repositories.
const hostsMaintainer = "maintainer-hosts"

// hostsScript: the first request waits (the worker holding it is killed meanwhile); every
// other answers at once without a tool call, so each run is one sandbox and one model turn.
func hostsScript() leaftest.Script {
	s := leaftest.Script{Description: "several hosts in containers: one slow turn, then quick final answers", AllowUnused: true}
	s.Turns = append(s.Turns, leaftest.Turn{Content: "slow", Delay: "90s"})
	for i := 0; i < hostsRuns+2; i++ {
		s.Turns = append(s.Turns, leaftest.Turn{Content: "I found no fix for this issue."})
	}
	return s
}

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
	wait(t, 2*time.Minute, "PostgreSQL", func() (bool, string) {
		err := db.Ping(context.Background())
		return err == nil, fmt.Sprint(err)
	})

	gh := githubtest.New(t)
	files := map[string]string{"README.md": "a repository with nothing to fix\n", "main.py": "print('hi')\n"}
	repos := []*githubtest.Repo{gh.AddRepo("octo-org", "alpha", files), gh.AddRepo("other-org", "beta", files)}
	for i, r := range repos {
		gh.AddInstallation(int64(41000+i), r)
		gh.SetPermission(r, hostsMaintainer, "write")
		for n := 1; n <= hostsRuns/len(repos); n++ {
			gh.AddIssue(r, n, fmt.Sprintf("issue %d of %s", n, r.Name), "Please look.")
			gh.AddLabel(r, n, "frognano")
		}
	}
	model := leaftest.NewServer(t, hostsScript())
	caFile, cert := testCA(t, c.gateway)
	c.ca = caFile
	ghAddr := c.forward(strings.TrimPrefix(gh.URL, "http://"), cert)
	modelHost := strings.TrimPrefix(strings.TrimSuffix(model.URL, "/v1"), "http://")
	modelAddr := c.forward(modelHost, nil)
	secret := "webhook-secret-" + randHex(t, 8)
	c.env = map[string]string{
		"DATABASE_URL":                   "postgres://frognano:" + pgPassword + "@postgres:5432/frognano?sslmode=disable",
		"GITHUB_WEBHOOK_SECRET":          secret,
		"GITHUB_APP_ID":                  fmt.Sprint(gh.AppID),
		"GITHUB_APP_PRIVATE_KEY":         string(gh.PrivateKey),
		"GITHUB_URL":                     "https://" + ghAddr,
		"FROGNANO_MODEL_URL":             "http://" + modelAddr + "/v1",
		"FROGNANO_SANDBOX_MEMORY":        "512m",
		"FROGNANO_SANDBOX_CPUS":          "1",
		"FROGNANO_PER_INSTALLATION":      "1",
		"FROGNANO_WORKERS":               "2",
		"FROGNANO_BUSY_SNOOZE":           "1s",
		"FROGNANO_SOFT_STOP_TIMEOUT":     "2s",
		"FROGNANO_SHUTDOWN_TIMEOUT":      "5s",
		"FROGNANO_SANDBOX_REAP_INTERVAL": "2s",
		"FROGNANO_ADDR":                  ":8080",
	}

	// serve first: it applies the migrations; then the two workers.
	web := c.service("web", owners["web"], st.Gid, true, "serve", "--workers", "0", "--test-cmd", "none")
	webAddr := c.docker(time.Minute, "port", web, "8080")
	wait(t, 3*time.Minute, "serve's /readyz", func() (bool, string) {
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

	// Sample the running runs per installation while everything happens.
	stopSampling := make(chan struct{})
	var maxRunning int
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Millisecond):
			}
			var n int
			if err := db.QueryRow(context.Background(), `SELECT coalesce(max(c), 0) FROM
				(SELECT count(*) AS c FROM runs WHERE state = 'running' GROUP BY installation_id) x`).Scan(&n); err == nil && n > maxRunning {
				maxRunning = n
			}
		}
	}()

	for i := 0; i < hostsRuns; i++ {
		r := repos[i%len(repos)]
		deliverIssue(t, webAddr, secret, r, int64(41000+i%len(repos)), i/len(repos)+1)
	}

	// The first model request waits: kill the worker container whose agent sandbox is up,
	// then start it again (same owner, same work folder), which takes its run back at once.
	wait(t, 3*time.Minute, "the slow first model turn", func() (bool, string) {
		n := len(model.Requests())
		return n >= 1, fmt.Sprintf("%d requests", n)
	})
	var victimOwner string
	wait(t, 50*time.Second, "the agent sandbox of the slow turn", func() (bool, string) {
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
	held := map[int64]bool{}
	rows, err := db.Query(context.Background(), `SELECT r.id FROM runs r JOIN river_job j ON j.id = r.job_id
		WHERE j.state = 'running' AND r.state = 'running' AND r.attempts >= 1
		AND left(j.attempted_by[cardinality(j.attempted_by)], length($1) + 1) = $1 || '/'`, victimOwner)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		_ = rows.Scan(&id)
		held[id] = true
	}
	rows.Close()
	if len(held) == 0 {
		t.Fatalf("the killed worker held no run")
	}
	c.docker(time.Minute, "start", workers[victimOwner])

	// Every run ends once.
	var states map[string]int
	wait(t, 4*time.Minute, "all runs finished", func() (bool, string) {
		states = map[string]int{}
		rows, err := db.Query(context.Background(), `SELECT state, count(*) FROM runs GROUP BY 1`)
		if err != nil {
			return false, err.Error()
		}
		defer rows.Close()
		total, open := 0, 0
		for rows.Next() {
			var s string
			var n int
			_ = rows.Scan(&s, &n)
			states[s] = n
			total += n
			if s == "queued" || s == "running" {
				open += n
			}
		}
		return total == hostsRuns && open == 0, fmt.Sprint(states)
	})
	close(stopSampling)
	sampling.Wait()
	if maxRunning > 1 {
		t.Errorf("an installation had %d runs running at once across the workers, limit 1", maxRunning)
	}
	if states["cancelled"]+states["skipped"] > 0 || states["succeeded"]+states["failed"] != hostsRuns {
		t.Errorf("final states %v", states)
	}
	wait(t, 30*time.Second, "every River job completed", func() (bool, string) {
		var n int
		err := db.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'frognano_run' AND state = 'completed'`).Scan(&n)
		return err == nil && n == hostsRuns, fmt.Sprintf("%d completed (%v)", n, err)
	})
	rows, err = db.Query(context.Background(), `SELECT id, owner, repo, issue, attempts FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var owner, repo string
		var issue, attempts int
		if err := rows.Scan(&id, &owner, &repo, &issue, &attempts); err != nil {
			t.Fatal(err)
		}
		want := 1
		if held[id] {
			want = 2 // the killed attempt counts
		}
		if attempts != want {
			t.Errorf("%s/%s#%d took %d attempts, want %d", owner, repo, issue, attempts, want)
		}
	}
	rows.Close()
	for _, r := range repos {
		for n := 1; n <= hostsRuns/len(repos); n++ {
			if cs := gh.Comments(r, n); len(cs) != 1 {
				t.Errorf("%s#%d has %d comments, want one status comment", r.FullName(), n, len(cs))
			}
		}
	}

	// Nothing is left: no sandbox of any worker on the engine, no clone in a worker's container.
	for owner, name := range workers {
		wait(t, 30*time.Second, "no sandbox of "+owner, func() (bool, string) {
			out, err := command(t, nil, time.Minute, "docker", "ps", "-a", "-q", "--filter", "label="+sandbox.LabelOwner+"="+owner)
			return err == nil && strings.TrimSpace(out) == "", fmt.Sprintf("containers %q (%v)", out, err)
		})
		wait(t, 30*time.Second, "no clone of "+owner, func() (bool, string) {
			out, err := command(t, nil, time.Minute, "docker", "exec", name, "sh", "-c", "ls -A /var/lib/frognano/work/frognano-"+owner+" 2>/dev/null || true")
			return err == nil && strings.TrimSpace(out) == "", fmt.Sprintf("%q (%v)", out, err)
		})
	}
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

// wait polls cond until it holds, failing the test after timeout with cond's last word.
func wait(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %s", what, why)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// deliverIssue POSTs a signed issues.labeled delivery (octokit's example) for issue n of r.
func deliverIssue(t *testing.T, addr, secret string, r *githubtest.Repo, installation int64, n int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "server", "testdata", "github-webhooks", "issues", "labeled.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	p["installation"] = map[string]any{"id": installation}
	repo := p["repository"].(map[string]any)
	repo["id"], repo["name"], repo["full_name"] = r.ID, r.Name, r.FullName()
	repo["owner"].(map[string]any)["login"] = r.Owner
	p["issue"].(map[string]any)["number"] = n
	p["label"].(map[string]any)["name"] = "frognano"
	p["sender"].(map[string]any)["login"] = hostsMaintainer
	body, _ := json.Marshal(p)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "issues")
	req.Header.Set("X-GitHub-Delivery", randHex(t, 8)+"-delivery")
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	req.Header.Set("X-GitHub-Hook-Installation-Target-ID", fmt.Sprint(installation))
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"queued"`) {
		t.Fatalf("delivery for %s#%d: %d %s", r.FullName(), n, resp.StatusCode, b)
	}
}

// Package compose tests the service image (the repository's Dockerfile) and docker-compose.yml
// for real: built here without a registry (build-images.sh), brought up, fed a signed webhook,
// brought down. It never pulls an image and never reaches a host outside this machine.
package compose

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/frognano/frognano/githubapp/githubtest"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func randHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// command runs name args in the repository root with env added to this process's environment.
func command(t *testing.T, env []string, timeout time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestComposeConfig validates docker-compose.yml, the model profile included.
func TestComposeConfig(t *testing.T) {
	t.Parallel()
	envFile := filepath.Join(t.TempDir(), "env")
	os.WriteFile(envFile, nil, 0o600)
	env := []string{"POSTGRES_PASSWORD=x", "FROGNANO_ENV_FILE=" + envFile}
	if out, err := command(t, env, time.Minute, "docker-compose", "-f", "docker-compose.yml", "config", "-q"); err != nil {
		t.Fatalf("docker-compose config: %v\n%s", err, out)
	}
	out, err := command(t, env, time.Minute, "docker-compose", "-f", "docker-compose.yml", "--profile", "model", "config")
	if err != nil {
		t.Fatalf("docker-compose --profile model config: %v\n%s", err, out)
	}
	for _, want := range []string{"--enable-auto-tool-choice", "--tool-call-parser=hermes", "--reasoning-parser=qwen3",
		"--enable-prefix-caching", "--served-model-name=microsoft/FrogNano-4B-2609", "driver: nvidia", "- gpu"} {
		if !strings.Contains(out, want) {
			t.Errorf("the model profile lacks %q", want)
		}
	}
	// Without a password the file refuses to run PostgreSQL.
	if out, err := command(t, []string{"POSTGRES_PASSWORD=", "FROGNANO_ENV_FILE=" + envFile}, time.Minute,
		"docker-compose", "-f", "docker-compose.yml", "config", "-q"); err == nil || !strings.Contains(out, "POSTGRES_PASSWORD") {
		t.Errorf("config without POSTGRES_PASSWORD: %v %s", err, out)
	}
}

// TestComposeStack builds the images here, runs `frognano version` as non-root, brings the
// stack up, waits for /readyz, delivers a signed webhook and finds the job in PostgreSQL.
func TestComposeStack(t *testing.T) {
	t.Parallel()
	image, pgImage := testImages(t)
	out, err := command(t, nil, time.Minute, "docker", "run", "--rm", "--network", "none", image, "version")
	if err != nil || !strings.HasPrefix(out, "frognano ") {
		t.Fatalf("frognano version in the image: %v %q", err, out)
	}
	if out, _ := command(t, nil, time.Minute, "docker", "image", "inspect", "-f", "{{.Config.User}}", image); strings.TrimSpace(out) != "10001:10001" {
		t.Errorf("the image's user is %q, want 10001:10001", strings.TrimSpace(out))
	}

	dir := t.TempDir()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "app.pem")
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
	if err := os.Chown(keyFile, 10001, 10001); err != nil {
		t.Fatal(err)
	}
	secret := "compose-webhook-" + randHex(t, 12)
	envFile := filepath.Join(dir, "env")
	os.WriteFile(envFile, []byte("GITHUB_APP_ID=4242\nGITHUB_WEBHOOK_SECRET="+secret+"\nFROGNANO_WORKERS=0\nFROGNANO_ADMIN_TOKEN="+randHex(t, 16)+"\n"), 0o600)
	var st syscall.Stat_t
	if err := syscall.Stat("/var/run/docker.sock", &st); err != nil {
		t.Fatalf("no Docker socket: %v", err)
	}
	project := "frognano-test-" + randHex(t, 4)
	pgPassword := randHex(t, 16)
	env := []string{
		"FROGNANO_IMAGE=" + image, "FROGNANO_POSTGRES_IMAGE=" + pgImage, "POSTGRES_PASSWORD=" + pgPassword,
		"FROGNANO_ENV_FILE=" + envFile, "GITHUB_APP_PRIVATE_KEY_FILE=" + keyFile,
		"FROGNANO_HTTP_PUBLISH=127.0.0.1:", "FROGNANO_METRICS_PUBLISH=127.0.0.1:",
		fmt.Sprintf("DOCKER_GID=%d", st.Gid), "FROGNANO_SANDBOX_OWNER=" + project,
	}
	compose := func(timeout time.Duration, args ...string) (string, error) {
		return command(t, env, timeout, "docker-compose", append([]string{"-p", project, "-f", "docker-compose.yml"}, args...)...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := compose(time.Minute, "logs", "--no-color", "--tail", "40")
			t.Logf("compose logs:\n%s", logs)
		}
		if out, err := compose(3*time.Minute, "down", "-v", "--remove-orphans", "--timeout", "10"); err != nil {
			t.Errorf("docker-compose down: %v\n%s", err, out)
		}
	})
	if out, err := compose(5*time.Minute, "up", "-d", "--no-build"); err != nil {
		t.Fatalf("docker-compose up: %v\n%s", err, out)
	}
	addr := func(port string) string {
		out, err := compose(time.Minute, "port", "frognano", port)
		if err != nil {
			t.Fatalf("docker-compose port frognano %s: %v %s", port, err, out)
		}
		return strings.TrimSpace(out)
	}
	web, admin := addr("8080"), addr("9090")

	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get("http://" + web + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not answer 200 within 3 minutes (last: %v)", err)
		}
		time.Sleep(time.Second)
	}
	if out, _ := compose(time.Minute, "exec", "-T", "frognano", "id", "-u"); strings.TrimSpace(out) != "10001" {
		t.Errorf("frognano serve runs as uid %q, want 10001", strings.TrimSpace(out))
	}
	// The service reaches the engine through docker-proxy's socket, as its own user; only the
	// proxy's container mounts the engine's socket.
	if out, err := compose(time.Minute, "exec", "-T", "frognano", "frognano", "sandbox", "prune", "--owner", project); err != nil {
		t.Errorf("frognano sandbox prune in the container: %v\n%s", err, out)
	}
	if out, err := compose(time.Minute, "exec", "-T", "frognano", "sh", "-c", `test ! -e /var/run/docker.sock && echo "$DOCKER_HOST"`); err != nil ||
		strings.TrimSpace(out) != "unix:///run/frognano/docker.sock" {
		t.Errorf("the frognano container holds the engine's socket, or DOCKER_HOST is not the proxy's: %v %q", err, out)
	}
	// doctor sees the filter (its other checks fail here: no model, no GitHub).
	if out, _ := compose(2*time.Minute, "exec", "-T", "frognano", "frognano", "doctor", "--quick"); !strings.Contains(out, "through frognano docker-proxy") {
		t.Errorf("frognano doctor does not see the proxy:\n%s", out)
	}
	if out, _ := compose(time.Minute, "exec", "-T", "docker-proxy", "id", "-u"); strings.TrimSpace(out) != "10001" {
		t.Errorf("docker-proxy runs as uid %q, want 10001", strings.TrimSpace(out))
	}
	for svc, want := range map[string]bool{"frognano": false, "docker-proxy": true, "postgres": false} {
		id, err := compose(time.Minute, "ps", "-q", svc)
		if err != nil {
			t.Fatalf("docker-compose ps %s: %v %s", svc, err, id)
		}
		mounts, _ := command(t, nil, time.Minute, "docker", "inspect", "-f", "{{range .Mounts}}{{.Source}} {{end}}", strings.TrimSpace(id))
		if got := strings.Contains(mounts, "docker.sock"); got != want {
			t.Errorf("%s mounts %q: the engine's socket mounted is %v, want %v", svc, mounts, got, want)
		}
	}

	status := deliver(t, web, secret)
	if status != "queued" {
		t.Errorf("the webhook's answer is %q, want queued", status)
	}
	out, err = compose(time.Minute, "exec", "-T", "-e", "PGPASSWORD="+pgPassword, "postgres",
		"psql", "-h", "127.0.0.1", "-U", "frognano", "-d", "frognano", "-tAc",
		"SELECT (SELECT count(*) FROM river_job WHERE kind = 'frognano_run' AND state = 'available') || ' ' || (SELECT count(*) FROM runs WHERE state = 'queued')")
	if err != nil || strings.TrimSpace(out) != "1 1" {
		t.Errorf("jobs and runs in PostgreSQL: %q (%v), want one available job and one queued run", out, err)
	}
	resp, err := http.Get("http://" + admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `frognano_webhook_deliveries_total{event="issues",outcome="queued"} 1`) {
		t.Errorf("/metrics does not count the delivery")
	}
}

// deliver POSTs a signed issues.labeled delivery (octokit's example, with an installation) and
// returns the handler's status.
func deliver(t *testing.T, addr, secret string) string {
	t.Helper()
	p := githubtest.Webhook(t, "issues/labeled.payload.json")
	p["installation"] = map[string]any{"id": 31337}
	p["label"].(map[string]any)["name"] = "frognano"
	status, b := githubtest.Deliver(t, "http://"+addr+"/webhook", secret, "issues", p)
	var ans struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(b, &ans); err != nil || status >= 300 {
		t.Fatalf("webhook answered %d: %s", status, b)
	}
	return ans.Status
}

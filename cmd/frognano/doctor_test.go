package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/githubapp/githubtest"
	"github.com/frognano/frognano/migrations/dbtest"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// doctorScriptToolCall answers the probe as a working vLLM with a reasoning parser and tool
// calling does; doctorScriptProse as one started without tool calling.
const (
	doctorScriptToolCall = `{"description":"doctor probe: a tool call","turns":[{"reasoning_content":"The user wants true run.",` +
		`"tool_calls":[{"name":"Bash","arguments":{"command":"true"}}],"expect":{"tool_count":1,"last_role":"user"}}]}`
	doctorScriptProse = `{"description":"doctor probe: prose, no tool call","turns":[{"content":"I would run true."}]}`
)

// doctorWorld is a healthy set-up: a migrated schema, the real engine and image, a scripted
// model, a fake GitHub with the App installed once.
type doctorWorld struct {
	gh    *githubtest.Server
	model *leaftest.Server
	env   map[string]string
}

func doctorSetup(t *testing.T, script string) *doctorWorld {
	t.Helper()
	svcDocker(t)
	executor, _ := svcBinaries(t, false)
	db := dbtest.New(t)
	var schema string
	if err := db.QueryRow(context.Background(), `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	gh := githubtest.New(t)
	gh.AddInstallation(svcInstallationID, gh.AddRepo(svcOwner, svcRepo, map[string]string{"README.md": "hi\n"}))
	s, err := leaftest.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	w := &doctorWorld{gh: gh, model: leaftest.NewServer(t, s)}
	w.env = map[string]string{
		"DATABASE_URL":           svcDatabaseURL(t, schema),
		"GITHUB_WEBHOOK_SECRET":  "doctor-secret-0123456789",
		"GITHUB_APP_ID":          fmt.Sprint(gh.AppID),
		"GITHUB_APP_PRIVATE_KEY": string(gh.PrivateKey),
		"GITHUB_URL":             gh.URL,
		"FROGNANO_MODEL_URL":     w.model.URL,
		"FROGNANO_EXECUTOR":      executor,
		"FROGNANO_SANDBOX_OWNER": "doctor-test-" + svcRandom(t),
		"FROGNANO_WORK_DIR":      t.TempDir(),
	}
	return w
}

func (w *doctorWorld) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"doctor"}, args...), func(k string) string { return w.env[k] }, &out, &errOut)
	return out.String(), err
}

// doctorLine returns the line of check name, or fails.
func doctorLine(t *testing.T, out, name string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[1] == name {
			return l
		}
	}
	t.Fatalf("no line for check %q in:\n%s", name, out)
	return ""
}

// doctorExpect checks that exactly the checks in failing fail, each line containing its text,
// skipped ones are skipped, and all others pass.
func doctorExpect(t *testing.T, out string, err error, failing map[string]string, skipped ...string) {
	t.Helper()
	for _, name := range []string{"config", "database", "docker", "sandbox-image", "sandbox", "executor", "model", "model-tools", "github", "github-permissions", "github-installations"} {
		line := doctorLine(t, out, name)
		status := strings.Fields(line)[0]
		want, isFailing := failing[name]
		switch {
		case isFailing:
			if status != "FAIL" || !strings.Contains(line, want) || !strings.Contains(line, "fix: ") && name != "github-installations" {
				t.Errorf("check %s: got %q, want FAIL with %q and a fix", name, line, want)
			}
		case containsString(skipped, name):
			if status != "skip" {
				t.Errorf("check %s: got %q, want skip", name, line)
			}
		default:
			if status != "ok" {
				t.Errorf("check %s: got %q, want ok", name, line)
			}
		}
	}
	if len(failing) > 0 && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d of", len(failing)))) {
		t.Errorf("doctor returned %v, want %d failed checks", err, len(failing))
	}
	if len(failing) == 0 && err != nil {
		t.Errorf("doctor returned %v on a healthy set-up", err)
	}
	if exitCode(err) == 0 && len(failing) > 0 {
		t.Errorf("exit status 0 with failing checks")
	}
	if t.Failed() {
		t.Logf("doctor said:\n%s", out)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestDoctorHealthy(t *testing.T) {
	t.Parallel()
	w := doctorSetup(t, doctorScriptToolCall)
	out, err := w.run(t)
	doctorExpect(t, out, err, nil)
	if l := doctorLine(t, out, "model-tools"); !strings.Contains(l, "reasoning_content came back") {
		t.Errorf("the probe's line does not report reasoning_content: %q", l)
	}
	if l := doctorLine(t, out, "sandbox"); !strings.Contains(l, "only lo") || !strings.Contains(l, "read-only root") || !strings.Contains(l, "uid 1000") {
		t.Errorf("sandbox line = %q", l)
	}
	if n := w.gh.CountRequests("*", "/app"); n != 1 {
		t.Errorf("%d GET /app, want 1", n)
	}
	if strings.Contains(out, w.env["GITHUB_WEBHOOK_SECRET"]) || strings.Contains(out, "PRIVATE KEY") {
		t.Errorf("doctor printed a secret:\n%s", out)
	}
	req := w.model.Requests()
	if len(req) != 1 || !strings.Contains(string(req[0].Raw), `"name":"Bash"`) || strings.Contains(string(req[0].Raw), `"name":"Read"`) {
		t.Errorf("the probe did not send exactly the Bash tool: %d requests", len(req))
	}
}

// doctorEmptyDatabase is a DATABASE_URL naming a fresh, empty schema.
func doctorEmptyDatabase(t *testing.T) string {
	t.Helper()
	empty := dbtest.NewEmpty(t)
	var schema string
	if err := empty.QueryRow(context.Background(), `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	return svcDatabaseURL(t, schema)
}

// TestDoctorFreshDatabase: with FROGNANO_AUTO_MIGRATE on (the default), a database that was
// never migrated is ready, because serve migrates it at start; doctor says what it will apply.
func TestDoctorFreshDatabase(t *testing.T) {
	t.Parallel()
	w := doctorSetup(t, doctorScriptToolCall)
	w.env["DATABASE_URL"] = doctorEmptyDatabase(t)
	out, err := w.run(t)
	doctorExpect(t, out, err, nil)
	if l := doctorLine(t, out, "database"); !strings.Contains(l, "not migrated yet: `frognano serve` applies River's migrations 1-") ||
		!strings.Contains(l, "frognano's 0001_init, ") || !strings.HasSuffix(l, " at start (FROGNANO_AUTO_MIGRATE)") {
		t.Errorf("database line = %q", l)
	}
}

func TestDoctorBroken(t *testing.T) {
	t.Parallel()
	t.Run("PostgreSQLStopped", func(t *testing.T) {
		t.Parallel()
		w := doctorSetup(t, doctorScriptToolCall)
		w.env["DATABASE_URL"] = "postgres://postgres@" + closedPort(t) + "/postgres?sslmode=disable&connect_timeout=3"
		out, err := w.run(t)
		doctorExpect(t, out, err, map[string]string{"database": "does not answer"})
	})
	t.Run("NotMigratedWithoutAutoMigrate", func(t *testing.T) {
		t.Parallel()
		w := doctorSetup(t, doctorScriptToolCall)
		w.env["DATABASE_URL"] = doctorEmptyDatabase(t)
		w.env["FROGNANO_AUTO_MIGRATE"] = "false"
		out, err := w.run(t)
		doctorExpect(t, out, err, map[string]string{"database": "fix: run `frognano migrate`"})
	})
	t.Run("ImageMissing", func(t *testing.T) {
		t.Parallel()
		w := doctorSetup(t, doctorScriptToolCall)
		w.env["FROGNANO_SANDBOX_IMAGE"] = "frognano-sandbox:doctor-missing"
		out, err := w.run(t)
		doctorExpect(t, out, err, map[string]string{"sandbox-image": "frognano-sandbox:doctor-missing is missing"}, "sandbox")
	})
	t.Run("ModelDown", func(t *testing.T) {
		t.Parallel()
		w := doctorSetup(t, `{"allow_unused":true,"turns":[{"content":"unused"}]}`)
		w.env["FROGNANO_MODEL_URL"] = "http://" + closedPort(t) + "/v1"
		out, err := w.run(t)
		doctorExpect(t, out, err, map[string]string{"model": "connection refused"}, "model-tools")
	})
	t.Run("ModelWithoutToolCalls", func(t *testing.T) {
		t.Parallel()
		w := doctorSetup(t, doctorScriptProse)
		out, err := w.run(t)
		doctorExpect(t, out, err, map[string]string{"model-tools": "no tool call"})
		if l := doctorLine(t, out, "model-tools"); !strings.Contains(l, "--enable-auto-tool-choice") {
			t.Errorf("the fix does not name vLLM's flag: %q", l)
		}
	})
	t.Run("ModelNotServed", func(t *testing.T) {
		t.Parallel()
		w := doctorSetup(t, `{"allow_unused":true,"turns":[{"content":"unused"}]}`)
		w.env["FROGNANO_MODEL"] = "someone/else"
		out, err := w.run(t)
		doctorExpect(t, out, err, map[string]string{"model": "does not serve someone/else"}, "model-tools")
	})
	t.Run("WrongKey", func(t *testing.T) {
		t.Parallel()
		w := doctorSetup(t, doctorScriptToolCall)
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		w.env["GITHUB_APP_PRIVATE_KEY"] = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
		out, err := w.run(t)
		doctorExpect(t, out, err, map[string]string{"github": "refused the App's JWT (401)"}, "github-permissions", "github-installations")
	})
	t.Run("MissingPermission", func(t *testing.T) {
		t.Parallel()
		w := doctorSetup(t, doctorScriptToolCall)
		w.gh.SetAppPermissions(map[string]string{"contents": "write", "issues": "read", "metadata": "read"})
		out, err := w.run(t)
		doctorExpect(t, out, err, map[string]string{"github-permissions": "issues: read, needs write, pull_requests: none, needs write"})
	})
	t.Run("ConfigIncomplete", func(t *testing.T) {
		t.Parallel()
		w := doctorSetup(t, doctorScriptToolCall)
		delete(w.env, "GITHUB_WEBHOOK_SECRET")
		out, err := w.run(t)
		doctorExpect(t, out, err, map[string]string{"config": "GITHUB_WEBHOOK_SECRET is not set"})
		// A worker host needs no webhook secret.
		w2 := doctorSetup(t, doctorScriptToolCall)
		delete(w2.env, "GITHUB_WEBHOOK_SECRET")
		out, err = w2.run(t, "--worker")
		doctorExpect(t, out, err, nil)
	})
}

// TestDoctorNamedModels: each model FROGNANO_MODELS_FILE names gets the default's checks, on
// lines of its own: one that serves its model passes, one that does not fails naming the file.
func TestDoctorNamedModels(t *testing.T) {
	t.Parallel()
	w := doctorSetup(t, doctorScriptToolCall)
	probe, err := leaftest.Parse([]byte(doctorScriptToolCall))
	if err != nil {
		t.Fatal(err)
	}
	large := leaftest.NewServer(t, probe)
	other := leaftest.NewServer(t, leaftest.Script{})
	file := filepath.Join(t.TempDir(), "models.yml")
	text := "models:\n  - name: large\n    url: " + large.URL + "\n    model: microsoft/FrogNano-4B-2609\n" +
		"  - name: other\n    url: " + other.URL + "\n    model: not/served\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	w.env["FROGNANO_MODELS_FILE"] = file
	out, err := w.run(t)
	if l := doctorLine(t, out, "model/large"); !strings.HasPrefix(l, "ok") || !strings.Contains(l, large.URL+" serves microsoft/FrogNano-4B-2609") {
		t.Errorf("model/large: %q", l)
	}
	if l := doctorLine(t, out, "model-tools/large"); !strings.HasPrefix(l, "ok") {
		t.Errorf("model-tools/large: %q", l)
	}
	if l := doctorLine(t, out, "model/other"); !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "does not serve not/served") || !strings.Contains(l, "FROGNANO_MODELS_FILE") {
		t.Errorf("model/other: %q", l)
	}
	if l := doctorLine(t, out, "model-tools/other"); !strings.HasPrefix(l, "skip") {
		t.Errorf("model-tools/other: %q", l)
	}
	if err == nil || exitCode(err) == 0 {
		t.Errorf("doctor returned %v with a model that fails", err)
	}
	if len(large.Requests()) != 1 || len(other.Requests()) != 0 {
		t.Errorf("probes: large %d, other %d; want 1 and 0", len(large.Requests()), len(other.Requests()))
	}
}

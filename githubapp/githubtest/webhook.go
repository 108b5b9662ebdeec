package githubtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Webhook is the real delivery server/testdata/github-webhooks/NAME (octokit's examples, as
// GitHub sends them), decoded for a test to point at its repository and edit. The file is
// found from this source file's place in the module (tests are not built with -trimpath).
func Webhook(t testing.TB, name string) map[string]any {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "server", "testdata", "github-webhooks", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("webhook fixture %s: %v", name, err)
	}
	return m
}

// Deliver POSTs payload (a JSON-encoded map) to url as GitHub delivers an event to this App's
// webhook: signed with secret in X-Hub-Signature-256, with a fresh X-GitHub-Delivery and the
// App as the hook's target. It returns the answer's status and body; it fails the test only
// when the request cannot be made, so the caller decides what answer it expects.
func Deliver(t testing.TB, url, secret, event string, payload any) (int, []byte) {
	t.Helper()
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		t.Fatal(err)
	}
	return DeliverAs(t, url, secret, event, hex.EncodeToString(id)+"-delivery", payload)
}

// DeliverAs is Deliver with the delivery id (X-GitHub-Delivery) given: GitHub's redelivery of
// the same delivery carries the same id.
func DeliverAs(t testing.TB, url, secret, event, id string, payload any) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/044aadd")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-GitHub-Hook-ID", "292430182")
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	req.Header.Set("X-GitHub-Hook-Installation-Target-ID", fmt.Sprint(DefaultAppID))
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("delivering %s: %v", event, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer to %s: %v", event, err)
	}
	return resp.StatusCode, b
}

package githubapp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/golden"
)

// bodyRecorder keeps the bodies of the requests to the Checks API that go through it.
type bodyRecorder struct {
	next   http.RoundTripper
	mu     sync.Mutex
	bodies []string
}

func (b *bodyRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.Path, "/check-runs") && r.Body != nil {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		b.mu.Lock()
		b.bodies = append(b.bodies, r.Method+" "+r.URL.Path[strings.Index(r.URL.Path, "/check-runs"):]+"\n"+string(raw))
		b.mu.Unlock()
	}
	return b.next.RoundTrip(r)
}

// TestCheckRunPayloadGolden pins the exact request bodies frognano sends to the Checks API for
// the check run `frognano / tests` (as the fake GitHub received them): created completed, with
// the conclusion, times, external id and output, the output redacted.
func TestCheckRunPayloadGolden(t *testing.T) {
	t.Parallel()
	rec := &bodyRecorder{next: http.DefaultTransport}
	b := setup(t, func(c *Config) { c.ChecksWrite = true; c.Transport = rec })
	cr := CheckRun{Name: "frognano / tests", Status: "completed", Conclusion: "failure", Title: "1 test(s) broken by the patch, 0 fixed.",
		Summary: "| | before | after |\n|---|---|---|\n| passed | 2 | 1 |", Text: "## End of the test output\n\n```text\ntoken ghp_" + strings.Repeat("b", 36) + "\n```\n",
		ExternalID: "run-7", StartedAt: time.Date(2026, 11, 30, 10, 0, 0, 500, time.UTC), CompletedAt: time.Date(2026, 11, 30, 10, 5, 0, 0, time.UTC)}
	if _, err := b.client.CreateCheckRun(context.Background(), strings.Repeat("c", 40), cr); err != nil {
		t.Fatal(err)
	}
	var pretty []string
	for _, body := range rec.bodies {
		head, raw, _ := strings.Cut(body, "\n")
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatalf("%s: %v", head, err)
		}
		out, _ := json.MarshalIndent(v, "", "  ")
		pretty = append(pretty, head+"\n"+string(out))
	}
	got := strings.Join(pretty, "\n\n") + "\n"
	if strings.Contains(got, "ghp_bbbb") {
		t.Error("a token reached the Checks API")
	}
	golden.Check(t, "check-run-payloads.txt", got)
}

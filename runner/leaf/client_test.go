package leaf

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		retryAfter string
		now        time.Time
		want       time.Duration
	}{
		{name: "Seconds", retryAfter: "2", want: 2 * time.Second},
		{name: "HTTPDate", retryAfter: date.Format(http.TimeFormat), now: date.Add(-7 * time.Second), want: 7 * time.Second},
		{name: "CappedSeconds", retryAfter: "86400", want: maxRetryAfter},
		{name: "CappedDate", retryAfter: date.Format(http.TimeFormat), now: date.Add(-time.Hour), want: maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := leaftest.LoadModel(t, "retry-429.json")
			s.Turns[0].RetryAfter = tt.retryAfter
			b := setup(t, s)
			if !tt.now.IsZero() {
				b.cfg.now = func() time.Time { return tt.now }
			}
			r := Run(context.Background(), b.cfg, "task", b.tools, nil)
			if r.ExitReason != ExitAgent {
				t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
			}
			if w := b.Waits(); len(w) != 1 || w[0] != tt.want {
				t.Errorf("waited %v, want [%v]", w, tt.want)
			}
			if n := len(b.srv.Requests()); n != 2 {
				t.Errorf("requests = %d, want 2", n)
			}
		})
	}
}

func TestRetryWaitsReally(t *testing.T) {
	t.Parallel()
	// One real wait, asserted on the server's clock: the retry arrived no earlier than
	// Retry-After said (a lower bound only, so a slow machine cannot fail it).
	s := leaftest.LoadModel(t, "retry-429.json")
	s.Turns[0].RetryAfter = "1"
	b := setup(t, s)
	b.cfg.sleep = nil
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	reqs := b.srv.Requests()
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < time.Second {
		t.Errorf("retry came %v after the 429, want >= 1s", gap)
	}
}

func TestRetry5xxBacksOff(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "retry-5xx.json"))
	b.cfg.RetryBaseDelay = 100 * time.Millisecond
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	w := b.Waits()
	if len(w) != 2 {
		t.Fatalf("waited %v, want two backoffs", w)
	}
	// Backoff doubles from the base, less at most 25% jitter.
	for i, base := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		if w[i] > base || w[i] < base*3/4 {
			t.Errorf("wait %d = %v, want in [%v, %v]", i, w[i], base*3/4, base)
		}
	}
}

func TestRetryTransportError(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "transport-drop.json"))
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	if n := len(b.srv.Requests()); n != 2 || len(b.Waits()) != 1 {
		t.Errorf("requests = %d, waits = %v; want 2 requests, 1 wait", n, b.Waits())
	}
}

func TestBackoffIsCapped(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig().withDefaults()
	for attempt := range 70 { // far past the point where base<<attempt would overflow
		d, fromServer := retryDelay(cfg, attempt, "")
		if fromServer || d <= 0 || d > maxRetryDelay {
			t.Fatalf("attempt %d: delay %v (server %v), want in (0, %v]", attempt, d, fromServer, maxRetryDelay)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, false},
		{"-3", 0, false},
		{"1.5", 1500 * time.Millisecond, true},
		{" 10 ", 10 * time.Second, true},
		{"NaN", 0, false},
		{"Inf", maxRetryAfter, true},
		{"1e300", maxRetryAfter, true},
		{"soon", 0, false},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second, true},
		{now.Add(-30 * time.Second).Format(http.TimeFormat), 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsContextOverflow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msg  string
		want bool
	}{
		{"CONTEXT_LENGTH_EXCEEDED", true},
		{"Please reduce the length of the messages", true},
		{"This model's maximum context length is 131072 tokens", true},
		{"Input context length exceeds the model limit", true},
		{"model unavailable", false},
		{"No available workers", false},
		{"invalid context length parameter", false},
		{"rate limit exceeded", false},
	}
	for _, tt := range tests {
		if got := isContextOverflow(errors.New(tt.msg)); got != tt.want {
			t.Errorf("isContextOverflow(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

func TestResponseTooLarge(t *testing.T) {
	t.Parallel()
	// A hostile server streams more than MaxResponseBytes; the run ends with a clear error.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		chunk := []byte(strings.Repeat(" ", 1<<20))
		for range maxResponseBytes>>20 + 1 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.BaseURL = srv.URL + "/v1"
	cfg.Logger = slog.New(slog.DiscardHandler)
	r := Run(context.Background(), cfg, "task", &fakeTools{}, nil)
	if r.ExitReason != ExitLLMError || !strings.Contains(r.Error, "larger than 32 MiB") {
		t.Fatalf("exit %q error %q, want llm_query_error about the size", r.ExitReason, r.Error)
	}
}

func TestAPIKeySentButNeverLogged(t *testing.T) {
	t.Parallel()
	const canary = "sk-canary-6b1d0f"
	b := setup(t, leaftest.LoadModel(t, "retry-429.json"))
	b.cfg.APIKey = canary
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	for _, req := range b.srv.Requests() {
		if got := req.Header.Get("Authorization"); got != "Bearer "+canary {
			t.Errorf("Authorization = %q", got)
		}
	}
	if !strings.Contains(b.log.String(), "retrying model request") {
		t.Errorf("log lacks the retry event: %s", b.log)
	}
	if strings.Contains(b.log.String(), canary) {
		t.Errorf("the API key appears in the log")
	}
}

func TestDecodeResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		wantErr string
		check   func(t *testing.T, c completion)
	}{
		{name: "WhitelistsFields", body: `{"choices":[{"message":{"role":"assistant","content":"Done.","reasoning_content":"think","matched_stop":"x","refusal":null},"finish_reason":"stop"}],"usage":{"total_tokens":7}}`,
			check: func(t *testing.T, c completion) {
				got, _ := c.Assistant.MarshalJSON()
				if string(got) != `{"role":"assistant","content":"Done.","reasoning_content":"think"}` {
					t.Errorf("assistant = %s", got)
				}
				if c.Usage.total() != 7 {
					t.Errorf("usage total = %d", c.Usage.total())
				}
			}},
		{name: "NullContentWithToolCalls", body: `{"choices":[{"message":{"content":null,"reasoning_content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a\"}"}}]},"finish_reason":"tool_calls"}]}`,
			check: func(t *testing.T, c completion) {
				got, _ := c.Assistant.MarshalJSON()
				if string(got) != `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a\"}"}}]}` {
					t.Errorf("assistant = %s", got)
				}
			}},
		{name: "ObjectArguments", body: `{"choices":[{"message":{"tool_calls":[{"id":"c","function":{"name":"Bash","arguments":{"command": "ls"}}}]}}]}`,
			check: func(t *testing.T, c completion) {
				if a := c.Assistant.ToolCalls[0].Function.Arguments; a != `{"command":"ls"}` {
					t.Errorf("arguments = %q", a)
				}
			}},
		{name: "UsageWithoutTotal", body: `{"choices":[{"message":{"content":""}}],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":null}}`,
			check: func(t *testing.T, c completion) {
				if c.Usage.total() != 11 {
					t.Errorf("usage total = %d, want 11", c.Usage.total())
				}
			}},
		{name: "UsageNotIntegers", body: `{"choices":[{"message":{"content":""}}],"usage":{"prompt_tokens":5.5,"completion_tokens":"6","total_tokens":true}}`,
			check: func(t *testing.T, c completion) {
				if c.Usage.total() != 0 {
					t.Errorf("usage total = %d, want 0", c.Usage.total())
				}
			}},
		{name: "NoChoices", body: `{"choices":[]}`, wantErr: "no choices"},
		{name: "ErrorObject", body: `{"error":{"message":"maximum context length is 10"}}`, wantErr: "maximum context length"},
		{name: "NotJSON", body: `<html>`, wantErr: "decoding model response"},
		{name: "ContentNotString", body: `{"choices":[{"message":{"content":[{"type":"text"}]}}]}`, wantErr: "decoding model response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := decodeResponse([]byte(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

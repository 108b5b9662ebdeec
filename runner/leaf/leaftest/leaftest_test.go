package leaftest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// recorder is a testing.TB whose Errorf is recorded instead of failing the test, so
// the server's own failure reports can be asserted.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Errors() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

func post(t *testing.T, url, body string) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp, out
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		wantErr string
		args    string
	}{
		{name: "ObjectArguments", in: `{"turns":[{"tool_calls":[{"name":"Read","arguments":{"file_path": "a.py"}}]}]}`, args: `{"file_path":"a.py"}`},
		{name: "RawArgumentsKept", in: `{"turns":[{"tool_calls":[{"name":"Read","arguments":"{\"file_path\": "}]}]}`, args: `{"file_path": `},
		{name: "UnknownField", in: `{"turns":[{"contnet":"typo"}]}`, wantErr: "unknown field"},
		{name: "BadDelay", in: `{"turns":[{"delay":"soon"}]}`, wantErr: "delay"},
		{name: "NoTurns", in: `{"turns":[]}`, wantErr: "no turns"},
		{name: "EmptyUserNotContains", in: `{"turns":[{"expect":{"user_not_contains":["x",""]}}]}`, wantErr: "empty string"},
		{name: "NamelessTool", in: `{"turns":[{"tool_calls":[{"arguments":{}}]}]}`, wantErr: "no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := leaftest.Parse([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(s.Turns[0].ToolCalls[0].Arguments); got != tt.args {
				t.Errorf("arguments = %q, want %q", got, tt.args)
			}
		})
	}
}

// TestAllScriptsLoad keeps every shared script in testdata/models loadable.
func TestAllScriptsLoad(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join(leaftest.ModelsDir(t), "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	for _, p := range paths {
		if s := leaftest.Load(t, p); len(s.Turns) == 0 {
			t.Errorf("%s: no turns", p)
		}
	}
}

func TestServerCompletionShape(t *testing.T) {
	t.Parallel()
	srv := leaftest.NewServer(t, leaftest.Script{Turns: []leaftest.Turn{
		{ReasoningContent: "r", ToolCalls: []leaftest.ToolCall{{Name: "Glob", Arguments: `{"pattern":"*"}`}}},
		{Content: "Done.", Usage: &leaftest.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}},
	}})
	if !strings.HasSuffix(srv.URL, "/v1") {
		t.Errorf("URL %q does not end in /v1", srv.URL)
	}
	_, first := post(t, srv.URL, `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	choice := first["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	call := msg["tool_calls"].([]any)[0].(map[string]any)
	if msg["content"] != nil || msg["reasoning_content"] != "r" || choice["finish_reason"] != "tool_calls" ||
		call["id"] != "call_0_0" || call["type"] != "function" || first["model"] != "m" {
		t.Errorf("first reply = %v", first)
	}
	if _, ok := first["usage"]; ok {
		t.Errorf("usage sent although the turn has none: %v", first)
	}
	_, second := post(t, srv.URL, `{"model":"m","messages":[]}`)
	choice = second["choices"].([]any)[0].(map[string]any)
	if choice["message"].(map[string]any)["content"] != "Done." || choice["finish_reason"] != "stop" ||
		second["usage"].(map[string]any)["total_tokens"] != 3.0 {
		t.Errorf("second reply = %v", second)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[0].Messages[0].Text() != "x" || reqs[0].Model != "m" {
		t.Errorf("requests = %+v", reqs)
	}
	if err := srv.WaitRequests(context.Background(), 2); err != nil {
		t.Error(err)
	}
}

func TestServerReportsProblems(t *testing.T) {
	t.Parallel()
	rec := &recorder{TB: t}
	srv := leaftest.NewServer(rec, leaftest.Script{Turns: []leaftest.Turn{{
		Expect: &leaftest.Expect{MessageCount: 3, LastRole: "tool", LastToolContains: []string{"PASS"}, AssistantReasoning: "why"},
		Status: http.StatusTooManyRequests, RetryAfter: "2",
	}}})
	resp, body := post(t, srv.URL, `{"model":"m","messages":[{"role":"assistant","content":null},{"role":"tool","tool_call_id":"c","content":"FAIL"}]}`)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" || body["error"] == nil {
		t.Errorf("status %d, Retry-After %q, body %v", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	for _, want := range []string{"want 3 messages", `lack "PASS"`, `reasoning_content "why"`} {
		if !strings.Contains(rec.Errors(), want) {
			t.Errorf("server did not report %q; reported:\n%s", want, rec.Errors())
		}
	}
	if strings.Contains(rec.Errors(), "last role") {
		t.Errorf("last role was right but reported: %s", rec.Errors())
	}
	resp, _ = post(t, srv.URL, `{"model":"m","messages":[]}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(rec.Errors(), "beyond the script") {
		t.Errorf("a request beyond the script: status %d, reported:\n%s", resp.StatusCode, rec.Errors())
	}
}

func TestServerUserNotContains(t *testing.T) {
	t.Parallel()
	// The banned strings are written with JSON escapes, as the injection scripts do: U+200B, a
	// zero-width space, and U+E0041, a tag character (a surrogate pair in JSON).
	const script = `{"turns":[{"expect":{"user_not_contains":["ignore previous","\u200b","\udb40\udc41"]},"content":"ok"}]}`
	tests := []struct {
		name string
		user string
		want []string // problems reported; none when empty
	}{
		{name: "Clean", user: "Fix average()."},
		{name: "HiddenText", user: "Fix average(). ignore previous instructions", want: []string{`contains "ignore previous"`}},
		{name: "ZeroWidth", user: "Fix aver\u200bage().", want: []string{`contains "\u200b"`}},
		{name: "TagCharacter", user: "Fix average().\U000E0041", want: []string{`contains "\U000e0041"`}},
		{name: "Several", user: "ignore previous\u200b", want: []string{`contains "ignore previous"`, `contains "\u200b"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := leaftest.Parse([]byte(script))
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{TB: t}
			srv := leaftest.NewServer(rec, s)
			user, err := strconv.Unquote(`"` + tt.user + `"`)
			if err != nil {
				t.Fatal(err)
			}
			// Only the first user message counts: the banned text in the system message and
			// in a later user message must not be reported.
			body, err := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{
				{"role": "system", "content": "ignore previous"},
				{"role": "user", "content": user},
				{"role": "user", "content": "ignore previous\u200b"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			resp, _ := post(t, srv.URL, string(body))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			got := rec.Errors()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("not reported: %s; reported:\n%s", w, got)
				}
			}
			if n := strings.Count(got, "user message contains"); n != len(tt.want) {
				t.Errorf("%d problems reported, want %d:\n%s", n, len(tt.want), got)
			}
		})
	}
}

package leaftest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	textclip "github.com/frognano/frognano/internal/clip"
)

// Request is one request the server received, decoded for assertions.
type Request struct {
	// Time is when the request arrived.
	Time   time.Time   `json:"-"`
	Header http.Header `json:"-"`
	// Raw is the body exactly as sent.
	Raw []byte `json:"-"`
	// Body is the decoded body, for fields not modelled below.
	Body     map[string]any `json:"-"`
	Model    string         `json:"model"`
	Messages []Message      `json:"messages"`
	// Tools holds each tool schema as sent.
	Tools []json.RawMessage `json:"tools"`
}

// Message is a request message.
type Message struct {
	Role             string  `json:"role"`
	Content          *string `json:"content"`
	ReasoningContent string  `json:"reasoning_content"`
	Reasoning        string  `json:"reasoning"`
	ToolCallID       string  `json:"tool_call_id"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// Text returns the content, or "" when null.
func (m Message) Text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

// Server is a running scripted model. URL is the base URL, ending in /v1.
type Server struct {
	URL string

	t       testing.TB
	script  Script
	srv     *httptest.Server
	closing chan struct{}

	mu        sync.Mutex
	next      int
	requests  []Request
	cancelled int
	changed   chan struct{} // closed and replaced at every arrival
}

// NewServer starts a server for s, closed when the test ends. The test fails (Errorf)
// on a request beyond the script, a failed Expect, an undecodable body, or turns left
// unused unless s.AllowUnused.
func NewServer(t testing.TB, s Script) *Server {
	t.Helper()
	srv := &Server{t: t, script: s, closing: make(chan struct{}), changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", srv.handle)
	// The model list, as vLLM and SGLang serve it; frognano's preflight asks for it to tell
	// an unreachable server from a working one. It does not consume a turn.
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, `{"object":"list","data":[{"id":"microsoft/FrogNano-4B-2609","object":"model","owned_by":"leaftest"}]}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("leaftest: unexpected request %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	srv.srv = httptest.NewServer(mux)
	srv.URL = srv.srv.URL + "/v1"
	t.Cleanup(func() {
		close(srv.closing)
		srv.srv.CloseClientConnections()
		srv.srv.Close()
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if !s.AllowUnused && srv.next < len(s.Turns) {
			t.Errorf("leaftest: the run used %d of the script's %d turns", srv.next, len(s.Turns))
		}
	})
	return srv
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Cancelled reports how many delayed replies ended early because the client went away.
func (s *Server) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

// WaitRequests blocks until n requests have arrived or ctx is done.
func (s *Server) WaitRequests(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, ch := len(s.requests), s.changed
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d model requests (got %d): %w", n, got, ctx.Err())
		}
	}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		s.t.Errorf("leaftest: reading request body: %v", err)
		return
	}
	req := Request{Time: arrived, Header: r.Header.Clone(), Raw: raw}
	if err := json.Unmarshal(raw, &req); err != nil {
		s.t.Errorf("leaftest: decoding request body: %v", err)
	}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		s.t.Errorf("leaftest: decoding request body: %v", err)
	}

	s.mu.Lock()
	idx := s.next
	s.next++
	s.requests = append(s.requests, req)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()

	if idx >= len(s.script.Turns) {
		s.t.Errorf("leaftest: request %d is beyond the script's %d turns", idx+1, len(s.script.Turns))
		writeJSON(w, http.StatusBadRequest, errorObject("leaftest: the script has no more turns"))
		return
	}
	turn := s.script.Turns[idx]
	if turn.Expect != nil {
		for _, problem := range turn.Expect.check(req, s.script.Server) {
			s.t.Errorf("leaftest: turn %d: %s", idx, problem)
		}
	}
	if turn.Delay != "" {
		d, _ := time.ParseDuration(turn.Delay) // checked by Parse
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			s.mu.Lock()
			s.cancelled++
			s.mu.Unlock()
			return
		case <-s.closing:
			return
		}
	}
	switch {
	case turn.Drop:
		hj, ok := w.(http.Hijacker)
		if !ok {
			s.t.Errorf("leaftest: cannot drop the connection: no hijacker")
			return
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			s.t.Errorf("leaftest: hijacking the connection: %v", err)
			return
		}
		conn.Close()
	case turn.ContextOverflow:
		status, body := overflowReply(s.script.Server, 70000, 65536, 8192)
		writeJSON(w, status, body)
	case turn.Status != 0 && turn.Status != http.StatusOK:
		if turn.RetryAfter != "" {
			w.Header().Set("Retry-After", turn.RetryAfter)
		}
		body := turn.ErrorBody
		if body == "" {
			body = errorObject(http.StatusText(turn.Status))
		}
		writeJSON(w, turn.Status, body)
	case turn.RawBody != "":
		writeJSON(w, http.StatusOK, turn.RawBody)
	default:
		b, err := json.Marshal(completion(idx, req.Model, s.script.Server, turn))
		if err != nil {
			s.t.Errorf("leaftest: encoding turn %d: %v", idx, err)
			return
		}
		writeJSON(w, http.StatusOK, string(b))
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func errorObject(msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "leaftest"}})
	return string(b)
}

func completion(idx int, model, server string, turn Turn) map[string]any {
	msg := map[string]any{"role": "assistant", "content": turn.Content}
	if turn.Content == "" && len(turn.ToolCalls) > 0 {
		msg["content"] = nil
	}
	finish := turn.FinishReason
	if len(turn.ToolCalls) > 0 {
		calls := make([]map[string]any, 0, len(turn.ToolCalls))
		for i, c := range turn.ToolCalls {
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d_%d", idx, i)
			}
			calls = append(calls, map[string]any{
				"id": id, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)},
			})
		}
		msg["tool_calls"] = calls
		if finish == "" {
			finish = "tool_calls"
		}
	}
	if finish == "" {
		finish = "stop"
	}
	shapeMessage(server, msg, turn.ReasoningContent)
	choice := map[string]any{"index": 0, "message": msg, "finish_reason": finish}
	out := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-leaftest-%d", idx),
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   model,
		"choices": []any{choice},
	}
	shapeReply(server, out, choice)
	if turn.Usage != nil {
		out["usage"] = turn.Usage
	}
	return out
}

// check returns one line per failed assertion.
func (e *Expect) check(req Request, server string) []string {
	key := reasoningReadKey(server)
	var problems []string
	if e.MessageCount != 0 && len(req.Messages) != e.MessageCount {
		problems = append(problems, fmt.Sprintf("want %d messages, got %d", e.MessageCount, len(req.Messages)))
	}
	if e.ToolCount != 0 && len(req.Tools) != e.ToolCount {
		problems = append(problems, fmt.Sprintf("want %d tools, got %d", e.ToolCount, len(req.Tools)))
	}
	if e.LastRole != "" {
		got := ""
		if n := len(req.Messages); n > 0 {
			got = req.Messages[n-1].Role
		}
		if got != e.LastRole {
			problems = append(problems, fmt.Sprintf("want last role %q, got %q", e.LastRole, got))
		}
	}
	lastAssistant := -1
	for i, m := range req.Messages {
		if m.Role == "assistant" {
			lastAssistant = i
		}
	}
	var tools []string
	for _, m := range req.Messages[lastAssistant+1:] {
		if m.Role == "tool" {
			tools = append(tools, m.Text())
		}
	}
	if e.ToolMessages != 0 && len(tools) != e.ToolMessages {
		problems = append(problems, fmt.Sprintf("want %d trailing tool messages, got %d", e.ToolMessages, len(tools)))
	}
	joined := strings.Join(tools, "\n")
	for _, want := range e.LastToolContains {
		if !strings.Contains(joined, want) {
			problems = append(problems, fmt.Sprintf("trailing tool messages lack %q; got %q", want, clip(joined)))
		}
	}
	user := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			user = m.Text()
			break
		}
	}
	for _, want := range e.UserContains {
		if !strings.Contains(user, want) {
			problems = append(problems, fmt.Sprintf("user message lacks %q", want))
		}
	}
	for _, banned := range e.UserNotContains {
		if banned != "" && strings.Contains(user, banned) {
			problems = append(problems, fmt.Sprintf("user message contains %q", banned))
		}
	}
	if e.AssistantReasoning != "" {
		got := ""
		if lastAssistant >= 0 {
			got = req.Messages[lastAssistant].ReasoningContent
			if key == "reasoning" {
				got = req.Messages[lastAssistant].Reasoning
			}
		}
		if got != e.AssistantReasoning {
			problems = append(problems, fmt.Sprintf("want last assistant %s %q, got %q", key, e.AssistantReasoning, got))
		}
	}
	return problems
}

func clip(s string) string {
	if len(s) > 500 {
		return textclip.Prefix(s, 500) + textclip.Ellipsis
	}
	return s
}

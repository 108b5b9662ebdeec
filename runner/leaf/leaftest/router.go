package leaftest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Router is one model URL in front of several scripted servers, for a run of several
// attempts that all talk to one model server. A request that starts a conversation (no
// assistant message yet) goes to the next server that has not started one, in the order
// given; a later request goes to the server that started its conversation, known by the id
// of the first tool call that server answered with. So the scripts' first replies must carry
// distinct tool-call ids (or end the conversation).
//
// With Batching set it also simulates a batching model server (vLLM, SGLang): see Batching.
type Router struct {
	URL string

	t       testing.TB
	servers []*Server
	batch   *Batching

	mu       sync.Mutex
	next     int
	byCall   map[string]*Server
	inFlight int
	peak     int
}

// Batching models a server that decodes every sequence in flight together: one decode step
// takes Step when one sequence runs and Step*(1+Slowdown*(n-1)) with n in flight (the batch's
// extra memory traffic and attention work), and a reply of Tokens completion tokens takes
// Tokens steps, each at the cost of the batch size at that moment (sampled at the start and
// re-read every step). With Slowdown 0.05, four concurrent sequences each run 15% slower
// than one alone, so four attempts finish in about 1.15x the time of one: what vLLM and
// SGLang show on a GPU with room to spare, and the reason extra attempts are cheap.
type Batching struct {
	Step     time.Duration
	Slowdown float64
	Tokens   int
}

// NewRouter starts a Router on httptest in front of servers; batch may be nil (no delay).
func NewRouter(t testing.TB, batch *Batching, servers ...*Server) *Router {
	rt := &Router{t: t, servers: servers, batch: batch, byCall: map[string]*Server{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", rt.handle)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, `{"object":"list","data":[{"id":"microsoft/FrogNano-4B-2609","object":"model","owned_by":"leaftest"}]}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("leaftest: router: unexpected request %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	rt.URL = srv.URL + "/v1"
	return rt
}

// Peak is the most requests the router has had in flight at once.
func (rt *Router) Peak() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.peak
}

func (rt *Router) handle(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req Request
	if err := json.Unmarshal(raw, &req); err != nil {
		rt.t.Errorf("leaftest: router: decoding request: %v", err)
	}
	var target *Server
	first := ""
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			if len(m.ToolCalls) > 0 {
				first = m.ToolCalls[0].ID
			}
			break
		}
	}
	rt.mu.Lock()
	switch {
	case first == "" && rt.next < len(rt.servers):
		target = rt.servers[rt.next]
		rt.next++
	case first != "":
		target = rt.byCall[first]
	}
	rt.inFlight++
	rt.peak = max(rt.peak, rt.inFlight)
	rt.mu.Unlock()
	defer func() {
		rt.mu.Lock()
		rt.inFlight--
		rt.mu.Unlock()
	}()
	if target == nil {
		rt.t.Errorf("leaftest: router: no server for a request whose first tool call is %q", first)
		writeJSON(w, http.StatusBadRequest, errorObject("leaftest: router: no server for this conversation"))
		return
	}
	if rt.batch != nil && !rt.decode(r) {
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, target.URL+"/chat/completions", bytes.NewReader(raw))
	if err != nil {
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(out)
	if err != nil {
		return // the client went away, or the server dropped the connection: drop this one too
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if first == "" {
		var c struct {
			Choices []struct {
				Message struct {
					ToolCalls []struct {
						ID string `json:"id"`
					} `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		if json.Unmarshal(body, &c) == nil && len(c.Choices) > 0 && len(c.Choices[0].Message.ToolCalls) > 0 {
			rt.mu.Lock()
			if id := c.Choices[0].Message.ToolCalls[0].ID; rt.byCall[id] == nil {
				rt.byCall[id] = target
			} else if rt.byCall[id] != target {
				rt.t.Errorf("leaftest: router: two scripts open with tool call id %q; give them distinct ids", id)
			}
			rt.mu.Unlock()
		}
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
}

// decode waits as Batching says for one reply; false when the client went away.
//
// Each step ends at a deadline: the previous step's deadline plus the step's length, not
// "now" plus it. A GPU keeps decoding whatever the host's CPUs do, but a timer that fires late
// on a busy host would otherwise make every later step late too: over a 400-token reply, a
// millisecond of lateness a step adds 0.4 s, and the simulated model would look slower the
// more the host is loaded, the very thing the attempts benchmark measures.
func (rt *Router) decode(r *http.Request) bool {
	next := time.Now()
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for range max(rt.batch.Tokens, 1) {
		rt.mu.Lock()
		n := rt.inFlight
		rt.mu.Unlock()
		next = next.Add(time.Duration(float64(rt.batch.Step) * (1 + rt.batch.Slowdown*float64(max(n-1, 0)))))
		wait := time.Until(next)
		if wait <= 0 {
			continue // late already: this step is done
		}
		t.Reset(wait)
		select {
		case <-t.C:
		case <-r.Context().Done():
			return false
		}
	}
	return true
}

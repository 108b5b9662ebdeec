package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// svcModelGate is a proxy in front of a scripted model that holds one chat request until
// something the test waits for has happened, and may answer a chat request itself, so that a
// test orders events by what it sees, never by time.
type svcModelGate struct {
	URL   string       // the proxy's /v1 URL, for FROGNANO_MODEL_URL
	Chats atomic.Int64 // chat requests seen so far
}

// svcGateModel starts a gate in front of the scripted model whose /v1 URL is modelURL. Chat
// request number hold (counted from 1) is forwarded only once cond holds; after two minutes the
// test errors with what and cond's last word, and the request goes on. answer, when not nil,
// sees every chat request first (with its number) and answers it itself when it returns true.
func svcGateModel(t *testing.T, modelURL string, hold int64, what string, cond func() (bool, string),
	answer func(n int64, w http.ResponseWriter, r *http.Request) bool) *svcModelGate {
	t.Helper()
	target, err := url.Parse(strings.TrimSuffix(modelURL, "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	g := &svcModelGate{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions") {
			n := g.Chats.Add(1)
			if answer != nil && answer(n, w, r) {
				return
			}
			if n == hold {
				deadline := time.Now().Add(2 * time.Minute)
				for {
					ok, seen := cond()
					if ok {
						break
					}
					if time.Now().After(deadline) {
						t.Errorf("%s never happened; last seen:\n%s", what, seen)
						break
					}
					time.Sleep(50 * time.Millisecond) // polling another process's state, bounded by the deadline
				}
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL + "/v1"
	return g
}

package sandbox

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/docker/docker/api/types"
)

// TestAnswerChecksIDAndNonce: a line is taken only when it answers the oldest pending call
// with that call's id and nonce; anything else is refused as forged, closes the stream and
// is the error of every later call.
func TestAnswerChecksIDAndNonce(t *testing.T) {
	t.Parallel()
	one, two := pendingCall{"1", "nonce-1"}, pendingCall{"2", "nonce-2"}
	tests := []struct {
		name    string
		pending []pendingCall
		line    string
		obs     string // the observation taken, when no error
		left    int    // pending calls after the line
		wantErr string
	}{
		{"Due", []pendingCall{one}, `{"id":"1","nonce":"nonce-1","observation":"ok"}`, "ok", 0, ""},
		{"AbandonedCallFirst", []pendingCall{one, two}, `{"id":"1","nonce":"nonce-1","observation":"old"}`, "old", 1, ""},
		{"Killed", []pendingCall{one}, `{"id":"1","nonce":"nonce-1","observation":"t","killed":7}`, "t", 0, ""},
		{"AnswerAheadOfItsTurn", []pendingCall{one, two}, `{"id":"2","nonce":"nonce-2","observation":"x"}`, "", 0, `a line with id "2" where call 1's answer was due`},
		{"UnknownID", []pendingCall{one}, `{"id":"9","nonce":"nonce-1","observation":"x"}`, "", 0, `a line with id "9" where call 1's answer was due`},
		{"NoNonce", []pendingCall{one}, `{"id":"1","observation":"x"}`, "", 0, "a line for call 1 without its nonce"},
		{"EmptyNonce", []pendingCall{one}, `{"id":"1","nonce":"","observation":"x"}`, "", 0, "a line for call 1 without its nonce"},
		{"WrongNonce", []pendingCall{one}, `{"id":"1","nonce":"nonce-2","observation":"x"}`, "", 0, "a line for call 1 with a wrong nonce"},
		{"NoncePrefix", []pendingCall{one}, `{"id":"1","nonce":"nonce-","observation":"x"}`, "", 0, "a line for call 1 with a wrong nonce"},
		{"ProtocolError", []pendingCall{one}, `{"id":"","observation":"ProtocolError: bad"}`, "", 0, "a line that answers no call"},
		{"UnknownField", []pendingCall{one}, `{"id":"1","nonce":"nonce-1","observation":"x","extra":1}`, "", 0, "a line that is not a response"},
		{"TrailingData", []pendingCall{one}, `{"id":"1","nonce":"nonce-1","observation":"x"}{"id":"2"}`, "", 0, "a line that is not a response"},
		{"NotJSON", []pendingCall{one}, `FORGED`, "", 0, "a line that is not a response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c1, c2 := net.Pipe()
			defer c2.Close()
			e := &executorConn{att: types.HijackedResponse{Conn: c1}, stop: make(chan struct{}), pending: tt.pending}
			resp, err := e.answer("Bash", []byte(tt.line+"\n"))
			if tt.wantErr == "" {
				if err != nil || resp.Observation != tt.obs || len(e.pending) != tt.left {
					t.Fatalf("got %+v, %v, %d pending; want %q, %d pending", resp, err, len(e.pending), tt.obs, tt.left)
				}
				return
			}
			if !errors.Is(err, ErrUntrustedOutput) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want ErrUntrustedOutput saying %q", err, tt.wantErr)
			}
			if e.failed != err {
				t.Errorf("the refusal is not kept for later calls: %v", e.failed)
			}
			select {
			case <-e.stop:
			default:
				t.Error("the stream was not closed")
			}
		})
	}
}

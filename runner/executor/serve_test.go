package executor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// serveBundle runs Serve over io.Pipe and talks to it one line at a time.
type serveBundle struct {
	dir  string
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startServe(t *testing.T, ctx context.Context) *serveBundle {
	t.Helper()
	dir := setup(t, map[string]string{"a.txt": "alpha\n"})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	b := &serveBundle{dir: dir, in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1)}
	go func() {
		err := Serve(ctx, inR, outW, dir, Options{})
		outW.CloseWithError(io.EOF)
		b.done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	var ready Ready
	b.readLine(t, &ready)
	if !ready.Ready || ready.Workdir != dir || ready.PID != os.Getpid() {
		t.Fatalf("ready line %+v, want ready in %s", ready, dir)
	}
	return b
}

func (b *serveBundle) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(b.in, line+"\n"); err != nil {
		t.Fatalf("sending request: %v", err)
	}
}

func (b *serveBundle) readLine(t *testing.T, v any) {
	t.Helper()
	line, err := b.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	if err := json.Unmarshal(line, v); err != nil {
		t.Fatalf("decoding %q: %v", line, err)
	}
}

// call sends req and returns its answer, past the call's own heartbeats: a call that a busy
// machine makes last longer than HeartbeatInterval gets some (TestServeHeartbeats checks
// them); any other line is returned.
func (b *serveBundle) call(t *testing.T, req Request) Response {
	t.Helper()
	line, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	b.send(t, string(line))
	for {
		var resp Response
		b.readLine(t, &resp)
		if (resp != Response{ID: req.ID, Nonce: req.Nonce, Alive: true}) {
			return resp
		}
	}
}

func TestServeRoundTrip(t *testing.T) {
	t.Parallel()
	b := startServe(t, context.Background())
	big := strings.Repeat("0123456789abcdef\n", 3<<20/17) // a 3 MiB Write: far over 64 KiB
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"Read", Request{ID: "1", Tool: "Read", Arguments: `{"file_path":"a.txt"}`}, "a.txt\n1. alpha"},
		{"LargeWrite", Request{ID: "2", Tool: "Write", Arguments: jsonArgs(t, map[string]any{"file_path": "big.txt", "content": big})}, "Wrote big.txt (" + strconv.Itoa(len(big)) + " bytes)."},
		{"Bash", Request{ID: "3", Tool: "Bash", Arguments: `{"command":"wc -c < big.txt"}`}, "Exit code: 0\nSTDOUT:\n" + strconv.Itoa(len(big)) + "\n\nSTDERR:\n"},
		{"Unknown", Request{ID: "4", Tool: "Nope", Arguments: `{}`}, "Unknown tool: Nope"},
		{"MalformedArguments", Request{ID: "5", Tool: "Glob", Arguments: `{"pattern":`}, "ValueError: pattern is required"},
	}
	// Sequential on purpose: one connection, one request at a time.
	for _, tt := range tests {
		resp := b.call(t, tt.req)
		if resp.ID != tt.req.ID || resp.Observation != tt.want {
			t.Errorf("%s: got %+v, want id %q observation %q", tt.name, resp, tt.req.ID, tt.want)
		}
	}
	if got := readFile(t, filepath.Join(b.dir, "big.txt")); got != big {
		t.Errorf("big.txt holds %d bytes, want %d", len(got), len(big))
	}
	b.in.Close()
	if err := <-b.done; err != nil {
		t.Errorf("Serve returned %v at EOF, want nil", err)
	}
}

func TestServeProtocolErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line, wantPrefix string
	}{
		{"NotJSON", `hello`, "ProtocolError: invalid character 'h'"},
		{"Array", `[1]`, "ProtocolError: json: cannot unmarshal array"},
		{"WrongFieldType", `{"id": 5, "tool": "Read"}`, "ProtocolError: json: cannot unmarshal number"},
		{"Blank", ``, "ProtocolError: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := startServe(t, context.Background())
			b.send(t, tt.line)
			var resp Response
			b.readLine(t, &resp)
			if resp.ID != "" || !strings.HasPrefix(resp.Observation, tt.wantPrefix) {
				t.Errorf("got %+v, want empty id and prefix %q", resp, tt.wantPrefix)
			}
			// The loop goes on after a bad line.
			if got := b.call(t, Request{ID: "next", Tool: "Read", Arguments: `{"file_path":"a.txt"}`}); got.Observation != "a.txt\n1. alpha" {
				t.Errorf("request after the bad line got %+v", got)
			}
		})
	}
}

func TestServeOversizedLine(t *testing.T) {
	t.Parallel()
	b := startServe(t, context.Background())
	go func() {
		// One line just over the cap, written in pieces like a real pipe would deliver it.
		chunk := strings.Repeat("x", 1<<20)
		for range MaxRequestBytes>>20 + 1 {
			if _, err := io.WriteString(b.in, chunk); err != nil {
				return
			}
		}
		_, _ = io.WriteString(b.in, "\n")
	}()
	var resp Response
	b.readLine(t, &resp)
	if want := "ProtocolError: request line exceeds 33554432 bytes"; resp.ID != "" || resp.Observation != want {
		t.Errorf("got %+v, want %q", resp, want)
	}
	if got := b.call(t, Request{ID: "after", Tool: "Read", Arguments: `{"file_path":"a.txt"}`}); got.Observation != "a.txt\n1. alpha" {
		t.Errorf("request after the oversized line got %+v", got)
	}
}

func TestServeLastLineWithoutNewline(t *testing.T) {
	t.Parallel()
	dir := setup(t, map[string]string{"a.txt": "alpha\n"})
	in := strings.NewReader(`{"id":"1","tool":"Read","arguments":"{\"file_path\":\"a.txt\"}"}` + "\r\n" + `{"id":"2","tool":"Nope","arguments":""}`)
	var out strings.Builder
	if err := Serve(context.Background(), in, &out, dir, Options{}); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want ready + 2: %q", len(lines), out.String())
	}
	want := []Response{{ID: "1", Observation: "a.txt\n1. alpha"}, {ID: "2", Observation: "Unknown tool: Nope"}}
	for i, w := range want {
		var got Response
		if err := json.Unmarshal([]byte(lines[i+1]), &got); err != nil {
			t.Fatal(err)
		}
		if got != w {
			t.Errorf("response %d = %+v, want %+v", i, got, w)
		}
	}
}

func TestServeContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	b := startServe(t, ctx)
	// Serve is blocked reading; cancelling must end it without input.
	cancel()
	if err := <-b.done; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve returned %v, want context.Canceled", err)
	}
}

// ExampleServe shows the wire format: a ready line, then one response per request, echoing
// the request's id and nonce.
func ExampleServe() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	in := strings.NewReader(`{"id":"c1","nonce":"7J2Q","tool":"Write","arguments":"{\"file_path\":\"hello.txt\",\"content\":\"hi\\n\"}"}
{"id":"c2","nonce":"X4LM","tool":"Read","arguments":"{\"file_path\":\"hello.txt\"}"}
`)
	var out strings.Builder
	_ = Serve(context.Background(), in, &out, dir, Options{})
	_, responses, _ := strings.Cut(out.String(), "\n") // the ready line holds a temp path and a pid
	os.Stdout.WriteString(responses)
	// Output:
	// {"id":"c1","nonce":"7J2Q","observation":"Wrote hello.txt (3 bytes)."}
	// {"id":"c2","nonce":"X4LM","observation":"hello.txt\n1. hi"}
}

// TestServeHeartbeats: a call that runs longer than HeartbeatInterval is preceded by
// heartbeats carrying its id and nonce and nothing else, and none comes after its answer:
// the next line is the next call's answer. The command runs until the test has read a
// heartbeat (a command of a fixed length just over HeartbeatInterval can end with its first
// heartbeat due but not yet written, on a busy machine), or for two minutes at most.
func TestServeHeartbeats(t *testing.T) {
	t.Parallel()
	b := startServe(t, context.Background())
	args := `{"command": "for i in $(seq 1200); do [ -e beat ] && break; sleep 0.1; done; echo slept"}`
	line, _ := json.Marshal(Request{ID: "7", Nonce: "n7", Tool: "Bash", Arguments: args})
	b.send(t, string(line))
	beats := 0
	for {
		var resp Response
		b.readLine(t, &resp)
		if beats == 0 && resp.Alive {
			if err := os.WriteFile(filepath.Join(b.dir, "beat"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if !resp.Alive {
			if resp.ID != "7" || resp.Nonce != "n7" || resp.Observation != "Exit code: 0\nSTDOUT:\nslept\n\nSTDERR:\n" {
				t.Fatalf("answer %+v", resp)
			}
			break
		}
		if (resp != Response{ID: "7", Nonce: "n7", Alive: true}) {
			t.Fatalf("heartbeat %+v carries more than the call's id and nonce", resp)
		}
		beats++
	}
	if beats == 0 {
		t.Error("no heartbeat during a call longer than HeartbeatInterval")
	}
	if resp := b.call(t, Request{ID: "8", Nonce: "n8", Tool: "Read", Arguments: `{"file_path": "a.txt"}`}); resp.Alive || resp.ID != "8" || resp.Nonce != "n8" {
		t.Errorf("the line after the answer is %+v, want call 8's answer", resp)
	}
}

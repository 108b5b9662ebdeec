package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServeEchoesNonce(t *testing.T) {
	t.Parallel()
	b := startServe(t, context.Background())
	for i, nonce := range []string{"n-one", "n-two", ""} {
		id := fmt.Sprint(i)
		resp := b.call(t, Request{ID: id, Nonce: nonce, Tool: "Read", Arguments: `{"file_path":"a.txt"}`})
		if resp.ID != id || resp.Nonce != nonce || resp.Observation != "a.txt\n1. alpha" || resp.Error != "" || resp.Killed != 0 {
			t.Errorf("call %d: got %+v", i, resp)
		}
	}
}

// An observation that would not fit in a response line is replaced by an Error, so that the
// executor never writes a line the host refuses. 1,000 paths of about 560 bytes are about
// 560 KB: a legitimate Glob past MaxResponseBytes.
func TestServeResponseOverCapBecomesError(t *testing.T) {
	t.Parallel()
	b := startServe(t, context.Background())
	deep := filepath.Join(b.dir, strings.Repeat("d", 250), strings.Repeat("e", 250))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range globLimit {
		if err := os.WriteFile(filepath.Join(deep, fmt.Sprintf("%04d-%s.txt", i, strings.Repeat("f", 50))), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	line := b.callRaw(t, Request{ID: "big", Nonce: "nb", Tool: "Glob", Arguments: `{"pattern":"**/*.txt"}`})
	if len(line) > MaxResponseBytes {
		t.Fatalf("response line of %d bytes, over MaxResponseBytes", len(line))
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.ID != "big" || resp.Nonce != "nb" || resp.Observation != "" ||
		!strings.HasPrefix(resp.Error, `the "Glob" observation takes `) || !strings.Contains(resp.Error, "over the 524288 bytes a line may carry") {
		t.Errorf("got %+v", resp)
	}
	// The same directory with a narrower pattern is an ordinary answer.
	resp = b.call(t, Request{ID: "small", Nonce: "ns", Tool: "Glob", Arguments: `{"pattern":"**/0001-*.txt"}`})
	if resp.Error != "" || !strings.HasSuffix(resp.Observation, "0001-"+strings.Repeat("f", 50)+".txt") {
		t.Errorf("narrow glob: got error %q, observation %.80q", resp.Error, resp.Observation)
	}
}

// The largest capped observations fit whatever their characters: 30,000 control characters
// are 6 bytes each as JSON escapes.
func TestServeCappedObservationsFit(t *testing.T) {
	t.Parallel()
	b := startServe(t, context.Background())
	resp := b.call(t, Request{ID: "1", Nonce: "n", Tool: "Bash", Arguments: `{"command":"head -c 100000 /dev/zero | tr '\\0' '\\1'"}`})
	if resp.Error != "" || !strings.HasSuffix(resp.Observation, "[truncated 70030 chars]") {
		t.Errorf("got error %q, observation ending %q", resp.Error, resp.Observation[max(0, len(resp.Observation)-40):])
	}
}

func TestKillLeftoversRefusedAsRoot(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("the refusal concerns root; the sweep itself is tested in the sandbox (runner/sandbox)")
	}
	err := Serve(context.Background(), strings.NewReader(""), &strings.Builder{}, t.TempDir(), Options{KillLeftovers: true})
	if err == nil || !strings.Contains(err.Error(), "refusing to kill leftover processes as root") {
		t.Errorf("Serve with KillLeftovers as root: %v", err)
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	tail := " 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 1000 1 0 0 0"
	tests := []struct {
		name string
		stat string
		want procInfo
		ok   bool
	}{
		{"Plain", "42 (bash) S 1 42 42" + fmt.Sprintf(tail, 777), procInfo{procID{42, 777}, 'S', 42}, true},
		{"NameWithSpacesAndParens", "43 (a) b (c) R 42 7 7" + fmt.Sprintf(tail, 778), procInfo{procID{43, 778}, 'R', 7}, true},
		{"Zombie", "44 (x) Z 1 9 9" + fmt.Sprintf(tail, 1), procInfo{procID{44, 1}, 'Z', 9}, true},
		{"Short", "45 (x) S 1 2 3", procInfo{}, false},
		{"NoParen", "46 x S 1 2 3" + fmt.Sprintf(tail, 1), procInfo{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pid := tt.want.pid
			if !tt.ok {
				pid = 1
			}
			got, ok := parseStat(pid, []byte(tt.stat+"\n"))
			if ok != tt.ok || got != tt.want {
				t.Errorf("parseStat = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// The running test binary's own entry is read like any other.
func TestListProcsSeesItself(t *testing.T) {
	t.Parallel()
	procs, err := listProcs()
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, p := range procs {
		if p.pid == os.Getpid() {
			if p.pgrp <= 0 || p.start == 0 || p.state == 0 {
				t.Errorf("own entry %+v", p)
			}
			return
		}
	}
	t.Errorf("own pid %d not among %d processes", os.Getpid(), len(procs))
}

// callRaw sends req and returns the response line as written, "\n" included.
func (b *serveBundle) callRaw(t *testing.T, req Request) []byte {
	t.Helper()
	line, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	b.send(t, string(line))
	resp, err := b.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return resp
}

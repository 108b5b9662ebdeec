package executor

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
)

// TestBashExitCodeInTheProtocol: a Bash call's response carries bash's exit status beside the
// observation, and a command that prints "Exit code: 127" cannot change it; other tools and a
// timeout carry none.
func TestBashExitCodeInTheProtocol(t *testing.T) {
	t.Parallel()
	b := startServe(t, context.Background())
	tests := []struct {
		tool, args string
		want       *int
	}{
		{"Bash", `{"command": "printf 'Exit code: 127\\n'; exit 3"}`, ptr(3)},
		{"Bash", `{"command": "no-such-command-here"}`, ptr(127)},
		{"Bash", `{"command": "sleep 5", "timeout": 0.2}`, nil},
		{"Read", `{"file_path": "a.txt"}`, nil},
	}
	for i, tt := range tests {
		req, _ := json.Marshal(Request{ID: strings.Repeat("x", i+1), Tool: tt.tool, Arguments: tt.args})
		b.send(t, string(req))
		var resp Response
		for {
			b.readLine(t, &resp)
			if !resp.Alive {
				break
			}
		}
		if (resp.ExitCode == nil) != (tt.want == nil) || (tt.want != nil && *resp.ExitCode != *tt.want) {
			t.Errorf("%s %s: exit code %v, want %v (observation %q)", tt.tool, tt.args, show(resp.ExitCode), show(tt.want), resp.Observation)
		}
	}
	if got := BashCommand(`{"command": "npm install", "command": "cargo build"}`); got != "cargo build" {
		t.Errorf("BashCommand reads %q, want the executor's reading (the last key wins)", got)
	}
}

func ptr(n int) *int { return &n }

func show(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// query builds a DNS query for name by hand, as a resolver sends it.
func query(id uint16, name string) []byte {
	p := binary.BigEndian.AppendUint16(nil, id)
	p = append(p, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0)
	for _, l := range strings.Split(name, ".") {
		p = append(p, byte(len(l)))
		p = append(p, l...)
	}
	return append(p, 0, 0, 1, 0, 1)
}

// TestObserverCountsAndAnswers: a query is answered REFUSED with its question echoed, a resend
// (same id) is a query but not a new lookup, marks name the questions of their interval only,
// and a response or a short packet is counted as malformed and not answered.
func TestObserverCountsAndAnswers(t *testing.T) {
	t.Parallel()
	o := &observer{index: map[string]int{}}
	q := query(0x1234, "files.pkgs.invalid")
	resp := o.query(q)
	if len(resp) != len(q) || resp[0] != 0x12 || resp[1] != 0x34 || resp[2]&0x80 == 0 || resp[3]&0x0f != dnsRefused || !bytes.Equal(resp[4:], q[4:]) {
		t.Errorf("answer % x to % x", resp, q)
	}
	o.query(q) // a resend
	o.query(query(0x9999, "files.pkgs.invalid"))
	m := o.mark()
	if m.Queries != 3 || m.Lookups != 2 || len(m.Touched) != 1 || m.Touched[0] != 0 {
		t.Errorf("mark %+v", m)
	}
	if resp := o.query(resp); resp != nil {
		t.Error("a response was answered")
	}
	if resp := o.query([]byte{1, 2, 3}); resp != nil {
		t.Error("a short packet was answered")
	}
	m = o.mark()
	if len(m.Touched) != 0 {
		t.Errorf("second mark names %v, which were asked before it", m.Touched)
	}
	r := o.report()
	if r.Malformed != 2 || len(r.Keys) != 1 || r.Keys[0].Queries != 3 || r.Keys[0].Lookups != 2 {
		t.Errorf("report %+v", r)
	}
}

// FuzzObserverQuery: whatever bytes a process in the sandbox sends, the observer neither panics
// nor keeps more than its bounds, and answers only what has a DNS header.
func FuzzObserverQuery(f *testing.F) {
	f.Add(query(1, "files.pkgs.invalid"), uint16(7))
	f.Add([]byte{0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0}, uint16(0))
	f.Add(bytes.Repeat([]byte{0xff}, 600), uint16(65535))
	f.Fuzz(func(t *testing.T, p []byte, salt uint16) {
		o := &observer{index: map[string]int{}}
		for i := range 300 {
			q := append([]byte(nil), p...)
			if len(q) >= 2 {
				binary.BigEndian.PutUint16(q, salt+uint16(i))
			}
			if len(q) > 12 {
				q[len(q)-1] ^= byte(i)
				q[12] ^= byte(i >> 8)
			}
			resp := o.query(q)
			if resp != nil && (len(q) < 12 || len(resp) != len(q)) {
				t.Fatalf("answered % x with % x", q, resp)
			}
		}
		r := o.report()
		if len(r.Keys) > MaxObservedQuestions {
			t.Fatalf("%d keys", len(r.Keys))
		}
		for _, k := range r.Keys {
			if len(k.Question) > MaxObservedQuestionBytes {
				t.Fatalf("a key of %d bytes", len(k.Question))
			}
		}
		if r.Queries+r.Malformed != 300 {
			t.Fatalf("%d queries and %d malformed of 300 packets", r.Queries, r.Malformed)
		}
	})
}

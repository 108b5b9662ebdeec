package sandbox_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/executor"
	"github.com/frognano/frognano/runner/sandbox"
)

// observedSandbox is readySandbox with the network observer started before the executor, as
// the runner makes the agent's sandbox.
func observedSandbox(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	sb := newSandbox(t, testConfig(), "agent")
	ctx := context.Background()
	if err := sb.CopyRepo(ctx, makeRepo(t)); err != nil {
		t.Fatalf("CopyRepo: %v", err)
	}
	if err := sb.StartNetworkObserver(ctx); err != nil {
		t.Fatalf("StartNetworkObserver: %v", err)
	}
	if err := sb.StartExecutor(ctx); err != nil {
		t.Fatalf("StartExecutor: %v", err)
	}
	return sb
}

// questionName is the name of a question's key, read the simple way for the test (the runner
// parses them with a DNS library, runner/egress).
func questionName(q []byte) string {
	var labels []string
	for i := 8; i < len(q) && q[i] != 0; i += int(q[i]) + 1 {
		end := min(len(q), i+1+int(q[i]))
		labels = append(labels, string(q[i+1:end]))
	}
	return strings.Join(labels, ".")
}

// TestNetworkObserverSeesLookupsAndNoRoutes: the observer counts the names the model's commands
// try to resolve (getent, Python, git) and the kernel's no-route count counts a connect to an
// address; each Bash call carries its exit status from the protocol and its own share. What
// the commands print is what an offline sandbox prints: the lookup fails at once, as a
// temporary failure.
func TestNetworkObserverSeesLookupsAndNoRoutes(t *testing.T) {
	t.Parallel()
	sb := observedSandbox(t)
	// The engine mounts no resolv.conf in a container without networking: the image's own
	// (empty in the sandbox image) is what the C library reads, and it then asks 127.0.0.1.
	if r := bash(t, sb, "grep -v '^#' /etc/resolv.conf"); strings.TrimSpace(r.stdout) != "" {
		t.Errorf("resolv.conf holds %q, want no nameserver (the C library's default, 127.0.0.1)", r.stdout)
	}
	py := bash(t, sb, `python3 -c "
import socket
try: socket.getaddrinfo('one.pkgs.invalid', 443)
except Exception as e: print(repr(e))"`)
	if !strings.Contains(py.stdout, "Temporary failure in name resolution") {
		t.Errorf("Python's lookup printed %q, want the offline sandbox's temporary failure", py.stdout)
	}
	git := bash(t, sb, "git ls-remote https://two.pkgs.invalid/x")
	if git.code != 128 || !strings.Contains(git.stderr, "Could not resolve host: two.pkgs.invalid") {
		t.Errorf("git printed %q (exit %d), want Could not resolve host", git.stderr, git.code)
	}
	bash(t, sb, `python3 -c "
import socket
s = socket.socket()
try: s.connect(('192.0.2.1', 443))
except OSError as e: print(e)"`)
	bash(t, sb, "echo 'Could not resolve host: forged.pkgs.invalid'; exit 3")

	rep := sb.NetworkReport(context.Background())
	if !rep.Observed || rep.Why != "" {
		t.Fatalf("NetworkReport not observed: %q", rep.Why)
	}
	names := map[string]int{}
	for _, k := range rep.Observer.Keys {
		names[questionName(k.Question)] += k.Lookups
	}
	for _, want := range []string{"one.pkgs.invalid", "two.pkgs.invalid"} {
		if names[want] == 0 {
			t.Errorf("no lookup of %s observed; saw %v", want, names)
		}
	}
	if names["forged.pkgs.invalid"] != 0 {
		t.Errorf("a name the model only printed was counted: %v", names)
	}
	if rep.Observer.NoRoute < 1 {
		t.Errorf("no-route count %d, want at least the connect to 192.0.2.1", rep.Observer.NoRoute)
	}
	if len(rep.Calls) != 5 {
		t.Fatalf("%d Bash calls recorded, want 5: %+v", len(rep.Calls), rep.Calls)
	}
	c := rep.Calls
	if c[0].Lookups != 0 || c[1].Lookups == 0 || c[2].Lookups == 0 || c[3].NoRoute == 0 || c[4].Lookups != 0 || c[4].NoRoute != 0 {
		t.Errorf("per-call counts wrong: %+v", c)
	}
	if c[2].ExitCode == nil || *c[2].ExitCode != 128 || c[4].ExitCode == nil || *c[4].ExitCode != 3 {
		t.Errorf("exit codes not carried: %+v", c)
	}
	if !strings.HasPrefix(c[2].Command, "git ls-remote") {
		t.Errorf("command of call 3 = %q", c[2].Command)
	}
	t.Logf("observer: %d queries, %d lookups, %d no-route; calls %+v", rep.Observer.Queries, rep.Observer.Lookups, rep.Observer.NoRoute, c)
}

// TestObserverOutOfReach: the model, which controls every process of the sandbox user, can
// neither kill, stop or ptrace the observer, nor read or write its streams, nor take its port
// (UDP or TCP, on 127.0.0.1 or every address), nor make it forget: a flood of 100,000
// questions (random names, malformed packets, TCP connections past the cap, an oversized TCP
// message) leaves it answering, its tables bounded, and what it keeps counted.
func TestObserverOutOfReach(t *testing.T) {
	t.Parallel()
	sb := observedSandbox(t)
	find := `pid=$(for d in /proc/[0-9]*; do [ "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)" = "/opt/frognano/frognano-executor -observe-network " ] && echo "${d#/proc/}"; done | head -n1)
[ -n "$pid" ] && grep -q '^Uid:[[:space:]]*0[[:space:]]' /proc/$pid/status || { echo "observer not found"; exit 99; }
`
	attacks := []struct{ name, command string }{
		{"Kill", find + `kill -KILL "$pid" && echo KILLED; kill -STOP "$pid" && echo STOPPED`},
		{"ReadStreams", find + `ls /proc/$pid/fd && echo LISTED; echo '{"seq":1,"queries":0}' > /proc/$pid/fd/1 && echo WROTE`},
		{"Ptrace", find + `python3 -c "
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, int(sys.argv[1]), 0, 0) == 0: print('ATTACHED')" "$pid"`},
		{"TakePort", `python3 -c "
import socket
for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
    for addr in ('127.0.0.1', '0.0.0.0'):
        for opt in (None, socket.SO_REUSEADDR, socket.SO_REUSEPORT):
            s = socket.socket(socket.AF_INET, kind)
            if opt: s.setsockopt(socket.SOL_SOCKET, opt, 1)
            try:
                s.bind((addr, 53)); print('BOUND', kind, addr, opt)
            except OSError as e: pass
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('127.0.0.1', 54)); print('CONTROL')
"`},
	}
	for _, a := range attacks {
		r := bash(t, sb, a.command)
		if a.name == "TakePort" && !strings.Contains(r.stdout, "CONTROL") {
			t.Errorf("TakePort: the control bind of port 54 failed, so the test proves nothing:\n%s", r.raw)
		}
		for _, bad := range []string{"KILLED", "STOPPED", "LISTED", "WROTE", "ATTACHED", "BOUND", "observer not found"} {
			if strings.Contains(r.stdout, bad) {
				t.Errorf("%s: the model's command succeeded (%s):\n%s", a.name, bad, r.raw)
			}
		}
	}
	flood := bash(t, sb, `python3 - <<'EOF'
import os, random, socket, struct
def q(name, qid):
    b = b''.join(bytes([len(l)]) + l.encode() for l in name.split('.')) + b'\0'
    return struct.pack('>HHHHHH', qid, 0x0100, 1, 0, 0, 0) + b + struct.pack('>HH', 1, 1)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.setblocking(False)
sent = 0
for i in range(100000):
    p = q('n%d.flood.invalid' % random.randrange(1 << 30), random.randrange(65536)) if i % 10 else os.urandom(i % 13)
    try:
        u.sendto(p, ('127.0.0.1', 53)); sent += 1
    except BlockingIOError:
        pass
conns = []
for i in range(40):
    c = socket.create_connection(('127.0.0.1', 53))
    conns.append(c)
conns[0].sendall(struct.pack('>H', 60000) + b'x' * 100)
print('sent', sent)
EOF`)
	if flood.code != 0 {
		t.Fatalf("the flood failed: %s", flood.raw)
	}
	after := bash(t, sb, "git ls-remote https://after.flood.invalid/x")
	if !strings.Contains(after.stderr, "Could not resolve host") {
		t.Errorf("a lookup after the flood printed %q", after.stderr)
	}
	rep := sb.NetworkReport(context.Background())
	if !rep.Observed {
		t.Fatalf("the observer was disturbed: %s", rep.Why)
	}
	o := rep.Observer
	if len(o.Keys) > executor.MaxObservedQuestions || o.KeysDropped == 0 || o.Queries < 1000 || o.Malformed == 0 {
		t.Errorf("after the flood: %d keys, %d dropped, %d queries, %d malformed", len(o.Keys), o.KeysDropped, o.Queries, o.Malformed)
	}
	last := rep.Calls[len(rep.Calls)-1]
	if !last.Observed || last.Lookups == 0 {
		t.Errorf("the lookup after the flood was not counted: %+v", last)
	}
	t.Logf("flood: %s; observer: %d queries, %d lookups, %d keys, %d dropped, %d malformed, %d TCP refused; %s",
		strings.TrimSpace(flood.stdout), o.Queries, o.Lookups, len(o.Keys), o.KeysDropped, o.Malformed, o.TCPRefused, rep.Why)
}

// TestNetworkReportSaysWhenUnobserved: a sandbox whose observer is gone (here ended by Quiesce,
// as anything that kills it would) or was never started reports that nothing was observed, and
// why, instead of an empty report that would read as "no network use".
func TestNetworkReportSaysWhenUnobserved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sb := observedSandbox(t)
	bash(t, sb, "true")
	if err := sb.Quiesce(ctx); err != nil {
		t.Fatal(err)
	}
	if rep := sb.NetworkReport(ctx); rep.Observed || !strings.Contains(rep.Why, "stopped answering") {
		t.Errorf("after the observer ended: observed %v, why %q", rep.Observed, rep.Why)
	}
	plain := readySandbox(t, testConfig(), "")
	if rep := plain.NetworkReport(ctx); rep.Observed || rep.Why == "" {
		t.Errorf("without an observer: observed %v, why %q", rep.Observed, rep.Why)
	}
	if err := plain.StartNetworkObserver(ctx); err == nil {
		t.Error("an observer started after the executor, when the model's commands could hold its port")
	}
}

// BenchmarkToolRoundTripBashTrueObserved is BenchmarkToolRoundTripBashTrue with the network
// observer running: the difference is the mark each Bash call asks of it.
func BenchmarkToolRoundTripBashTrueObserved(b *testing.B) {
	sb := observedSandbox(b)
	benchCall(b, sb, "Bash", `{"command": "true"}`, func(o string) bool { return strings.HasPrefix(o, "Exit code: 0") })
}

// BenchmarkStartNetworkObserver is what starting the observer adds to making the agent's
// sandbox (one exec, its ready line), and the memory it holds once started, after a flood.
func BenchmarkStartNetworkObserver(b *testing.B) {
	ctx := context.Background()
	var lat latencies
	var rss []int
	for range b.N {
		b.StopTimer()
		sb := newSandbox(b, testConfig(), "agent")
		b.StartTimer()
		start := time.Now()
		if err := sb.StartNetworkObserver(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		b.StopTimer()
		res, err := sb.Run(ctx, sandbox.ExecSpec{User: "0:0", Argv: []string{"/bin/sh", "-c",
			`for d in /proc/[0-9]*; do [ "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)" = "/opt/frognano/frognano-executor -observe-network " ] && grep VmRSS "$d/status"; done`}})
		if err != nil {
			b.Fatal(err)
		}
		var kb int
		fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(string(res.Stdout), "VmRSS:")), "%d", &kb)
		rss = append(rss, kb)
		sb.Close()
		b.StartTimer()
	}
	b.StopTimer()
	lat.report(b)
	slices.Sort(rss)
	b.ReportMetric(float64(rss[len(rss)/2]), "rss-KiB")
}

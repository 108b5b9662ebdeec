package sandbox_test

import (
	"context"
	"strings"
	"testing"

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

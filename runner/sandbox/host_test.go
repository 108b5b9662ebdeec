package sandbox_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/sandbox"
)

func TestProcessAlive(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	self := sandbox.ProcessInstance(os.Getpid())
	if !sandbox.ProcessAlive(self) || strings.HasSuffix(self, "-unknown") {
		t.Errorf("this process (%s) does not count as alive", self)
	}
	cmd := exec.Command("sleep", "0")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dead := sandbox.ProcessInstance(cmd.Process.Pid)
	_ = cmd.Wait()
	pid, _, _ := strings.Cut(strings.TrimPrefix(self, "run-"), "-")
	for _, inst := range []string{
		dead,                // exited
		"run-" + pid + "-1", // this pid, but another process's start time (a reused pid)
		"", "service-start", // not a process's
		"run-x-1", "run-0-1", "run--1", "run-12",
	} {
		if sandbox.ProcessAlive(inst) {
			t.Errorf("ProcessAlive(%q) = true", inst)
		}
	}
}

func TestHostMemory(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc here")
	}
	// No host that runs Docker sandboxes has less than 256 MiB or more than 64 TiB.
	if m := sandbox.HostMemory(); m < 256<<20 || m > 64<<40 {
		t.Errorf("HostMemory() = %d", m)
	}
}

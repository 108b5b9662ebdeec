package executor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threadsChildEnv makes the test binary run threadsChild instead of the tests.
const threadsChildEnv = "FROGNANO_THREADS_CHILD"

func init() {
	if mode := os.Getenv(threadsChildEnv); mode != "" {
		threadsChild(mode)
	}
}

// blockedThreads is how many goroutines threadsChild blocks in a read at once with a reserve:
// half of ReservedThreads, so the reserve meets them all with room to spare. Room matters: at
// the peak the process also holds a thread per running P, one for sysmon, one for the template
// thread and one for the main goroutine's own reads of /proc, and a P handed off while another
// thread is still on its way back to the idle list makes the runtime start a thread when the
// list is momentarily empty. With ReservedThreads-2 blocked (CI, under load) the peak met the
// reserve and one thread more was asked for. Without one it blocks
// unreservedBlocked, more than the few idle threads a Go program may have from its start on
// any machine, so that the count must grow.
const (
	blockedThreads    = ReservedThreads / 2
	unreservedBlocked = 32
)

// threadsChild reserves threads (mode "reserve") or not (mode "none"), counts its threads,
// blocks goroutines in raw read system calls (each holds a thread in the kernel), waits until
// the kernel shows them all blocked, counts again and prints both counts.
func threadsChild(mode string) {
	blocked := unreservedBlocked
	if mode == "reserve" {
		ReserveThreads(ReservedThreads)
		blocked = blockedThreads
	}
	before := countThreads()
	var fds []int
	for range blocked {
		var p [2]int
		if err := syscall.Pipe(p[:]); err != nil { // blocking descriptors: the runtime's poller stays out
			fmt.Println("pipe:", err)
			os.Exit(1)
		}
		fds = append(fds, p[0])
		go func() {
			var b [1]byte
			syscall.Read(p[0], b[:])
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); readersBlocked(fds) < len(fds); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			fmt.Println("the readers never all blocked")
			os.Exit(1)
		}
	}
	fmt.Println(before, countThreads())
	os.Exit(0)
}

// countThreads is the process's thread count, as the PID limit counts it.
func countThreads() int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		fmt.Println("reading threads:", err)
		os.Exit(1)
	}
	return len(tasks)
}

// readersBlocked counts the threads in a read system call on one of fds.
func readersBlocked(fds []int) int {
	tasks, _ := filepath.Glob("/proc/self/task/*/syscall")
	n := 0
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 || f[0] != strconv.Itoa(syscall.SYS_READ) {
			continue
		}
		fd, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
		if err != nil {
			continue
		}
		for _, want := range fds {
			if int(fd) == want {
				n++
			}
		}
	}
	return n
}

// runThreadsChild runs threadsChild in a new process and returns its two thread counts.
func runThreadsChild(t *testing.T, mode string) (before, after int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), threadsChildEnv+"="+mode)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child (%s): %v: %s", mode, err, out)
	}
	if _, err := fmt.Sscan(string(out), &before, &after); err != nil {
		t.Fatalf("child (%s) printed %q: %v", mode, out, err)
	}
	return before, after
}

// TestReserveThreadsMeetsLaterNeeds: after ReserveThreads, goroutines blocked in system calls
// run on the reserved threads and the process asks the kernel for none (in a sandbox whose
// PID limit a fork bomb filled, asking kills the executor). Without the reserve the same
// goroutines do make new threads, which shows the count can see the difference.
func TestReserveThreadsMeetsLaterNeeds(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Fatalf("this test reads /proc: %v", err)
	}
	before, after := runThreadsChild(t, "reserve")
	t.Logf("with a reserve of %d: %d threads, then %d with %d goroutines blocked", ReservedThreads, before, after, blockedThreads)
	if before < ReservedThreads+1 {
		t.Errorf("%d threads after reserving %d, want at least %d", before, ReservedThreads, ReservedThreads+1)
	}
	if after > before {
		t.Errorf("%d blocked goroutines made %d new threads despite the reserve", blockedThreads, after-before)
	}
	before, after = runThreadsChild(t, "none")
	t.Logf("without a reserve: %d threads, then %d with %d goroutines blocked", before, after, unreservedBlocked)
	if after <= before {
		t.Errorf("without a reserve, %d blocked goroutines made no new thread (%d, then %d): the test cannot tell", unreservedBlocked, before, after)
	}
}

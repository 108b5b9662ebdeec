package executor

import (
	"fmt"
	"os"
	"syscall"
)

// prctl options (linux/prctl.h); the syscall package does not name them.
const (
	prGetDumpable = 3
	prSetDumpable = 4
)

// Harden puts the executor out of reach of the commands it runs, which run as the same user.
// The executor binary calls it first thing in main, before reading anything.
//
// It makes the process non-dumpable: the kernel then lets only a process with CAP_SYS_PTRACE
// (none in the sandbox) ptrace it or open its /proc/PID/fd/*, /proc/PID/mem or
// /proc/PID/environ, so a command can neither write a line to the executor's stdout, nor read
// a request (and its nonce) from its stdin or memory, nor change its code.
//
// It also forbids itself and every process it starts to set another process's resource limits
// (forbidForeignPrlimit): non-dumpable does not stop prlimit(2), and a command could otherwise
// lower the executor's limits, which every later command would inherit.
//
// Before that it opens its own oom_score_adj, which it then keeps: it raises it for the moment
// it starts a Bash command, which inherits it (startPreferredForOOM).
//
// It also moves stdin and stdout, the protocol, to new close-on-exec descriptors and leaves
// /dev/null at 0 and 1, so that no child can ever inherit them, whatever starts it, and a
// stray write to os.Stdout cannot corrupt the protocol. It returns the protocol's streams.
// Standard error stays: the host reads it only to explain the executor's death, and the
// runtime writes its crash reports there.
func Harden() (in, out *os.File, err error) {
	// Its own oom_score_adj is opened first: once non-dumpable it could not open it any more
	// (startPreferredForOOM). Without it, commands get their score after they started.
	if f, err := os.OpenFile("/proc/self/oom_score_adj", os.O_RDWR, 0); err == nil {
		ownOOMScore = f
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return nil, nil, fmt.Errorf("making the executor non-dumpable: %w", errno)
	}
	if d, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetDumpable, 0, 0); errno != 0 || d != 0 {
		return nil, nil, fmt.Errorf("the executor is still dumpable (%d, %v)", d, errno)
	}
	if err := forbidForeignPrlimit(); err != nil {
		return nil, nil, fmt.Errorf("forbidding prlimit on other processes: %w", err)
	}
	inFD, err := dupCloexec(0)
	if err != nil {
		return nil, nil, fmt.Errorf("moving stdin: %w", err)
	}
	outFD, err := dupCloexec(1)
	if err != nil {
		return nil, nil, fmt.Errorf("moving stdout: %w", err)
	}
	null, err := syscall.Open(os.DevNull, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s: %w", os.DevNull, err)
	}
	defer syscall.Close(null)
	for _, fd := range []int{0, 1} {
		if err := syscall.Dup3(null, fd, 0); err != nil {
			return nil, nil, fmt.Errorf("replacing descriptor %d by %s: %w", fd, os.DevNull, err)
		}
	}
	return os.NewFile(uintptr(inFD), "protocol-in"), os.NewFile(uintptr(outFD), "protocol-out"), nil
}

// dupCloexec duplicates fd to the lowest free descriptor above 2, close-on-exec from the start.
func dupCloexec(fd int) (int, error) {
	nfd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 3)
	if errno != 0 {
		return -1, errno
	}
	return int(nfd), nil
}

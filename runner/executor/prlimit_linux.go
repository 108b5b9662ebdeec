package executor

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// The kernel lets a process set another process's resource limits with prlimit(2) when both
// have the same user and group (real, effective and saved), whether or not the target is
// dumpable. The model's commands share the executor's user and group, so without more a
// command could lower the executor's limits for good, and every later command inherits them:
// RLIMIT_NOFILE to a handful (no tool can open a file or a pipe any more), RLIMIT_NPROC to 1
// (no Bash command can start), RLIMIT_DATA or RLIMIT_AS (every command and, on its next heap
// growth, the executor crash), RLIMIT_CPU (the kernel kills the executor after that many
// seconds of its own work). An unprivileged process can never raise a hard limit again.
//
// forbidForeignPrlimit therefore installs a seccomp filter on the executor, which every
// process it starts inherits and none can remove: prlimit64 that would set the limits of a
// process other than the caller (a pid other than 0 and a new limit) fails with EPERM. Reading
// another process's limits, and setrlimit or prlimit on oneself (pid 0, what libc, Go and
// bash's ulimit use), are untouched; so is Docker's own filter, which the kernel also applies.
//
// A process can make a system call through another ABI than its own: on x86-64, the i386 ABI
// (int 0x80, also from a 64-bit program) and x32 (the number with bit 30 set); on arm64, 32-bit
// ARM. Docker's default profile admits those architectures, so the filter names prlimit64 in
// each of them. An architecture it does not name is not filtered.

// Classic BPF and seccomp constants (linux/filter.h, linux/seccomp.h, linux/audit.h).
const (
	bpfLdWAbs  = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfRetK    = 0x06 // BPF_RET | BPF_K
	retAllow   = 0x7fff0000
	retErrno   = 0x00050000
	setModeFlt = 1 // SECCOMP_SET_MODE_FILTER
	flagTSync  = 1 // SECCOMP_FILTER_FLAG_TSYNC
	prSetNNP   = 38

	auditArchX8664   = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAArch64 = 0xc00000b7
	auditArchARM     = 0x40000028
	x32SyscallBit    = 0x40000000

	// Offsets in struct seccomp_data: nr, arch, then args[6] of 8 bytes each from 16. The
	// executor is built for little-endian machines only (amd64, arm64): the low half of an
	// argument comes first.
	offNr    = 0
	offArch  = 4
	offArg0  = 16
	offArg2  = 32
	offArg2H = 36
)

// sysSeccomp is seccomp(2)'s number for each architecture the executor is built for (the
// syscall package does not name it on amd64).
var sysSeccomp = map[string]uintptr{"amd64": 317, "arm64": 277}

// prlimitSyscalls is prlimit64's number in each ABI the filter knows.
var prlimitSyscalls = []struct {
	arch uint32
	nrs  []uint32
}{
	{auditArchX8664, []uint32{302, 302 | x32SyscallBit}},
	{auditArchI386, []uint32{340}},
	{auditArchAArch64, []uint32{261}},
	{auditArchARM, []uint32{369}},
}

type sockFilter struct {
	code uint16
	jt   uint8
	jf   uint8
	k    uint32
}

type sockFprog struct {
	n      uint16
	filter *sockFilter
}

// prlimitFilter is the program: for each known architecture, its prlimit64 numbers jump to a
// check that allows pid 0 and a NULL new limit and refuses the rest; everything else is allowed.
func prlimitFilter() []sockFilter {
	ld := func(off uint32) sockFilter { return sockFilter{code: bpfLdWAbs, k: off} }
	ret := func(v uint32) sockFilter { return sockFilter{code: bpfRetK, k: v} }
	prog := []sockFilter{ld(offArch)}
	var toCheck []int // indices of jumps whose true branch goes to the check
	for _, a := range prlimitSyscalls {
		// jeq arch: fall into the block, else skip it (ld nr, one jeq per number, ret allow).
		prog = append(prog, sockFilter{code: bpfJeqK, k: a.arch, jf: uint8(len(a.nrs) + 2)})
		prog = append(prog, ld(offNr))
		for _, nr := range a.nrs {
			toCheck = append(toCheck, len(prog))
			prog = append(prog, sockFilter{code: bpfJeqK, k: nr})
		}
		prog = append(prog, ret(retAllow))
	}
	prog = append(prog, ret(retAllow)) // an architecture not listed
	check := len(prog)
	for _, i := range toCheck {
		prog[i].jt = uint8(check - i - 1)
	}
	return append(prog,
		ld(offArg0),                            // check+0: pid (pid_t: the low half)
		sockFilter{code: bpfJeqK, k: 0, jt: 5}, // pid 0 (the caller itself): allow
		ld(offArg2),                            // the new limit's pointer, low half
		sockFilter{code: bpfJeqK, k: 0, jf: 2}, // not NULL: refuse
		ld(offArg2H),                           // high half
		sockFilter{code: bpfJeqK, k: 0, jt: 1}, // NULL: only reading, allow
		ret(retErrno|uint32(syscall.EPERM)),
		ret(retAllow),
	)
}

// forbidForeignPrlimit installs prlimitFilter on every thread of the executor. It sets
// no_new_privs first, which an unprivileged process needs for a filter (a sandbox has it from
// Docker already).
func forbidForeignPrlimit() error {
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNNP, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("setting no_new_privs: %w", errno)
	}
	nr, ok := sysSeccomp[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("installing the seccomp filter: no seccomp(2) number known for %s", runtime.GOARCH)
	}
	prog := prlimitFilter()
	fprog := sockFprog{n: uint16(len(prog)), filter: &prog[0]}
	tid, _, errno := syscall.RawSyscall(nr, setModeFlt, flagTSync, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return fmt.Errorf("installing the seccomp filter: %w", errno)
	}
	if tid != 0 {
		// TSYNC names a thread it could not synchronise; the filter is then not installed.
		return fmt.Errorf("installing the seccomp filter: thread %d could not take it", tid)
	}
	return nil
}

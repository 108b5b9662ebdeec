package executor

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"testing"
)

// runFilter runs a classic BPF program of the three kinds of instruction prlimitFilter uses
// on a struct seccomp_data laid out as the kernel lays it out (nr, arch, instruction pointer,
// six 64-bit arguments, little-endian) and returns what it returns. Anything else it meets, a
// jump past the end or a program that falls off its end is an error: the kernel would refuse
// such a program, so a test that reaches one has found a broken filter.
func runFilter(prog []sockFilter, arch, nr uint32, args [6]uint64) (uint32, error) {
	var data [64]byte
	binary.LittleEndian.PutUint32(data[0:], nr)
	binary.LittleEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.code {
		case bpfLdWAbs:
			if in.k%4 != 0 || in.k+4 > uint32(len(data)) {
				return 0, fmt.Errorf("pc %d: load at offset %d", pc, in.k)
			}
			acc = binary.LittleEndian.Uint32(data[in.k:])
		case bpfJeqK:
			off := int(in.jf)
			if acc == in.k {
				off = int(in.jt)
			}
			if pc+1+off >= len(prog) {
				return 0, fmt.Errorf("pc %d: jump by %d past the end (%d instructions)", pc, off, len(prog))
			}
			pc += off
		case bpfRetK:
			return in.k, nil
		default:
			return 0, fmt.Errorf("pc %d: unknown instruction %#x", pc, in.code)
		}
	}
	return 0, fmt.Errorf("fell off the end of the program")
}

// TestPrlimitFilterDecisions runs the seccomp program itself on every case that matters, for
// every ABI it names: the jump offsets of each architecture's block and of the check must land
// where they should, and the pid is compared as the kernel reads it (pid_t, the low 32 bits
// of the argument). Setting another process's limits is refused, a negative pid included (the
// kernel would answer ESRCH); reading anyone's limits, setting one's own (pid 0), other system
// calls and other architectures are allowed. A process that names its own pid instead of 0 is
// refused too: the filter cannot know the caller's pid (docs/leaf-protocol.md, section 10).
func TestPrlimitFilterDecisions(t *testing.T) {
	prog := prlimitFilter()
	if len(prog) > 255 {
		t.Fatalf("%d instructions: the 8-bit jump offsets cannot reach the check", len(prog))
	}
	refuse := uint32(retErrno | uint32(syscall.EPERM))
	const limitPtr = 0x7ffd_1234_5678
	cases := []struct {
		name          string
		pid, new, old uint64
		refused       bool
	}{
		{"another process sets", 42, limitPtr, 0, true},
		{"another process sets and reads", 42, limitPtr, limitPtr, true},
		{"a pointer in the high half only", 42, 1 << 32, 0, true},
		{"a pointer in the low half only", 42, 0x1000, 0, true},
		{"a negative pid", 0xffff_ffff, limitPtr, 0, true},
		{"a pid whose low half is not 0", 1<<32 | 7, limitPtr, 0, true},
		{"the caller's own pid", 1234, limitPtr, 0, true},
		{"another process read", 42, 0, limitPtr, false},
		{"self (pid 0) sets", 0, limitPtr, 0, false},
		{"self (pid 0) reads", 0, 0, limitPtr, false},
		// The kernel takes pid_t from the low 32 bits: this is pid 0, the caller itself.
		{"pid 0 with a high half", 0xdead_beef << 32, limitPtr, 0, false},
	}
	for _, abi := range prlimitSyscalls {
		for _, nr := range abi.nrs {
			for _, c := range cases {
				got, err := runFilter(prog, abi.arch, nr, [6]uint64{c.pid, 7, c.new, c.old})
				want := uint32(retAllow)
				if c.refused {
					want = refuse
				}
				if err != nil || got != want {
					t.Errorf("arch %#x nr %#x, %s: %#x, %v; want %#x", abi.arch, nr, c.name, got, err, want)
				}
			}
			// The same arguments to another system call (the next number) are allowed.
			if got, err := runFilter(prog, abi.arch, nr+1, [6]uint64{42, 7, limitPtr, 0}); err != nil || got != retAllow {
				t.Errorf("arch %#x nr %#x: %#x, %v; want allowed", abi.arch, nr+1, got, err)
			}
		}
	}
	// Each ABI's number belongs to its own architecture only: 302 under i386 is another call
	// (the i386 ABI's prlimit64 is 340), and an architecture the filter does not name is
	// not filtered.
	for _, c := range []struct {
		arch, nr uint32
	}{{auditArchI386, 302}, {auditArchAArch64, 302}, {auditArchX8664, 261}, {auditArchX8664, 340}, {0xc00000f3 /* riscv64 */, 261}} {
		if got, err := runFilter(prog, c.arch, c.nr, [6]uint64{42, 7, limitPtr, 0}); err != nil || got != retAllow {
			t.Errorf("arch %#x nr %d: %#x, %v; want allowed", c.arch, c.nr, got, err)
		}
	}
}

package executor

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Killing a timed-out command's process group is not enough: a command can leave it (setsid,
// a daemon, a fork bomb that does) or have left processes in earlier calls. After a timeout
// the sweeper therefore kills every process it may signal, which in a sandbox is every
// process of the sandbox user, except three kinds it must keep: itself, the PID namespace's
// init (which the kernel protects anyway), and the processes that existed when it started:
// the container's own `sleep infinity`, whose death would stop the container.
//
// kill(-1, SIGKILL) would do it in one call but spares only init and the caller, so it would
// take the container's main process with it. Instead kill(-1, SIGSTOP) freezes every other
// process atomically (the kernel holds the task list while it signals, and a fork that is
// under way hands the signal to the new child), so nothing forks while /proc is read; each
// process found is then killed by PID, and the kept ones get SIGCONT.

const (
	// sweepLimit bounds one sweep: a process stuck in the kernel (state D) may take its time
	// to die, and the tool call must still return.
	sweepLimit = 5 * time.Second
	// sweepPause is the longest pause between two passes over /proc.
	sweepPause = 20 * time.Millisecond
)

// procID names one process across PID reuse.
type procID struct {
	pid   int
	start uint64 // clock ticks after boot (/proc/PID/stat field 22)
}

// procInfo is what the sweeper reads of a process.
type procInfo struct {
	procID
	state byte
	pgrp  int
}

// sweeper kills leftover processes; see Options.KillLeftovers.
type sweeper struct {
	self int
	keep map[procID]bool
}

// newSweeper records the processes that exist now as the ones to keep. It refuses to work
// as root, where kill(-1) would reach every process of the machine's PID namespace.
func newSweeper() (*sweeper, error) {
	if os.Getuid() == 0 || os.Geteuid() == 0 {
		return nil, errors.New("refusing to kill leftover processes as root: the sweep is for the sandbox user")
	}
	s := &sweeper{self: os.Getpid(), keep: map[procID]bool{}}
	procs, err := listProcs()
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		s.keep[p.procID] = true
	}
	return s, nil
}

// sweep kills every process it may signal except the kept ones, until a pass over /proc finds
// none alive or sweepLimit passes, and returns how many it killed outside process group
// group (the timed-out command's own group, which the caller has already killed).
func (s *sweeper) sweep(group int) int {
	killed := map[procID]bool{}
	counted := 0
	defer s.resume()
	deadline := time.Now().Add(sweepLimit)
	for pause := time.Millisecond; ; pause = min(2*pause, sweepPause) {
		_ = syscall.Kill(-1, syscall.SIGSTOP)
		procs, _ := listProcs()
		alive := 0
		for _, p := range procs {
			if p.pid == s.self || p.pid == 1 || s.keep[p.procID] || p.state == 'Z' || p.state == 'X' {
				continue
			}
			if syscall.Kill(p.pid, syscall.SIGKILL) != nil {
				continue // gone meanwhile, or another user's
			}
			alive++
			if !killed[p.procID] {
				killed[p.procID] = true
				if p.pgrp != group {
					counted++
				}
			}
		}
		if alive == 0 || time.Now().After(deadline) {
			return counted
		}
		time.Sleep(pause)
	}
}

// resume lets the kept processes run again after kill(-1, SIGSTOP) stopped them.
func (s *sweeper) resume() {
	for p := range s.keep {
		if p.pid != s.self {
			_ = syscall.Kill(p.pid, syscall.SIGCONT)
		}
	}
}

// listProcs reads every process of the PID namespace from /proc, skipping the ones that end
// while it reads.
func listProcs() ([]procInfo, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	procs := make([]procInfo, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		if p, ok := parseStat(pid, b); ok {
			procs = append(procs, p)
		}
	}
	return procs, nil
}

// parseStat reads state, process group and start time from /proc/PID/stat. The command name
// (field 2) is in parentheses and may itself hold spaces and parentheses, so the fields are
// counted from the last ')'.
func parseStat(pid int, b []byte) (procInfo, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	pgrp, err1 := strconv.Atoi(string(f[2]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return procInfo{}, false
	}
	return procInfo{procID: procID{pid: pid, start: start}, state: f[0][0], pgrp: pgrp}, true
}

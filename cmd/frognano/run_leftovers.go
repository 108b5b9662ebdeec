package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// runOwner is the sandbox owner of `frognano run` on a host whose service owner is owner:
// distinct, so that a run never removes the service's sandboxes and the service never removes
// a run's.
func runOwner(owner string) string { return "run@" + owner }

// runInstance names one `frognano run` process among those of this host: its pid and its start
// time in clock ticks since boot (from /proc), which a process that later reuses the pid does
// not share. Where /proc cannot be read the start is "unknown".
func runInstance(pid int) string {
	start, ok := processStart(pid)
	if !ok {
		start = "unknown"
	}
	return fmt.Sprintf("run-%d-%s", pid, start)
}

// runAlive reports whether the `frognano run` that runInstance named is still running on this
// host. An instance it cannot parse is no live run's. When the start time is unknown only the
// pid can be checked, and without /proc nothing can: such a run counts as alive, so that its
// sandboxes are left to their lifetime rather than removed under it.
func runAlive(instance string) bool {
	rest, ok := strings.CutPrefix(instance, "run-")
	pidText, start, ok2 := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	if !ok || !ok2 || err != nil || pid <= 0 || start == "" {
		return false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return true
	}
	cur, alive := processStart(pid)
	if start == "unknown" {
		return alive
	}
	return alive && cur == start
}

// processStart reads field 22 (starttime) of /proc/PID/stat.
func processStart(pid int) (string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	// The command name (field 2) is in parentheses and may hold anything, spaces and ')'
	// included: the fields that follow start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", false
	}
	f := strings.Fields(string(b[i+1:]))
	const starttime = 22 - 3 // field 3 (state) is f[0]
	if len(f) <= starttime {
		return "", false
	}
	return f[starttime], true
}

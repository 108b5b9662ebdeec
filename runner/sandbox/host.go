package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// What the host tells about itself through /proc: how much memory it has (how many sandboxes
// fit) and whether the process that made a sandbox still runs (whether its sandboxes are left
// behind). Where /proc cannot be read, each says so in the way that removes nothing.

// HostMemory is this host's memory in bytes, from /proc/meminfo; 0 when unknown.
func HostMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// ProcessInstance names process pid of this host as a LabelInstance value ("run-PID-START",
// the form `frognano run` has always labelled its sandboxes with): its pid and its start time
// in clock ticks since boot, which a process that later reuses the pid does not share. Where
// /proc cannot be read the start is "unknown".
func ProcessInstance(pid int) string {
	start, ok := processStart(pid)
	if !ok {
		start = "unknown"
	}
	return fmt.Sprintf("run-%d-%s", pid, start)
}

// ProcessAlive reports whether the process ProcessInstance named is still running on this
// host. An instance it cannot parse is no live process's. When the start time is unknown only
// the pid can be checked, and without /proc nothing can: such a process counts as alive, so
// that its sandboxes are left to their lifetime rather than removed under it.
func ProcessAlive(instance string) bool {
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

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// Usage sums what the sandboxes of one run used (Config.Usage): their CPU time, and the highest
// memory use of any one of them. Each sandbox is measured once, by Close, just before it is
// removed. Its methods are safe for concurrent use; the zero value is ready.
//
// The CPU time is the engine's: the container's cgroup counter in its one-shot stats, which
// nothing inside the sandbox can change. The peak memory is the engine's too where the engine
// reports it (cgroup v1's max_usage); on cgroup v2, whose stats have no peak, it is the cgroup's
// memory.peak read inside the container as the init user (like the OOM counter, limits.go), which
// a hostile sandbox could under-report but never push past its memory limit (it is clamped to
// it), and else the usage at the end, a lower bound. A sandbox that had stopped before Close
// (killed for a limit) counts what the engine still reports of it, usually nothing.
type Usage struct {
	mu       sync.Mutex
	cpu      time.Duration
	peak     int64
	measured int
	missed   int
}

// CPU is the CPU time of the sandboxes measured so far, summed.
func (u *Usage) CPU() time.Duration {
	if u == nil {
		return 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cpu
}

// Peak is the highest memory use of one of the sandboxes measured so far, in bytes.
func (u *Usage) Peak() int64 {
	if u == nil {
		return 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.peak
}

// Sandboxes is how many sandboxes were measured, and how many could not be (their stats could
// not be read: they count nothing).
func (u *Usage) Sandboxes() (measured, missed int) {
	if u == nil {
		return 0, 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.measured, u.missed
}

func (u *Usage) add(cpu time.Duration, peak int64, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !ok {
		u.missed++
		return
	}
	u.measured++
	u.cpu += cpu
	u.peak = max(u.peak, peak)
}

// usageReadTimeout bounds the reading of one sandbox's stats at Close.
const usageReadTimeout = 10 * time.Second

// maxStatsBody bounds the stats answer read (a few KiB in practice).
const maxStatsBody = 1 << 20

// measure adds the sandbox's CPU time and peak memory to cfg.Usage, if set. It never fails the
// Close: a sandbox it cannot read counts as missed.
func (s *Sandbox) measure(ctx context.Context) {
	u := s.cfg.Usage
	if u == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, usageReadTimeout)
	defer cancel()
	cpu, peak, err := s.readStats(ctx)
	if err != nil {
		u.add(0, 0, false)
		return
	}
	u.add(cpu, peak, true)
}

// readStats reads the engine's one-shot stats of the container: CPU time and peak memory (see
// Usage for where each comes from).
func (s *Sandbox) readStats(ctx context.Context) (time.Duration, int64, error) {
	r, err := s.docker.ContainerStatsOneShot(ctx, s.id)
	if err != nil {
		return 0, 0, fmt.Errorf("reading the sandbox's stats: %w", err)
	}
	defer r.Body.Close()
	cpu, peak, usage, err := parseStats(io.LimitReader(r.Body, maxStatsBody))
	if err != nil {
		return 0, 0, err
	}
	if peak == 0 {
		if p, err := s.readPeakFile(ctx); err == nil {
			peak = p
		} else {
			peak = usage
		}
	}
	if lim := s.cfg.Memory; lim > 0 {
		peak = min(peak, lim)
	}
	return cpu, max(peak, 0), nil
}

// parseStats reads the CPU time, the peak memory (0: not reported) and the memory in use from
// the engine's stats answer.
func parseStats(r io.Reader) (cpu time.Duration, peak, usage int64, err error) {
	var st container.StatsResponse
	if err := json.NewDecoder(r).Decode(&st); err != nil {
		return 0, 0, 0, fmt.Errorf("decoding the sandbox's stats: %w", err)
	}
	const maxInt = uint64(1<<63 - 1)
	clamp := func(v uint64) int64 { return int64(min(v, maxInt)) }
	return time.Duration(clamp(st.CPUStats.CPUUsage.TotalUsage)), clamp(st.MemoryStats.MaxUsage), clamp(st.MemoryStats.Usage), nil
}

// readPeakFile reads cgroup v2's memory.peak inside the container, as initUser.
func (s *Sandbox) readPeakFile(ctx context.Context) (int64, error) {
	created, err := s.docker.ContainerExecCreate(ctx, s.id, container.ExecOptions{
		User: initUser, Cmd: []string{"/bin/cat", "/sys/fs/cgroup/memory.peak"}, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return 0, fmt.Errorf("reading memory.peak: %w", err)
	}
	att, err := s.docker.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return 0, fmt.Errorf("reading memory.peak: %w", err)
	}
	defer att.Close()
	out := &cappedBuffer{max: 64}
	if _, err := stdcopy.StdCopy(out, io.Discard, att.Reader); err != nil {
		return 0, fmt.Errorf("reading memory.peak: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out.buf.String()), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("reading memory.peak: not a size: %q", out.buf.String())
	}
	return n, nil
}

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/pkg/stdcopy"
)

// oomReadTimeout bounds one reading of the OOM counter.
const oomReadTimeout = 10 * time.Second

var oomKillLine = regexp.MustCompile(`(?m)^oom_kill \d+$`)

// OOMKills returns how many processes the kernel's OOM killer killed in the sandbox so far,
// whether or not the sandbox survived them. While the container runs it reads the counter of
// its memory cgroup (cgroup v2 memory.events, v1 memory.oom_control) through an exec as the
// container's own user (nobody, like its init), which the sandbox user can neither kill nor
// fool (the cgroup files are read-only). Not as root: in a sandbox made from an environment
// image, /bin/cat is whatever the repository's setup script left there. When that
// is impossible (the container stopped, or the pids limit leaves no room for one more process)
// it counts the engine's "oom" events for the container instead: a lower bound, since the
// engine may fold kills that come close together into one event.
func (s *Sandbox) OOMKills(ctx context.Context) (int, error) {
	n, err := s.readOOMCounter(ctx)
	if err == nil {
		return n, nil
	}
	m, evErr := s.oomEvents(ctx)
	if evErr != nil {
		return 0, fmt.Errorf("counting the sandbox's OOM kills: %w", errors.Join(err, evErr))
	}
	return m, nil
}

// OOMKillsNote is OOMKills as one sentence for a report: empty when no process was killed,
// or when the count cannot be read.
func (s *Sandbox) OOMKillsNote(ctx context.Context) string {
	n, err := s.OOMKills(ctx)
	switch {
	case err != nil || n == 0:
		return ""
	case n == 1:
		return fmt.Sprintf("1 process was killed for running out of memory (the sandbox's limit is %s).", FormatBytes(s.cfg.Memory))
	}
	return fmt.Sprintf("%d processes were killed for running out of memory (the sandbox's limit is %s).", n, FormatBytes(s.cfg.Memory))
}

// readOOMCounter reads the memory cgroup's oom_kill counter inside the container, as initUser.
func (s *Sandbox) readOOMCounter(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, oomReadTimeout)
	defer cancel()
	created, err := s.docker.ContainerExecCreate(ctx, s.id, container.ExecOptions{
		User:         initUser,
		Cmd:          []string{"/bin/cat", "/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"},
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return 0, fmt.Errorf("reading the memory cgroup: %w", err)
	}
	att, err := s.docker.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return 0, fmt.Errorf("reading the memory cgroup: %w", err)
	}
	defer att.Close()
	out := &cappedBuffer{max: 64 << 10}
	// One of the two files is missing (v1 or v2), so cat exits 1: only the output counts.
	if _, err := stdcopy.StdCopy(out, io.Discard, att.Reader); err != nil {
		return 0, fmt.Errorf("reading the memory cgroup: %w", err)
	}
	n, found := parseOOMCounter(out.buf.Bytes())
	if !found {
		return 0, errors.New("reading the memory cgroup: no oom_kill counter (kernel older than 4.13, or the exec did not run)")
	}
	return n, nil
}

// parseOOMCounter is parseOOMKills that also says whether a counter was there at all.
func parseOOMCounter(b []byte) (int, bool) {
	return parseOOMKills(b), oomKillLine.Match(b)
}

// oomEvents counts the engine's "oom" events for the container since it was created.
func (s *Sandbox) oomEvents(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, oomReadTimeout)
	defer cancel()
	info, err := s.docker.ContainerInspect(ctx, s.id)
	if err != nil {
		return 0, fmt.Errorf("inspecting the sandbox: %w", err)
	}
	since, err := time.Parse(time.RFC3339Nano, info.Created)
	if err != nil {
		return 0, fmt.Errorf("reading the sandbox's creation time %q: %w", info.Created, err)
	}
	msgs, errs := s.docker.Events(ctx, events.ListOptions{
		Since:   strconv.FormatInt(since.Unix()-1, 10),
		Until:   strconv.FormatInt(time.Now().Unix()+1, 10),
		Filters: filters.NewArgs(filters.Arg("container", s.id), filters.Arg("event", string(events.ActionOOM))),
	})
	n := 0
	for {
		select {
		case <-msgs:
			n++
		case err := <-errs:
			if errors.Is(err, io.EOF) {
				if n == 0 && info.State != nil && info.State.OOMKilled {
					n = 1
				}
				return n, nil
			}
			return n, fmt.Errorf("reading the engine's events: %w", err)
		}
	}
}

// StopReason says, in one sentence for a report, why the sandbox was stopped before Close: its
// workspace went past the disk limit, its disk use could no longer be measured, or it reached
// its lifetime. It is empty when none of these happened (a sandbox that died for memory is
// reported by OOMKills and OOMKillsNote).
func (s *Sandbox) StopReason(ctx context.Context) string {
	s.stopMu.Lock()
	reason := s.stopReason
	s.stopMu.Unlock()
	if reason != "" {
		select {
		case <-s.stopped:
		case <-ctx.Done():
		}
		return reason
	}
	info, err := s.docker.ContainerInspect(ctx, s.id)
	if err != nil || info.State == nil || info.State.Running || info.State.OOMKilled || info.State.ExitCode != 0 {
		return ""
	}
	started, err1 := time.Parse(time.RFC3339Nano, info.State.StartedAt)
	finished, err2 := time.Parse(time.RFC3339Nano, info.State.FinishedAt)
	if err1 != nil || err2 != nil || finished.Sub(started) < s.cfg.Lifetime-time.Second {
		return ""
	}
	return fmt.Sprintf("The sandbox reached its lifetime of %s and ended by itself.", s.cfg.Lifetime)
}

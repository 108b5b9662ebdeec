package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"
)

// The workspace's disk limit (Config.Disk).
//
// Docker gives an anonymous volume no size limit, and the engines frognano targets cannot give
// it one cheaply: a size-limited volume needs xfs project quotas, a tmpfs would be charged to
// the memory limit. So a watcher measures the workspace and kills the sandbox past the limit.
//
// The watcher is a second container, not an exec in the sandbox: a process in the sandbox runs
// as the sandbox user, which the model can kill, and any exec (even as root) needs a free slot
// under the sandbox's pids limit and cannot read a directory the model made unreadable
// (root has no capability there). The watcher has its own pid namespace and limits, runs as
// root with only CAP_DAC_READ_SEARCH (read any directory, change nothing), mounts the workspace
// volume read-only, has no network, and runs `du` each time the host asks on its stdin.
// Its stdin is the host's attached stream, so it ends when the host process dies; it also
// ends after the sandbox's lifetime.
//
// Precision: the host asks every diskCheckMin (250 ms), or four times as long as the last
// measurement took when that is longer (du then uses a fifth of the watcher's half CPU), but
// never more than diskCheckMax (5 s) apart. So the workspace can go past the limit by what the
// sandbox writes in about one interval, one measurement and the kill. On the development
// machine (2 shared cores, ext4, writes landing in the page cache) a writer that never stops
// left 68 to 218 MiB in the workspace under a 64 MiB limit, most often 70 to 110 MiB: treat the
// limit as "stopped within a few hundred MiB past it". Measuring takes time in proportion to the
// number of files (200,000 empty files: about 2 s here), so in a workspace of very many files a
// writer has several seconds between two verdicts; the number of files (inodes, FROGNANO_SANDBOX_FILES)
// is measured with the bytes, as du counts them (hard links once).
// Usage is what du counts: allocated blocks, hard links once, so a sparse file counts what it
// really takes.
//
// Failing closed: when the watcher cannot answer (it was OOM-killed by a hard-link bomb, a
// measurement took longer than diskMeasureTimeout, its stream broke), the sandbox is killed too,
// with that reason.
const (
	diskCheckMin       = 250 * time.Millisecond
	diskCheckMax       = 5 * time.Second
	diskMeasureTimeout = time.Minute
	watcherMemory      = 64 << 20
	watcherPids        = 16
	watcherNanoCPUs    = 5e8
	// watcherExtraLife lets the sandbox end by its lifetime before its watcher does, so that a
	// lifetime's end is not mistaken for a failure of the watcher.
	watcherExtraLife = time.Minute
	// watcherScript answers each line on stdin with du's totals of the workspace (bytes of
	// allocated blocks) and a line holding a dot; an error leaves the number out.
	watcherScript = `while read -r _; do du -sxB1 /workspace 2>/dev/null; echo "i$(du -sx --inodes /workspace 2>/dev/null)"; echo .; done`
)

// watcherEntrypoint is a disk watcher's entrypoint for a lifetime of life seconds.
func watcherEntrypoint(life string) []string {
	return []string{"timeout", "-s", "KILL", life, "/bin/sh", "-c", watcherScript}
}

// IsWatcherEntrypoint reports whether ep is the entrypoint of a disk watcher (of any
// lifetime): the one container frognano gives DAC_READ_SEARCH, which dockerproxy grants to
// that command alone.
func IsWatcherEntrypoint(ep []string) bool {
	if len(ep) != 7 || ep[3] == "" || strings.Trim(ep[3], "0123456789") != "" {
		return false
	}
	return slices.Equal(ep, watcherEntrypoint(ep[3]))
}

// diskWatcher is the watcher container of one sandbox and the host's side of its stream.
type diskWatcher struct {
	id     string
	volume string // the workspace volume it measures
	conn   types.HijackedResponse
	stop   chan struct{} // closed by close: the end of the stream is then expected
	once   sync.Once
	done   chan struct{} // closed when the watching goroutine returned
}

// startDiskWatcher creates and starts the disk watcher of the sandbox that info describes, and
// the goroutine that drives it. On error, whatever was created is left in s.watch for Close to
// remove.
func (s *Sandbox) startDiskWatcher(ctx context.Context, info container.InspectResponse) error {
	volume := ""
	for _, m := range info.Mounts {
		if m.Type == mount.TypeVolume && m.Destination == s.cfg.Workdir {
			volume = m.Name
		}
	}
	if volume == "" {
		return fmt.Errorf("the sandbox has no volume at %s", s.cfg.Workdir)
	}
	w := &diskWatcher{volume: volume, stop: make(chan struct{}), done: make(chan struct{})}
	s.watch = w

	labels := make(map[string]string, len(info.Config.Labels)+1)
	for k, v := range info.Config.Labels {
		labels[k] = v
	}
	labels[LabelWatches] = s.id
	// Not the sandbox's purpose: whoever looks for "the agent sandbox" must not find this one.
	labels[LabelPurpose] = info.Config.Labels[LabelPurpose] + "-disk-watcher"
	pids := int64(watcherPids)
	life := strconv.FormatInt(int64((s.cfg.Lifetime+watcherExtraLife).Round(time.Second)/time.Second), 10)
	ccfg := &container.Config{
		Image:      s.cfg.BaseImage,
		User:       "0:0",
		WorkingDir: "/",
		// An entrypoint of its own: the image's, if any, is not meant to run as root.
		Entrypoint:      watcherEntrypoint(life),
		Env:             []string{"LC_ALL=C"},
		Labels:          labels,
		NetworkDisabled: true,
		OpenStdin:       true,
		StdinOnce:       true, // the host's stream closing (the host died) ends the watcher
		AttachStdin:     true,
		AttachStdout:    true,
		StopSignal:      "SIGKILL",
	}
	hcfg := &container.HostConfig{
		NetworkMode:    network.NetworkNone,
		CapDrop:        []string{"ALL"},
		CapAdd:         []string{"DAC_READ_SEARCH"},
		SecurityOpt:    []string{"no-new-privileges:true"},
		ReadonlyRootfs: true,
		IpcMode:        container.IPCModePrivate,
		LogConfig:      container.LogConfig{Type: "none"},
		Mounts: []mount.Mount{{
			Type: mount.TypeVolume, Source: volume, Target: "/workspace", ReadOnly: true,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true},
		}},
		Resources: container.Resources{
			Memory:     watcherMemory,
			MemorySwap: watcherMemory,
			NanoCPUs:   watcherNanoCPUs,
			PidsLimit:  &pids,
		},
	}
	// Detached from ctx for the same reason as the sandbox's own create (see New).
	createCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	created, err := s.docker.ContainerCreate(createCtx, ccfg, hcfg, nil, nil, s.name+"-disk")
	cancel()
	if err != nil {
		return fmt.Errorf("creating the watcher container: %w", err)
	}
	w.id = created.ID
	if err := ctx.Err(); err != nil {
		return err
	}
	// Attached before the start, so that the watcher never runs without the host's stream.
	w.conn, err = s.docker.ContainerAttach(context.WithoutCancel(ctx), w.id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true})
	if err != nil {
		return fmt.Errorf("attaching to the watcher: %w", err)
	}
	if err := s.docker.ContainerStart(ctx, w.id, container.StartOptions{}); err != nil {
		w.conn.Close()
		return fmt.Errorf("starting the watcher: %w", err)
	}
	go s.watchDisk(w)
	return nil
}

// diskReading is one answer of the watcher.
type diskReading struct {
	used  int64
	files int64 // -1 when du printed no file count this time
	ok    bool  // du printed the byte total
}

// watchDisk asks for a measurement, waits for it, and kills the sandbox past the limit or when
// the watcher fails, until close.
func (s *Sandbox) watchDisk(w *diskWatcher) {
	defer close(w.done)
	readings := make(chan diskReading)
	go w.read(readings)
	for {
		start := time.Now()
		_ = w.conn.Conn.SetWriteDeadline(start.Add(diskMeasureTimeout))
		if _, err := w.conn.Conn.Write([]byte("\n")); err != nil {
			s.watcherFailed(w, fmt.Sprintf("the disk watcher could not be asked (%v)", err))
			return
		}
		timer := time.NewTimer(diskMeasureTimeout)
		var r diskReading
		var ok bool
		select {
		case <-w.stop:
			timer.Stop()
			return
		case r, ok = <-readings:
			timer.Stop()
		case <-timer.C:
			s.watcherFailed(w, fmt.Sprintf("measuring the workspace took longer than %s", diskMeasureTimeout))
			return
		}
		switch {
		case !ok:
			s.watcherFailed(w, "the disk watcher stopped")
			return
		case !r.ok:
			s.watcherFailed(w, "the disk watcher could not measure the workspace")
			return
		case r.used > s.cfg.Disk:
			s.stop(fmt.Sprintf("The workspace reached %s, past the sandbox's disk limit of %s: every process in the sandbox was killed.",
				FormatBytes(r.used), FormatBytes(s.cfg.Disk)))
			return
		case r.files > s.cfg.Files:
			s.stop(fmt.Sprintf("The workspace reached %d files, past the sandbox's limit of %d files: every process in the sandbox was killed.",
				r.files, s.cfg.Files))
			return
		}
		wait := min(max(4*time.Since(start), diskCheckMin), diskCheckMax)
		select {
		case <-w.stop:
			return
		case <-time.After(wait):
		}
	}
}

// read parses the watcher's answers until its stream ends, then closes out.
func (w *diskWatcher) read(out chan<- diskReading) {
	defer close(out)
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, io.Discard, w.conn.Reader)
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	sc := bufio.NewScanner(pr)
	var cur diskReading
	for sc.Scan() {
		line := sc.Text()
		if line == "." {
			select {
			case out <- cur:
			case <-w.stop:
				return
			}
			cur = diskReading{}
			continue
		}
		// du -s prints "BYTES\t/workspace"; the script prints the inode total after an "i".
		// du prints its total even when it exits 1 because a file vanished while it walked the
		// tree (a test run's temporary files), so a total is used whatever du's status.
		inodes := strings.HasPrefix(line, "i")
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(line, "i"), "\t/workspace"), 10, 64)
		switch {
		case err != nil || n < 0:
		case inodes && cur.ok:
			cur.files = n
		case !inodes:
			cur = diskReading{used: n, files: -1, ok: true}
		}
	}
}

// watcherFailed fails closed: a sandbox whose disk use can no longer be measured is killed,
// unless it already stopped by itself (its lifetime ended) or is being closed.
func (s *Sandbox) watcherFailed(w *diskWatcher, why string) {
	select {
	case <-w.stop:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if info, err := s.docker.ContainerInspect(ctx, s.id); err == nil && info.State != nil && !info.State.Running {
		return
	}
	s.stop(fmt.Sprintf("The sandbox's disk use could no longer be measured (%s): every process in the sandbox was killed.", why))
}

// stop kills every process of the sandbox (its PID 1, so the whole pid namespace) and records
// why; the first reason wins. The reason is visible at once, and StopReason returns it only
// once the container no longer runs.
func (s *Sandbox) stop(reason string) {
	s.stopMu.Lock()
	if s.stopReason != "" {
		s.stopMu.Unlock()
		return
	}
	s.stopReason = reason
	s.stopMu.Unlock()
	defer close(s.stopped)
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	waitc, errc := s.docker.ContainerWait(ctx, s.id, container.WaitConditionNotRunning)
	if err := s.docker.ContainerKill(ctx, s.id, "KILL"); err != nil {
		return // already stopped or removed
	}
	select {
	case <-waitc:
	case <-errc:
	}
}

// closeWatcher ends the watching goroutine and removes the watcher container.
func (s *Sandbox) closeWatcher(w *diskWatcher) error {
	w.once.Do(func() { close(w.stop) })
	var err error
	if w.id != "" {
		if err = removeContainer(s.docker, w.id, false); err != nil {
			err = fmt.Errorf("removing the disk watcher of %s: %w", s.name, err)
		}
	}
	if w.conn.Conn != nil {
		w.conn.Close()
	}
	return err
}

// FormatBytes renders a size for people: 4.0 GiB, 64.0 MiB, 512 B.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// Defaults of Exec.
const (
	DefaultExecTimeout = 10 * time.Minute
	DefaultMaxOutput   = 1 << 20

	// killGrace is how long `timeout` waits after SIGTERM before SIGKILL.
	killGrace = 5 * time.Second
	// hostGrace is how much longer than the in-container timeout the host waits before it gives
	// up on an exec whose `timeout` did not end it (an image without coreutils, a stuck process).
	hostGrace = 15 * time.Second
	// execIDEnv marks every process of one Exec, so that a cancelled Exec can be killed with its
	// whole process tree by a second exec (the Engine API has no way to kill an exec).
	execIDEnv = "FROGNANO_EXEC_ID"
)

// ExecResult is what one Exec produced. Stdout and Stderr hold at most maxOutput bytes each.
type ExecResult struct {
	ExitCode       int
	Stdout, Stderr []byte
	Truncated      bool // some output was discarded past maxOutput
	TimedOut       bool // the command ran out of time and was killed
	Duration       time.Duration
}

// Exec runs argv as the sandbox user in the workdir, feeding it stdin when not nil. It is killed
// with its whole process group after timeout (SIGTERM, then SIGKILL 5 s later), and output past
// maxOutput bytes per stream is discarded. A zero timeout or maxOutput means the default.
// A non-zero exit code is not an error: err is set only when the command could not be run, or
// ctx ended (the command is then killed).
func (s *Sandbox) Exec(ctx context.Context, argv []string, stdin io.Reader, timeout time.Duration, maxOutput int64) (ExecResult, error) {
	return s.Run(ctx, ExecSpec{Argv: argv, Stdin: stdin, Timeout: timeout, MaxOutput: maxOutput})
}

// ExecSpec is one command for Run.
type ExecSpec struct {
	Argv  []string
	User  string   // numeric UID:GID; default the sandbox user (Config.User)
	Env   []string // added to the container's environment for this command only
	Stdin io.Reader
	// Timeout and MaxOutput are Exec's (zero: the defaults).
	Timeout   time.Duration
	MaxOutput int64
	// Output, when set, receives stdout and stderr together as they come, instead of
	// ExecResult's Stdout and Stderr (which stay empty); MaxOutput does not apply.
	Output io.Writer
}

// Run is Exec with a user, an environment and an output stream of the caller's choosing.
func (s *Sandbox) Run(ctx context.Context, spec ExecSpec) (ExecResult, error) {
	argv, stdin, timeout, maxOutput := spec.Argv, spec.Stdin, spec.Timeout, spec.MaxOutput
	if len(argv) == 0 {
		return ExecResult{}, errors.New("running a command in the sandbox: empty argv")
	}
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutput
	}
	user := spec.User
	if user == "" {
		user = s.cfg.User
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	mark := hex.EncodeToString(rnd[:])
	// GNU timeout makes itself a process group leader and signals the whole group on expiry, so
	// the command's children die with it.
	cmd := append([]string{"timeout", "--kill-after=" + seconds(killGrace), seconds(timeout)}, argv...)
	created, err := s.docker.ContainerExecCreate(ctx, s.id, container.ExecOptions{
		User:         user,
		WorkingDir:   s.cfg.Workdir,
		Env:          append(append([]string(nil), spec.Env...), execIDEnv+"="+mark),
		Cmd:          cmd,
		AttachStdin:  stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return ExecResult{}, fmt.Errorf("creating exec %q in the sandbox: %w", argv[0], err)
	}
	att, err := s.docker.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		// Abandoned mid-request, the engine may have started it anyway.
		s.killMarked(user, mark)
		return ExecResult{}, fmt.Errorf("starting exec %q in the sandbox: %w", argv[0], err)
	}
	defer att.Close()
	start := time.Now()
	if stdin != nil {
		go func() {
			_, _ = io.Copy(att.Conn, stdin)
			_ = att.CloseWrite()
		}()
	}
	stdout, stderr := &cappedBuffer{max: maxOutput}, &cappedBuffer{max: maxOutput}
	var outW, errW io.Writer = stdout, stderr
	if spec.Output != nil {
		outW, errW = spec.Output, spec.Output
	}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(outW, errW, att.Reader)
		copied <- err
	}()
	hostTimer := time.NewTimer(timeout + killGrace + hostGrace)
	defer hostTimer.Stop()

	res := ExecResult{ExitCode: -1}
	finish := func() {
		res.Stdout, res.Stderr = stdout.buf.Bytes(), stderr.buf.Bytes()
		res.Truncated = stdout.truncated || stderr.truncated
		res.Duration = time.Since(start)
	}
	select {
	case err := <-copied:
		if err != nil {
			finish()
			return res, fmt.Errorf("reading the output of %q from the sandbox: %w", argv[0], err)
		}
	case <-ctx.Done():
		s.killMarked(user, mark)
		att.Close()
		<-copied
		finish()
		return res, fmt.Errorf("running %q in the sandbox: %w", argv[0], ctx.Err())
	case <-hostTimer.C:
		s.killMarked(user, mark)
		att.Close()
		<-copied
		finish()
		res.TimedOut = true
		return res, nil
	}
	finish()
	code, err := s.execExitCode(ctx, created.ID)
	if err != nil {
		return res, fmt.Errorf("reading the exit code of %q in the sandbox: %w", argv[0], err)
	}
	res.ExitCode = code
	// 124: timeout's SIGTERM ended it; 137: the SIGKILL after the grace period. The duration
	// check keeps a command that merely exits 124 from being reported as timed out.
	if (code == 124 || code == 137) && res.Duration >= timeout {
		res.TimedOut = true
	}
	return res, nil
}

// execExitCode waits for the Engine to record the exit of an exec whose streams have ended
// (it can lag the end of the stream by a moment) and returns its exit code.
func (s *Sandbox) execExitCode(ctx context.Context, execID string) (int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		info, err := s.docker.ContainerExecInspect(ctx, execID)
		if err != nil {
			return -1, err
		}
		if !info.Running {
			return info.ExitCode, nil
		}
		if time.Now().After(deadline) {
			return -1, errors.New("the exec still runs after its output ended")
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// killMarked kills every process of the container carrying the Exec's mark in its environment,
// running as the user the Exec ran as.
// Best effort: it runs with its own short timeout because ctx may already be done, and the
// container's removal kills everything anyway.
func (s *Sandbox) killMarked(user, mark string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const script = `for d in /proc/[0-9]*; do
  if tr '\0' '\n' <"$d/environ" 2>/dev/null | grep -qx "$1"; then kill -KILL "${d#/proc/}" 2>/dev/null; fi
done`
	created, err := s.docker.ContainerExecCreate(ctx, s.id, container.ExecOptions{
		User: user,
		Cmd:  []string{"/bin/sh", "-c", script, "sh", execIDEnv + "=" + mark},
	})
	if err != nil {
		return
	}
	_ = s.docker.ContainerExecStart(ctx, created.ID, container.ExecStartOptions{Detach: true})
}

// cgroupOOMKills is OOMKills, 0 when it cannot be read.
func (s *Sandbox) cgroupOOMKills(ctx context.Context) int {
	n, _ := s.OOMKills(ctx)
	return n
}

// parseOOMKills sums the "oom_kill N" lines of cgroup memory files.
func parseOOMKills(b []byte) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "oom_kill" {
			if v, err := strconv.Atoi(f[1]); err == nil && v > 0 {
				n += v
			}
		}
	}
	return n
}

// seconds formats d for coreutils' timeout.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s"
}

// cappedBuffer keeps the first max bytes written to it and discards the rest, so that a command
// printing without end costs bounded memory while it is drained.
type cappedBuffer struct {
	buf       bytes.Buffer
	max       int64
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	room := c.max - int64(c.buf.Len())
	if int64(len(p)) <= room {
		c.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.truncated = true
	return len(p), nil
}

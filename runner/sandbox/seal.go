package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/frognano/frognano/runner/executor"
)

// The seal check of a setup container: after setup, before the commit, what the container's
// own layer holds (exactly what the environment image will hold) is searched for the
// operator's setup values, so that an environment that would hand one to the model is never
// made. How it is done, and why:
//
//   - Which paths: the engine's list of the container's changes (GET /containers/{id}/changes),
//     computed by the engine outside the container from the layer itself, the same list its
//     commit is made from. Nothing setup did can hide a path from it or add one; a path a mount
//     of the container hides is still listed, and the check reports it as unreadable instead of
//     reading what the mount shows. The other way, files whose ctime is after setup's start,
//     needs a walk of the whole image from inside (the base image's files too, every time) and
//     cannot see what a mount hides.
//   - With nothing of setup running: the container is stopped with SIGKILL (the kernel ends its
//     whole PID namespace: a process setup left, however it hid, is gone, and cannot rewrite a
//     file while it is read), frognano's executor is copied in again over whatever setup put at
//     its path, and the container is started again. Its own program is then that executor,
//     idle (setup.go), never a binary of the image: nothing setup wrote runs as root.
//   - Reading: `frognano-executor -seal`, run as root with setup's capabilities (a 000-mode
//     file is read too), directly (not under the image's `timeout`), reads each path without
//     following a link, opens regular files only, skips holes, reads a hard-linked file once,
//     within a byte budget (the layer's bound) and a deadline, and prints only path indexes and
//     forms (executor.Seal). The host bounds it again: past its time it stops the container.
//     Streaming the bytes out to search them on the host was the other way: it would send a
//     few hundred MB through the engine's API for a typical environment, where the search
//     sends a few lines.

// sealGrace is how much longer than the check's own deadline the host waits for its answer.
const sealGrace = 30 * time.Second

// maxSealOutput bounds the check's answer: at most 100 findings and the end line.
const maxSealOutput = 1 << 20

// SealReport is what the seal check found.
type SealReport struct {
	Paths  []string            // the paths the layer holds (deletions left out), as the engine listed them
	Lines  []executor.SealLine // findings and problems; Path indexes Paths
	End    executor.SealLine   // the last line: Done, or Stopped and why
	Took   time.Duration       // the whole check: the stop, the list, the restart and the search
	Listed time.Duration       // of which the stop, the layer's measurement and the engine's list
	Search time.Duration       // and the search itself, after the copy of the executor and the restart
	Kinds  map[string]int      // how many paths of each kind the engine listed ("added", "changed")
}

// Seal checks the setup container's own layer for values (the operator's setup values) with
// nothing of setup running, within timeout; see the comment above. It ends every process of
// the container first, and leaves it running with only the idle executor, ready for Commit.
// A layer past the setup's bound is a *LimitError, as in Commit. An error is the machinery's
// (the engine, the copy); what the check could not do in the layer (a path it could not read,
// its deadline) is in the report.
func (s *Sandbox) Seal(ctx context.Context, values []string, timeout time.Duration) (*SealReport, error) {
	start := time.Now()
	zero := 0
	if err := s.docker.ContainerStop(ctx, s.id, container.StopOptions{Signal: "SIGKILL", Timeout: &zero}); err != nil {
		return nil, fmt.Errorf("stopping the setup container to end what setup left running: %w", err)
	}
	if s.setupLayer > 0 {
		why, err := s.layerOver(ctx)
		if err != nil {
			return nil, err
		}
		if why != "" {
			return nil, &LimitError{Reason: why}
		}
	}
	changes, err := s.docker.ContainerDiff(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("listing what setup changed in the container: %w", err)
	}
	s.layerMeasured = s.setupLayer > 0 // nothing that writes runs in it again before Commit
	rep := &SealReport{Kinds: map[string]int{}, Listed: time.Since(start)}
	for _, c := range changes {
		switch c.Kind {
		case container.ChangeDelete:
			continue // nothing to read; a deletion keeps nothing of a value
		case container.ChangeAdd:
			rep.Kinds["added"]++
		default:
			rep.Kinds["changed"]++
		}
		rep.Paths = append(rep.Paths, c.Path)
	}
	s.callMu.Lock()
	s.copied = false
	err = s.copyExecutor(ctx)
	s.callMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("putting the seal check into the setup container: %w", err)
	}
	if err := s.docker.ContainerStart(ctx, s.id, container.StartOptions{}); err != nil {
		return nil, fmt.Errorf("starting the setup container again for the seal check: %w", err)
	}
	req, err := json.Marshal(executor.SealRequest{Values: values, Paths: rep.Paths, MaxBytes: s.setupLayer,
		Seconds: int(timeout / time.Second)})
	if err != nil {
		return nil, fmt.Errorf("encoding the seal check's request: %w", err)
	}
	searched := time.Now()
	out, stderr, err := s.runOwn(ctx, []string{executorPath, "-seal"}, req, timeout+sealGrace)
	if err != nil {
		return nil, err
	}
	rep.Search = time.Since(searched)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), maxSealOutput)
	for sc.Scan() {
		var l executor.SealLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Path < 0 || l.Path >= max(len(rep.Paths), 1) {
			return nil, fmt.Errorf("the seal check answered a line it cannot have written: %.200q", sc.Bytes())
		}
		if l.Done || l.Stopped != "" {
			rep.End = l
			break
		}
		rep.Lines = append(rep.Lines, l)
	}
	if !rep.End.Done && rep.End.Stopped == "" {
		rep.End.Stopped = "the check ended without its last line"
		if len(stderr) > 0 {
			rep.End.Stopped += ": " + string(bytes.TrimSpace(stderr))
		}
	}
	rep.Took = time.Since(start)
	return rep, nil
}

// runOwn runs frognano's executor (argv) as root in the setup container, directly, with stdin,
// and returns its stdout and stderr (each at most maxSealOutput). Past timeout the container is
// stopped, which ends it: an error.
func (s *Sandbox) runOwn(ctx context.Context, argv []string, stdin []byte, timeout time.Duration) ([]byte, []byte, error) {
	created, err := s.docker.ContainerExecCreate(ctx, s.id, container.ExecOptions{
		User: SetupUser, WorkingDir: "/", Cmd: argv,
		AttachStdin: true, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the seal check in the setup container: %w", err)
	}
	att, err := s.docker.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("starting the seal check in the setup container: %w", err)
	}
	defer att.Close()
	go func() {
		_, _ = io.Copy(att.Conn, bytes.NewReader(stdin))
		_ = att.CloseWrite()
	}()
	stdout, stderr := &cappedBuffer{max: maxSealOutput}, &cappedBuffer{max: maxSealOutput}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, att.Reader)
		copied <- err
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err = <-copied:
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("the seal check did not answer within %s", timeout)
	}
	if err != nil {
		zero := 0
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		_ = s.docker.ContainerStop(stopCtx, s.id, container.StopOptions{Signal: "SIGKILL", Timeout: &zero})
		att.Close()
		<-copied
		return nil, nil, fmt.Errorf("running the seal check: %w", err)
	}
	code, err := s.execExitCode(ctx, created.ID)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("reading the seal check's exit status: %w", err)
	case code != 0:
		return nil, nil, errors.New("the seal check failed: " + string(bytes.TrimSpace(stderr.buf.Bytes())))
	case stdout.truncated:
		return nil, nil, fmt.Errorf("the seal check answered more than %d bytes", maxSealOutput)
	}
	return stdout.buf.Bytes(), stderr.buf.Bytes(), nil
}

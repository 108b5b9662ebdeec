package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/frognano/frognano/runner/executor"
)

// The network observer (executor.Observe) runs beside the executor in the agent's sandbox as
// root without capabilities: out of the sandbox user's reach (it cannot signal, ptrace or
// impersonate it, TestObserverOutOfReach) and listening on the sandbox's only nameserver before
// the model's first command. The host asks it, after every Bash call, what happened during the
// call (a mark), and once at the end of the agent phase for all it saw (NetworkReport), before
// Quiesce ends every process.

const (
	// maxObserverLine bounds one line from the observer: its report of MaxObservedQuestions
	// keys of MaxObservedQuestionBytes each takes about 120 KB.
	maxObserverLine = 1 << 20
	// markTimeout and reportTimeout bound the wait for the observer's answers: it answers at
	// once unless a flood of questions keeps it busy, and then the run must not wait on it.
	markTimeout   = 2 * time.Second
	reportTimeout = 10 * time.Second
	// maxRecordedCalls and maxRecordedCommand bound what is kept of the Bash calls.
	maxRecordedCalls   = 1000
	maxRecordedCommand = 4 << 10
)

// BashCall is what the host knows of one Bash call from its own side of the sandbox: the
// command it sent (as the executor read it), the exit status the executor's protocol carried
// (never the observation's text), and what the observer counted while it ran.
type BashCall struct {
	Command string // at most maxRecordedCommand bytes
	// ExitCode is nil when the command did not run to its end (a timeout, or it could not start).
	ExitCode *int
	// Observed is false when the observer could not be asked (not running, or disturbed):
	// the counts below are then unknown, not zero.
	Observed bool
	Lookups  int // DNS lookups the observer counted during the call
	NoRoute  int // packets the kernel had no route for during the call
	// Questions are indices into NetworkReport.Observer.Keys of the questions asked during the
	// call (at most a few); MoreQuestions counts the others.
	Questions     []int
	MoreQuestions int
}

// NetworkReport is what the agent's sandbox observed of its network use.
type NetworkReport struct {
	// Observed is true when the observer ran from the model's first command to the report.
	// Otherwise Why says what went wrong, and the counts are only what was seen until then.
	Observed bool
	Why      string
	Observer executor.ObserverReport
	Calls    []BashCall
	// CallsDropped counts the Bash calls past maxRecordedCalls.
	CallsDropped int
}

// observerConn is the open stream to the observer.
type observerConn struct {
	execID  string
	att     types.HijackedResponse
	lines   chan []byte
	done    chan struct{}
	readErr error
	stderr  *stderrBuffer
	once    sync.Once
	stop    chan struct{}

	mu     sync.Mutex // one request at a time
	seq    uint64
	broken string // why it can no longer be asked (its stream ended); set once
	late   int    // requests it did not answer in time

	// Guarded by Sandbox.callMu.
	last     executor.ObserverMark
	calls    []BashCall
	dropped  int
	notStart string // why it did not start
}

func (o *observerConn) close() {
	o.once.Do(func() {
		close(o.stop)
		if o.att.Conn != nil {
			o.att.Close()
		}
	})
}

// StartNetworkObserver starts the network observer in the sandbox, as root without
// capabilities, and waits until it listens. It must be called before StartExecutor: the model's
// commands run only through the executor, so none can hold the nameserver's port first. When it
// fails the sandbox stays usable, and NetworkReport says why nothing was observed.
func (s *Sandbox) StartNetworkObserver(ctx context.Context) error {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	if s.obs.Load() != nil || s.exe.Load() != nil {
		return errors.New("starting the network observer: it must start once, before the executor")
	}
	o, err := s.startObserver(ctx)
	if err != nil {
		o = &observerConn{notStart: err.Error(), stop: make(chan struct{})}
	}
	s.obs.Store(o)
	if s.isClosed() {
		o.close() // Close ran meanwhile and could not see o
	}
	return err
}

func (s *Sandbox) startObserver(ctx context.Context) (*observerConn, error) {
	if err := s.copyExecutor(ctx); err != nil {
		return nil, err
	}
	created, err := s.docker.ContainerExecCreate(ctx, s.id, container.ExecOptions{
		// Root, with the container's capabilities (none) and no-new-privileges: the sandbox
		// user cannot signal or ptrace a process of another user (TestObserverOutOfReach).
		User:         "0:0",
		WorkingDir:   "/",
		Cmd:          []string{executorPath, "-observe-network"},
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the network observer exec: %w", err)
	}
	att, err := s.docker.ContainerExecAttach(context.WithoutCancel(ctx), created.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, fmt.Errorf("attaching to the network observer: %w", err)
	}
	o := &observerConn{execID: created.ID, att: att, lines: make(chan []byte, 1), done: make(chan struct{}),
		stop: make(chan struct{}), stderr: &stderrBuffer{headMax: stderrHead, tailMax: stderrTail}}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, o.stderr, att.Reader)
		pw.CloseWithError(err)
	}()
	go func() {
		defer close(o.done)
		br := bufio.NewReaderSize(pr, 64<<10)
		for {
			line, err := readLine(br, maxObserverLine)
			if err != nil {
				o.readErr = err
				pr.CloseWithError(err)
				return
			}
			select {
			case o.lines <- line:
			case <-o.stop:
				return
			}
		}
	}()
	wait, cancel := context.WithTimeout(ctx, reportTimeout)
	defer cancel()
	line, err := o.next(wait)
	if err != nil {
		o.close()
		return nil, fmt.Errorf("starting the network observer: %w%s", err, o.stderrNote())
	}
	var ready executor.ObserverReady
	if err := strictJSON(line, &ready); err != nil || !ready.Observing {
		o.close()
		if ready.Error != "" {
			return nil, fmt.Errorf("starting the network observer: %s", ready.Error)
		}
		return nil, fmt.Errorf("starting the network observer: unexpected first line %.200q", line)
	}
	return o, nil
}

func (o *observerConn) stderrNote() string {
	if t := o.stderr.Summary(300); t != "" {
		return fmt.Sprintf(" (stderr: %q)", t)
	}
	return ""
}

// next is the observer's next line.
func (o *observerConn) next(ctx context.Context) ([]byte, error) {
	select {
	case line := <-o.lines:
		return line, nil
	case <-o.done:
		select {
		case line := <-o.lines:
			return line, nil
		default:
		}
		if o.readErr == nil || errors.Is(o.readErr, io.EOF) {
			return nil, errors.New("its stream ended")
		}
		return nil, o.readErr
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ask sends op and decodes the answer into v, within timeout. An answer that does not come in
// time is counted (late) and skipped when it comes; a stream that ended, or a line that is not
// an answer, breaks the observer for good.
func (o *observerConn) ask(ctx context.Context, op string, timeout time.Duration, v any) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.broken != "" {
		return errors.New(o.broken)
	}
	fail := func(err error) error {
		o.broken = fmt.Sprintf("the network observer stopped answering (%s: %v%s); network use after that was not observed", op, err, o.stderrNote())
		o.close()
		return errors.New(o.broken)
	}
	o.seq++
	req, _ := json.Marshal(executor.ObserverRequest{Op: op, Seq: o.seq})
	if _, err := o.att.Conn.Write(append(req, '\n')); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	for {
		line, err := o.next(ctx)
		if err != nil && ctx.Err() != nil {
			o.late++
			return fmt.Errorf("the network observer did not answer %s within %s", op, timeout)
		}
		if err != nil {
			return fail(err)
		}
		var head struct {
			Seq uint64 `json:"seq"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return fail(fmt.Errorf("a line that is not an answer: %w", err))
		}
		if head.Seq != o.seq {
			continue // the late answer to an earlier request
		}
		if err := strictJSON(line, v); err != nil {
			return fail(fmt.Errorf("a line that is not an answer: %w", err))
		}
		return nil
	}
}

func strictJSON(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// recordBash keeps what the host knows of a Bash call that just ended: its command, its exit
// status from the protocol, and the observer's counts since the previous call. Called with
// callMu held.
func (s *Sandbox) recordBash(ctx context.Context, arguments string, exit *int) {
	o := s.obs.Load()
	if o == nil {
		return
	}
	if len(o.calls) == maxRecordedCalls {
		o.dropped++
		return
	}
	c := BashCall{Command: executor.BashCommand(arguments), ExitCode: exit}
	if len(c.Command) > maxRecordedCommand {
		c.Command = c.Command[:maxRecordedCommand]
	}
	if o.notStart == "" {
		var m executor.ObserverMark
		if err := o.ask(ctx, "mark", markTimeout, &m); err == nil && m.Error == "" {
			c.Observed = true
			c.Lookups = max(0, m.Lookups-o.last.Lookups)
			c.NoRoute = max(0, m.NoRoute-o.last.NoRoute)
			c.Questions, c.MoreQuestions = m.Touched, m.TouchedMore
			o.last = m
		}
	}
	o.calls = append(o.calls, c)
}

// NetworkReport asks the observer for everything it saw and returns it with the Bash calls.
// It is called once the agent loop has ended and before Quiesce (which ends the observer); a
// sandbox without an observer reports nothing observed.
func (s *Sandbox) NetworkReport(ctx context.Context) NetworkReport {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	o := s.obs.Load()
	if o == nil {
		return NetworkReport{Why: "no network observer was started in this sandbox"}
	}
	rep := NetworkReport{Calls: o.calls, CallsDropped: o.dropped}
	switch {
	case o.notStart != "":
		rep.Why = o.notStart
		return rep
	}
	var r executor.ObserverReport
	if err := o.ask(ctx, "report", reportTimeout, &r); err != nil {
		rep.Why = err.Error()
		return rep
	}
	if r.Error != "" {
		rep.Why = "the network observer could not report: " + r.Error
		return rep
	}
	rep.Observer = r
	rep.Observed = true
	if o.late > 0 {
		// Its counts are whole; only some calls' share of them is missing.
		rep.Why = fmt.Sprintf("the network observer answered %d of its requests late (a flood of questions kept it busy); the commands they were for have no counts of their own", o.late)
	}
	return rep
}

// closeObserver ends the host's side of the observer's stream, if there is one.
func (s *Sandbox) closeObserver() {
	if o := s.obs.Load(); o != nil {
		o.close()
	}
}

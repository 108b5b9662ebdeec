package executor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// MaxRequestBytes caps one request line. A Write of a multi-megabyte file fits; a longer
// line is answered with TooLargeObservation (and an empty id: it cannot be read) and skipped.
const MaxRequestBytes = 32 << 20

// TooLargeObservation answers a request line over MaxRequestBytes. A host that knows its
// request is too long can give it without sending the request.
var TooLargeObservation = fmt.Sprintf("ProtocolError: request line exceeds %d bytes", MaxRequestBytes)

// Serve writes a Ready line, then reads Requests (one JSON object per line) from in and
// writes one Response line per request to out, sequentially, until in reaches EOF or ctx
// ends. It returns nil on EOF and ctx.Err() when ctx ends (a running Bash command is
// killed first). A line that is not a valid Request is answered with an empty id and an
// observation starting "ProtocolError: ". Each Response echoes its request's id and nonce,
// is at most MaxResponseBytes long (an observation that would not fit is replaced by an
// Error) and is flushed before the next request is read, so the host can wait for exactly
// one answer per request. While a request runs, heartbeats (Response.Alive, with its id and
// nonce) come every HeartbeatInterval before its answer, never after it.
func Serve(ctx context.Context, in io.Reader, out io.Writer, workdir string, opts Options) error {
	abs, err := filepath.Abs(workdir)
	if err != nil {
		return fmt.Errorf("resolving workdir %q: %w", workdir, err)
	}
	var sw *sweeper
	if opts.KillLeftovers {
		if sw, err = newSweeper(); err != nil {
			return fmt.Errorf("preparing to kill leftover processes: %w", err)
		}
	}
	w := bufio.NewWriter(out)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// encode leaves v's line, "\n" included, in buf.
	encode := func(v any) error {
		buf.Reset()
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encoding response: %w", err)
		}
		return nil
	}
	send := func() error {
		if _, err := w.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("writing response: %w", err)
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("writing response: %w", err)
		}
		return nil
	}
	if err := encode(Ready{Ready: true, Workdir: abs, PID: os.Getpid()}); err != nil {
		return err
	}
	if err := send(); err != nil {
		return err
	}

	// Reading happens in its own goroutine so that ctx can end Serve while a read blocks;
	// that goroutine then stays blocked until in is closed (the process exits anyway).
	lines := make(chan lineResult)
	stop := make(chan struct{})
	defer close(stop)
	go readLines(in, lines, stop)

	for {
		var lr lineResult
		select {
		case <-ctx.Done():
			return ctx.Err()
		case lr = <-lines:
		}
		if lr.err != nil {
			if errors.Is(lr.err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading request: %w", lr.err)
		}
		resp, tool := handleLine(ctx, lr, abs, sw, func(id, nonce string) func() { return heartbeat(w, id, nonce) })
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := encode(resp); err != nil {
			return err
		}
		if n := buf.Len(); n > MaxResponseBytes {
			err := encode(Response{ID: resp.ID, Nonce: resp.Nonce, Killed: resp.Killed, ExitCode: resp.ExitCode, Error: fmt.Sprintf(
				"the %.40q observation takes %d bytes as a response line, over the %d bytes a line may carry (more than the model's whole context)",
				tool, n, MaxResponseBytes)})
			if err != nil {
				return err
			}
		}
		if err := send(); err != nil {
			return err
		}
	}
}

type lineResult struct {
	line     []byte
	tooLarge bool
	err      error // io.EOF at a clean end of input
}

// handleLine answers one request line; tool is the tool it named, for messages. While the
// tool runs, the heartbeats beat starts for the request's id and nonce are written; beat
// returns a function that stops them and returns once the last one is written.
func handleLine(ctx context.Context, lr lineResult, workdir string, sw *sweeper, beat func(id, nonce string) (stop func())) (Response, string) {
	if lr.tooLarge {
		return Response{Observation: TooLargeObservation}, ""
	}
	var req Request
	if err := json.Unmarshal(lr.line, &req); err != nil {
		return Response{Observation: "ProtocolError: " + err.Error()}, ""
	}
	stop := beat(req.ID, req.Nonce)
	obs, killed, exit := execute(ctx, workdir, req.Tool, req.Arguments, sw)
	stop()
	return Response{ID: req.ID, Nonce: req.Nonce, Observation: obs, Killed: killed, ExitCode: exit}, req.Tool
}

// heartbeat writes a Response with Alive set, id and nonce to w every HeartbeatInterval until
// the returned function is called; that function returns once the writing goroutine has
// ended, so the caller may then write to w itself (w is never written by both at once).
func heartbeat(w *bufio.Writer, id, nonce string) (stop func()) {
	line, _ := json.Marshal(Response{ID: id, Nonce: nonce, Alive: true})
	line = append(line, '\n')
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				// A write error ends the heartbeats; the answer's own write reports it.
				if _, err := w.Write(line); err != nil {
					return
				}
				if err := w.Flush(); err != nil {
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// readLines sends every line of in (without its "\n" or "\r\n") and then the read error.
// A line over MaxRequestBytes is consumed to its end and reported as tooLarge, so memory
// stays bounded whatever the host sends.
func readLines(in io.Reader, out chan<- lineResult, stop <-chan struct{}) {
	r := bufio.NewReaderSize(in, 64<<10)
	emit := func(lr lineResult) bool {
		select {
		case out <- lr:
			return true
		case <-stop:
			return false
		}
	}
	for {
		var line []byte
		tooLarge := false
		var err error
		for {
			var frag []byte
			frag, err = r.ReadSlice('\n')
			if !tooLarge {
				if len(line)+len(frag) > MaxRequestBytes+2 { // +2: the line ending
					tooLarge, line = true, nil
				} else {
					line = append(line, frag...)
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		complete := err == nil
		if complete || len(line) > 0 || tooLarge {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			if !emit(lineResult{line: line, tooLarge: tooLarge}) {
				return
			}
		}
		if err != nil {
			emit(lineResult{err: err})
			return
		}
	}
}

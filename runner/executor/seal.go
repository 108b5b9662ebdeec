package executor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/secretform"
)

// The seal check (frognano-executor -seal) runs in a setup container once setup has ended and
// every process it left was killed (the container was stopped and started again, with this
// binary as its only program): the host hands it the operator's setup values and the paths the
// container's own layer holds (the engine's list of changes, which is what the environment
// image will hold), and it answers which of those paths hold a value, in its bytes, the target
// of a symbolic link, an extended attribute or its name, in any form secretform knows. It
// prints paths by their index only, never a value.
//
// It reads as root, so it trusts nothing it reads: it never follows a symbolic link (each
// directory on a path is opened with O_NOFOLLOW, and a link is read as its target's text), it
// opens nothing but regular files (a FIFO or a device is never opened), it skips a sparse
// file's holes (no form holds a NUL byte), it reads a file with several names once, and it
// stops at a byte budget and a deadline. A path it cannot read, or one a mount hides from it
// (the layer holds it, but the container shows a volume there), is a problem, never a pass.

// What a SealLine found a value in.
const (
	SealInName    = "name"
	SealInContent = "content"
	SealInLink    = "link target"
	SealInXattr   = "extended attribute"
)

// sealMaxLines bounds the findings and problems one check reports: past it, it stops.
const sealMaxLines = 100

// SealRequest is what the host writes on the seal check's stdin, as one JSON document.
type SealRequest struct {
	Values   []string `json:"values"`    // the operator's values (secretform.Settings)
	Paths    []string `json:"paths"`     // absolute paths the layer holds (deletions left out)
	MaxBytes int64    `json:"max_bytes"` // the most bytes it may read (0: no bound)
	Seconds  int      `json:"seconds"`   // the most time it may take (0: no bound)
}

// SealLine is one line of the seal check's answer: a finding (Where, Form and Value set), a
// problem (Problem set) or, last, the end (Done or Stopped set).
type SealLine struct {
	Path    int    `json:"path"`
	Where   string `json:"where,omitempty"`
	Form    string `json:"form,omitempty"`
	Value   int    `json:"value,omitempty"` // index into SealRequest.Values
	Problem string `json:"problem,omitempty"`
	// Done is the last line of a check that looked at every path; Stopped, of one that could
	// not (its deadline, its byte budget, too many findings), and why.
	Done    bool   `json:"done,omitempty"`
	Stopped string `json:"stopped,omitempty"`
	Files   int64  `json:"files,omitempty"` // regular files read
	Bytes   int64  `json:"bytes,omitempty"` // bytes read
}

// errStop ends a check early; the reason is in Stopped.
type errStop struct{ why string }

func (e *errStop) Error() string { return e.why }

// sealer is one check's state.
type sealer struct {
	req      SealRequest
	m        *secretform.Matcher
	out      *bufio.Writer
	enc      *json.Encoder
	deadline time.Time
	lines    int
	files    int64
	bytes    int64
	buf      []byte
	seen     map[[2]uint64]*fileResult // a file with several names is read once
}

// fileResult is what reading one regular file found.
type fileResult struct {
	match   secretform.Match
	found   bool
	problem string
}

// Seal runs the seal check: it reads a SealRequest from in, checks each path under root ("/"
// in the setup container; a folder in tests) and writes SealLines to out, the last one Done or
// Stopped. It returns an error only when it could neither read its request nor write.
func Seal(ctx context.Context, root string, in io.Reader, out io.Writer) error {
	var req SealRequest
	if err := json.NewDecoder(io.LimitReader(in, 1<<30)).Decode(&req); err != nil {
		return fmt.Errorf("reading the seal request: %w", err)
	}
	secrets := make([]secretform.Secret, len(req.Values))
	for i, v := range req.Values {
		secrets[i] = secretform.Secret{Value: v}
	}
	w := bufio.NewWriter(out)
	s := &sealer{req: req, m: secretform.New(secrets), out: w, enc: json.NewEncoder(w),
		buf: make([]byte, 1<<20), seen: map[[2]uint64]*fileResult{}}
	if req.Seconds > 0 {
		s.deadline = time.Now().Add(time.Duration(req.Seconds) * time.Second)
	}
	err := s.run(ctx, root)
	var stop *errStop
	switch {
	case errors.As(err, &stop):
		err = s.enc.Encode(SealLine{Stopped: stop.why, Files: s.files, Bytes: s.bytes})
	case err != nil:
		err = s.enc.Encode(SealLine{Stopped: err.Error(), Files: s.files, Bytes: s.bytes})
	default:
		err = s.enc.Encode(SealLine{Done: true, Files: s.files, Bytes: s.bytes})
	}
	if err != nil {
		return err
	}
	return w.Flush()
}

// report writes one finding or problem line.
func (s *sealer) report(l SealLine) error {
	if s.lines == sealMaxLines {
		return &errStop{fmt.Sprintf("more than %d paths hold a value or could not be read", sealMaxLines)}
	}
	s.lines++
	return s.enc.Encode(l)
}

// found reports m in path i.
func (s *sealer) found(i int, where string, m secretform.Match) error {
	return s.report(SealLine{Path: i, Where: where, Form: m.Form, Value: m.Secret})
}

// check stops the check past its deadline or its context.
func (s *sealer) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return &errStop{"the check was cancelled"}
	}
	if !s.deadline.IsZero() && time.Now().After(s.deadline) {
		return &errStop{fmt.Sprintf("the check did not finish within %d s", s.req.Seconds)}
	}
	return nil
}

// countBytes charges n bytes read to the budget.
func (s *sealer) countBytes(n int) error {
	s.bytes += int64(n)
	if s.req.MaxBytes > 0 && s.bytes > s.req.MaxBytes {
		return &errStop{fmt.Sprintf("the changed files hold more than %d bytes to read", s.req.MaxBytes)}
	}
	return nil
}

// components splits an absolute path into its names; it refuses what is not a plain absolute
// path (the engine's list never holds one, so such a path is a problem, not a skip).
func components(p string) ([]string, string) {
	if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return nil, "it is not an absolute path"
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for _, c := range parts {
		if c == "" || c == "." || c == ".." {
			return nil, "it is not a clean absolute path"
		}
	}
	return parts, ""
}

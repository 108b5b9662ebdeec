// Package doctor checks a frognano set-up before the first real issue does: the
// configuration, PostgreSQL and its migrations, the Docker engine, the sandbox image and a
// real sandbox's confinement, the model server (its model list and a tool call to a one-tool
// probe), and GitHub (the App's JWT, its permissions and events, its installations). Each
// check gives one Result: pass or fail, what was seen, and what to do about a failure.
//
// doctor only reads and probes: it never changes the database, never starts a run, never
// writes to GitHub, and removes the one sandbox it starts. It never prints a secret.
package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	textclip "github.com/frognano/frognano/internal/clip"
)

// Status is the outcome of one check.
type Status int

const (
	Pass Status = iota
	Fail
	Skip // not run, because a check it depends on failed
	Warn // works, with something a person may want to change (not a failure)
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "ok"
	case Fail:
		return "FAIL"
	case Warn:
		return "warn"
	}
	return "skip"
}

// Result is one check's outcome. Detail says what was seen; Fix, for a failure, what to do.
type Result struct {
	Name   string
	Status Status
	Detail string
	Fix    string
	Took   time.Duration
}

func pass(name, detail string) Result { return Result{Name: name, Status: Pass, Detail: detail} }

func fail(name, detail, fix string) Result {
	return Result{Name: name, Status: Fail, Detail: detail, Fix: fix}
}

func skip(name, why string) Result { return Result{Name: name, Status: Skip, Detail: why} }

func warn(name, detail, fix string) Result {
	return Result{Name: name, Status: Warn, Detail: detail, Fix: fix}
}

// timed runs fn with a timeout and records how long it took.
func timed(ctx context.Context, d time.Duration, fn func(context.Context) Result) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	r := fn(ctx)
	r.Took = time.Since(start)
	return r
}

// Write prints one line per result ("ok   name  detail", "FAIL name  detail; fix: …", "warn
// name  detail; fix: …") and returns how many failed (a warning is not a failure).
func Write(w io.Writer, results []Result) (failed int) {
	width := 0
	for _, r := range results {
		width = max(width, len(r.Name))
	}
	for _, r := range results {
		line := fmt.Sprintf("%-4s %-*s  %s", r.Status, width, r.Name, oneLine(r.Detail))
		if r.Status == Fail {
			failed++
		}
		if (r.Status == Fail || r.Status == Warn) && r.Fix != "" {
			line += "; fix: " + oneLine(r.Fix)
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	return failed
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// clip shortens what a server said before it goes into a line: one line, at most n bytes,
// never half a character (package clip).
func clip(s string, n int) string { return textclip.Bytes(oneLine(s), n) }

package env

import (
	"bytes"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Limits of the setup log.
const (
	// maxLogBytes is how much of setup's output is kept: the end, where a failure shows.
	maxLogBytes = 256 << 10
	// maxLineBytes splits a line that never ends, so that progress and redaction stay bounded.
	maxLineBytes = 4 << 10
	// Redacted replaces an operator's value in the log.
	Redacted = "[redacted]"
)

// setupLog collects setup's output: it splits it into lines, replaces the operator's values
// (Config.Env, which may hold a proxy's password) in each, hands each to progress, and keeps
// the last maxLogBytes.
type setupLog struct {
	mu       sync.Mutex
	secrets  []string
	progress func(string)
	partial  []byte
	kept     []byte
	dropped  bool // the beginning was dropped
}

func newSetupLog(operatorEnv []string, progress func(string)) *setupLog {
	return &setupLog{secrets: secretsOf(operatorEnv), progress: progress}
}

// secretsOf returns the values worth hiding in operatorEnv: every value of 4 bytes or more,
// and the password of a URL value, longest first so that a value containing another is
// replaced whole.
func secretsOf(operatorEnv []string) []string {
	var out []string
	for _, kv := range operatorEnv {
		_, v, _ := strings.Cut(kv, "=")
		if len(v) >= 4 {
			out = append(out, v)
		}
		if u, err := url.Parse(v); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && len(p) >= 4 {
				out = append(out, p, url.QueryEscape(p))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func (l *setupLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.partial = append(l.partial, p...)
			for len(l.partial) >= maxLineBytes {
				l.line(l.partial[:maxLineBytes])
				l.partial = append([]byte(nil), l.partial[maxLineBytes:]...)
			}
			break
		}
		l.partial = append(l.partial, p[:i]...)
		l.line(l.partial)
		l.partial = l.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// line takes one complete line (without its newline).
func (l *setupLog) line(b []byte) {
	s := string(b)
	for _, v := range l.secrets {
		s = strings.ReplaceAll(s, v, Redacted)
	}
	if l.progress != nil {
		l.progress(s)
	}
	l.kept = append(l.kept, s...)
	l.kept = append(l.kept, '\n')
	if len(l.kept) > maxLogBytes {
		cut := len(l.kept) - maxLogBytes
		if j := bytes.IndexByte(l.kept[cut:], '\n'); j >= 0 {
			cut += j + 1
		}
		l.kept = append([]byte(nil), l.kept[cut:]...)
		l.dropped = true
	}
}

// Bytes ends a pending partial line and returns what was kept.
func (l *setupLog) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.line(l.partial)
		l.partial = nil
	}
	if l.dropped {
		return append([]byte("[the beginning of the log was dropped]\n"), l.kept...)
	}
	return append([]byte(nil), l.kept...)
}

// Note appends a line of frognano's own to the log.
func (l *setupLog) Note(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.line([]byte("frognano: " + s))
}

// LastLines returns at most n lines of the end of log.
func LastLines(log []byte, n int) string {
	s := strings.TrimRight(string(log), "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

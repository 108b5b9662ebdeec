package secretform

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
)

// Match is one form of one secret found in bytes. It never holds the value.
type Match struct {
	Secret int    // the secret's index in the list New was given
	Name   string // the secret's Name ("" when its holder gave none)
	Form   string // the form's kind: AsIs, Base64, ...
	// Start and End are the match's offsets in the bytes Find or FindAll searched; a Stream's
	// matches have none.
	Start, End int
}

// What says what was found, for a message: "the value of MIRROR_TOKEN, base64-encoded", or
// "a value frognano keeps secret, as is" for a secret without a name.
func (m Match) What() string {
	who := "a value frognano keeps secret"
	switch {
	case strings.HasPrefix(m.Name, "the "):
		who = m.Name
	case m.Name != "":
		who = "the value of " + m.Name
	}
	return who + ", " + m.Form
}

// window is how many bytes the matcher hashes at each offset: every form is at least MinLen
// long, so each has a last window of its own.
const window = MinLen

// Matcher finds every form (Forms) of a set of secrets in bytes, in one pass: at each offset it
// hashes the 8 bytes there and tests one bit of a table, and only where the bit is set does it
// compare the forms whose last 8 bytes hash there. The cost is a few nanoseconds a byte
// whatever the number of secrets, and the memory a few bytes a form (a token registry of
// thousands of tokens included). A Matcher is safe for concurrent use.
type Matcher struct {
	secrets []Secret
	pats    []pattern
	keys    map[uint64][]int32 // last window of a form → the forms that end with it
	bits    []uint64
	shift   uint
	maxLen  int
}

type pattern struct {
	text   []byte
	secret int
	kind   string
}

// New returns a Matcher of every form of secrets (those shorter than MinLen have none).
func New(secrets []Secret) *Matcher {
	m := &Matcher{secrets: append([]Secret(nil), secrets...), keys: map[uint64][]int32{}}
	seen := map[string]bool{}
	for i, s := range secrets {
		for _, f := range Forms(s.Value) {
			if seen[f.Text] {
				continue
			}
			seen[f.Text] = true
			m.pats = append(m.pats, pattern{text: []byte(f.Text), secret: i, kind: f.Kind})
			m.maxLen = max(m.maxLen, len(f.Text))
		}
	}
	// About 256 bits a form: at most one offset in 256 of unrelated bytes is looked up.
	logBits := min(max(bits.Len(uint(len(m.pats)*256)), 12), 26)
	m.bits = make([]uint64, 1<<(logBits-6))
	m.shift = uint(64 - logBits)
	for i, p := range m.pats {
		k := binary.LittleEndian.Uint64(p.text[len(p.text)-window:])
		m.keys[k] = append(m.keys[k], int32(i))
		h := m.hash(k)
		m.bits[h>>6] |= 1 << (h & 63)
	}
	return m
}

func (m *Matcher) hash(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> m.shift }

// Empty reports whether there is nothing to look for.
func (m *Matcher) Empty() bool { return m == nil || len(m.pats) == 0 }

// scan calls fn for every form that ends in b at or after from (from lets a Stream skip what it
// already searched), until fn returns false.
func (m *Matcher) scan(b []byte, from int, fn func(start, end int, p *pattern) bool) {
	if m.Empty() {
		return
	}
	bitset, shift := m.bits, m.shift
	for j := max(from-window, 0); j+window <= len(b); j++ {
		k := binary.LittleEndian.Uint64(b[j:])
		h := (k * 0x9E3779B97F4A7C15) >> shift
		if bitset[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		end := j + window
		for _, i := range m.keys[k] {
			p := &m.pats[i]
			if start := end - len(p.text); start >= 0 && bytes.Equal(b[start:end], p.text) {
				if !fn(start, end, p) {
					return
				}
			}
		}
	}
}

func (m *Matcher) match(start, end int, p *pattern) Match {
	return Match{Secret: p.secret, Name: m.secrets[p.secret].Name, Form: p.kind, Start: start, End: end}
}

// Find returns the first form of a secret that b holds (the one that ends first).
func (m *Matcher) Find(b []byte) (Match, bool) {
	var found Match
	ok := false
	m.scan(b, 0, func(start, end int, p *pattern) bool {
		found, ok = m.match(start, end, p), true
		return false
	})
	return found, ok
}

// FindAll returns every form of a secret that b holds, in the order they end.
func (m *Matcher) FindAll(b []byte) []Match {
	var all []Match
	m.scan(b, 0, func(start, end int, p *pattern) bool {
		all = append(all, m.match(start, end, p))
		return true
	})
	return all
}

// Mask returns s with every form of a secret in it replaced by "[REDACTED]" (overlapping
// forms together): for a text that names a place (a file's path) which may itself hold one.
func (m *Matcher) Mask(s string) string {
	all := m.FindAll([]byte(s))
	if len(all) == 0 {
		return s
	}
	covered := make([]bool, len(s))
	for _, f := range all {
		for i := f.Start; i < f.End; i++ {
			covered[i] = true
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !covered[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString("[REDACTED]")
		for i < len(s) && covered[i] {
			i++
		}
	}
	return b.String()
}

// Stream searches bytes that come in pieces (a file read in chunks): a form split between two
// pieces is found. It keeps the first match. Its zero value is not usable: make one with
// Matcher.Stream.
type Stream struct {
	m     *Matcher
	buf   []byte // the end of what came before (at most the longest form less one byte), then the piece
	first *Match
}

// Stream returns a new Stream of m.
func (m *Matcher) Stream() *Stream { return &Stream{m: m} }

// Write searches p, together with the end of what came before it. It never fails.
func (s *Stream) Write(p []byte) (int, error) {
	if s.first != nil || s.m.Empty() {
		return len(p), nil
	}
	keep := s.m.maxLen - 1
	// The junction: what came before and the start of p, so that a form across the two is
	// found; then p alone.
	carried := len(s.buf)
	s.buf = append(s.buf, p[:min(len(p), keep)]...) // the junction, and the next carry when p is short
	if carried > 0 {
		s.search(s.buf, carried+1)
	}
	if s.first == nil {
		s.search(p, 0)
	}
	if len(p) >= keep {
		s.buf = append(s.buf[:0], p[len(p)-keep:]...)
	} else if n := len(s.buf); n > keep {
		s.buf = s.buf[:copy(s.buf, s.buf[n-keep:])]
	}
	return len(p), nil
}

// search looks for forms that end in b at or after from.
func (s *Stream) search(b []byte, from int) {
	s.m.scan(b, from, func(start, end int, p *pattern) bool {
		if end < from {
			return true
		}
		m := s.m.match(0, 0, p)
		s.first = &m
		return false
	})
}

// Reset forgets what came before: the next Write starts a new text (a new file, or the data
// after a hole in one, where no form can continue since none holds a NUL byte).
func (s *Stream) Reset() { s.buf = s.buf[:0] }

// Found returns the first match of everything written since the Stream was made.
func (s *Stream) Found() (Match, bool) {
	if s.first == nil {
		return Match{}, false
	}
	return *s.first, true
}

package executor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The network observer is a second mode of the executor binary (-observe-network): the host
// starts it in the agent's sandbox as root without capabilities, before the executor, so that
// it can tell the host which names the model's commands tried to resolve and how often they
// tried to reach an address the sandbox has no route to.
//
// Why it can be trusted with that. A container without networking gets no resolv.conf from the
// engine: the image's own is read, empty in the sandbox image, and with no nameserver line the C
// library (and Go's own resolver) asks 127.0.0.1, so every lookup sends its question there (an
// image whose resolv.conf names other nameservers is reported: ObserverReport.Resolver); the observer holds port 53 on that address, UDP and
// TCP, from before the model's first command (no other process can bind it then: the observer
// sets no SO_REUSEADDR or SO_REUSEPORT on UDP, and SO_REUSEPORT would need the same user). Root
// is out of the sandbox user's reach: the user can neither signal nor ptrace it, nor open its
// /proc files, and its stdout is a stream only the host reads. What the model can do is send it
// questions: each one it counts is one a process in the sandbox really sent, whatever the
// model printed. The no-route count is the kernel's own (Ip: OutNoRoutes of the sandbox's
// network namespace, which no unprivileged process can reset): every connect or send to an
// address outside the loopback network fails with ENETUNREACH and counts there.
//
// What it does with a question: it answers REFUSED, echoing the question, so that what a
// command prints is what an offline sandbox prints anyway ("Temporary failure in name
// resolution", git's and curl's "Could not resolve host"; measured against a sandbox with
// nothing on port 53 and one whose nameserver is unreachable: the same messages, the same
// time). It parses nothing of the question: it keeps the question's bytes (after the id and
// flags) as an opaque key, with counts, and the host parses them (runner/egress, with a DNS
// library). Everything is bounded: MaxObservedQuestions keys, MaxObservedQuestionBytes each,
// ObserverTCPConns connections at once, so a flood costs the observer nothing it can run out of.

// Bounds of the observer.
const (
	// MaxObservedQuestions is how many distinct questions the observer keeps; later new
	// questions are only counted (ObserverReport.KeysDropped).
	MaxObservedQuestions = 256
	// MaxObservedQuestionBytes is how many bytes of a question the observer keeps: a DNS name
	// takes at most 255, its header counts 8 and its type and class 4.
	MaxObservedQuestionBytes = 300
	// ObserverTCPConns is how many DNS-over-TCP connections the observer serves at once;
	// more are closed unanswered (ObserverReport.TCPRefused).
	ObserverTCPConns = 16
	// maxTouched is how many keys one mark names; the rest are counted.
	maxTouched = 8
	// recentIDs is how many query ids per key tell a resend (the same id: the C library sends a
	// question again when no answer came) from a new lookup.
	recentIDs = 8
	// observerTCPIdle bounds how long a TCP connection may stay idle.
	observerTCPIdle = 5 * time.Second
	// maxObserverRequest bounds a request line from the host.
	maxObserverRequest = 4 << 10
	// dnsRefused is the REFUSED response code.
	dnsRefused = 5
)

// ObserverReady is the first line the observer writes: it listens on ObserverAddr, UDP and TCP.
// Error, when set, says why it could not, and the observer exits.
type ObserverReady struct {
	Observing bool   `json:"observing"`
	PID       int    `json:"pid,omitempty"`
	Error     string `json:"error,omitempty"`
}

// ObserverAddr is where the observer listens, the nameserver of the sandbox's resolv.conf.
const ObserverAddr = "127.0.0.1:53"

// ObserverRequest is one line from the host: Op "mark" is answered with an ObserverMark (what
// happened since the last mark), "report" with an ObserverReport (everything so far).
type ObserverRequest struct {
	Op  string `json:"op"`
	Seq uint64 `json:"seq"` // echoed in the answer, so that a late answer is not taken for the next
}

// ObserverMark is the counts so far and the keys questions hit since the last mark.
type ObserverMark struct {
	Seq     uint64 `json:"seq"`
	Queries int    `json:"queries"` // DNS questions received, resends included
	Lookups int    `json:"lookups"` // of which not a resend of the same question with the same id
	NoRoute int    `json:"no_route"`
	// Touched are the indices (in ObserverReport.Keys) of the questions asked since the last
	// mark, at most maxTouched; TouchedMore counts the rest, and questions not kept.
	Touched     []int  `json:"touched,omitempty"`
	TouchedMore int    `json:"touched_more,omitempty"`
	Error       string `json:"error,omitempty"`
}

// ObserverReport is everything the observer saw.
type ObserverReport struct {
	ObserverMark
	Keys []ObservedQuestion `json:"keys"`
	// KeysDropped counts the questions that were not kept because the table was full.
	KeysDropped int `json:"keys_dropped,omitempty"`
	// Malformed counts the packets that were no DNS query (too short, or a response).
	Malformed int `json:"malformed,omitempty"`
	// TCPRefused counts the TCP connections closed unanswered because ObserverTCPConns were open.
	TCPRefused int `json:"tcp_refused,omitempty"`
	// NoRouteError says why the kernel's no-route count could not be read (NoRoute is then 0).
	NoRouteError string `json:"no_route_error,omitempty"`
	// Resolver, when set, says why some lookups may not reach the observer: the image's
	// /etc/resolv.conf names other nameservers (their lookups count only as no-route).
	Resolver string `json:"resolver,omitempty"`
}

// ObservedQuestion is one distinct question: its bytes after the query's id and flags (the
// four section counts, then the sections), at most MaxObservedQuestionBytes of them. They are
// whatever a process in the sandbox sent: the host parses them as untrusted data.
type ObservedQuestion struct {
	Question []byte `json:"question"`
	Queries  int    `json:"queries"`
	Lookups  int    `json:"lookups"`
}

// observer is the observer's state, shared by its listeners and its protocol loop.
type observer struct {
	mu          sync.Mutex
	index       map[string]int
	keys        []ObservedQuestion
	ids         [][recentIDs]uint16 // recent ids per key, a ring
	idNext      []int
	markedAt    []int // the mark generation in which each key was last touched
	gen         int
	queries     int
	lookups     int
	dropped     int
	malformed   int
	tcpRefused  int
	touched     []int
	touchedMore int

	noRouteBase int
	noRouteErr  error
	resolver    string
}

// Observe listens on ObserverAddr (UDP and TCP), writes an ObserverReady line to out, then
// answers the host's ObserverRequests from in, one line each, until in reaches EOF (nil) or ctx
// ends. It is meant to run as root without capabilities in the agent's sandbox.
func Observe(ctx context.Context, in io.Reader, out io.Writer) error {
	enc := json.NewEncoder(out)
	o := &observer{index: map[string]int{}}
	o.noRouteBase, o.noRouteErr = readNoRoutes()
	o.resolver = resolverNote("/etc/resolv.conf")
	udp, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(ObserverAddr)))
	if err != nil {
		_ = enc.Encode(ObserverReady{Error: "listening on udp " + ObserverAddr + ": " + err.Error()})
		return err
	}
	defer udp.Close()
	tcp, err := net.ListenTCP("tcp4", net.TCPAddrFromAddrPort(netip.MustParseAddrPort(ObserverAddr)))
	if err != nil {
		_ = enc.Encode(ObserverReady{Error: "listening on tcp " + ObserverAddr + ": " + err.Error()})
		return err
	}
	defer tcp.Close()
	go o.serveUDP(udp)
	go o.serveTCP(tcp)
	if err := enc.Encode(ObserverReady{Observing: true, PID: os.Getpid()}); err != nil {
		return fmt.Errorf("writing the ready line: %w", err)
	}

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(in, maxObserverRequest)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				if errors.Is(err, bufio.ErrBufferFull) {
					err = errors.New("a request line too long")
				}
				readErr <- err
				return
			}
			select {
			case lines <- bytes.Clone(line):
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		var line []byte
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading a request: %w", err)
		case line = <-lines:
		}
		var req ObserverRequest
		var resp any
		if err := json.Unmarshal(line, &req); err != nil {
			resp = ObserverMark{Error: "not a request: " + err.Error()}
		} else {
			switch req.Op {
			case "mark":
				m := o.mark()
				m.Seq = req.Seq
				resp = m
			case "report":
				r := o.report()
				r.Seq = req.Seq
				resp = r
			default:
				resp = ObserverMark{Seq: req.Seq, Error: "unknown op " + strconv.Quote(req.Op)}
			}
		}
		if err := enc.Encode(resp); err != nil {
			return fmt.Errorf("writing an answer: %w", err)
		}
	}
}

// serveUDP answers every datagram until the socket is closed. A read error other than the
// socket's closing is counted and the loop goes on: a flood must not stop it.
func (o *observer) serveUDP(c *net.UDPConn) {
	buf := make([]byte, 64<<10)
	for {
		n, addr, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if resp := o.query(buf[:n]); resp != nil {
			_, _ = c.WriteToUDPAddrPort(resp, addr)
		}
	}
}

// serveTCP serves DNS over TCP (two-byte length, then the message), at most ObserverTCPConns
// connections at once.
func (o *observer) serveTCP(l *net.TCPListener) {
	slots := make(chan struct{}, ObserverTCPConns)
	for {
		c, err := l.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // out of descriptors: let some close
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			o.mu.Lock()
			o.tcpRefused++
			o.mu.Unlock()
			_ = c.SetLinger(0)
			c.Close()
			continue
		}
		go func() {
			defer func() { <-slots }()
			defer c.Close()
			var msg [4096]byte
			for {
				_ = c.SetDeadline(time.Now().Add(observerTCPIdle))
				var n [2]byte
				if _, err := io.ReadFull(c, n[:]); err != nil {
					return
				}
				size := int(binary.BigEndian.Uint16(n[:]))
				if size > len(msg) {
					o.count(nil)
					return
				}
				if _, err := io.ReadFull(c, msg[:size]); err != nil {
					return
				}
				resp := o.query(msg[:size])
				if resp == nil {
					return
				}
				out := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(resp)), uint16(len(resp)))
				if _, err := c.Write(append(out, resp...)); err != nil {
					return
				}
			}
		}()
	}
}

// query counts one message and returns the answer to send (nil: none). The answer is the
// query itself with the response bit, recursion available and REFUSED: it echoes the question,
// which the C library checks.
func (o *observer) query(p []byte) []byte {
	if len(p) < 12 || p[2]&0x80 != 0 {
		o.count(nil)
		return nil
	}
	o.count(p)
	resp := bytes.Clone(p)
	resp[2] = (resp[2] | 0x80) &^ 0x06 // QR on; AA and TC off; opcode and RD kept
	resp[3] = 0x80 | dnsRefused        // RA on, Z, AD and CD off
	return resp
}

// count records a query p, or a malformed packet when p is nil.
func (o *observer) count(p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if p == nil {
		o.malformed++
		return
	}
	o.queries++
	id := binary.BigEndian.Uint16(p)
	key := p[4:min(len(p), 4+MaxObservedQuestionBytes)]
	i, ok := o.index[string(key)]
	if !ok {
		if len(o.keys) == MaxObservedQuestions {
			o.dropped++
			o.lookups++
			o.touchedMore++
			return
		}
		i = len(o.keys)
		o.index[string(key)] = i
		o.keys = append(o.keys, ObservedQuestion{Question: bytes.Clone(key)})
		o.ids = append(o.ids, [recentIDs]uint16{})
		o.idNext = append(o.idNext, 0)
		o.markedAt = append(o.markedAt, -1)
	}
	k := &o.keys[i]
	k.Queries++
	resend := false
	for j := range min(k.Lookups, recentIDs) {
		if o.ids[i][j] == id {
			resend = true
			break
		}
	}
	if !resend {
		k.Lookups++
		o.lookups++
		o.ids[i][o.idNext[i]] = id
		o.idNext[i] = (o.idNext[i] + 1) % recentIDs
	}
	if o.markedAt[i] != o.gen {
		o.markedAt[i] = o.gen
		if len(o.touched) < maxTouched {
			o.touched = append(o.touched, i)
		} else {
			o.touchedMore++
		}
	}
}

// mark returns the counts and the keys touched since the last mark, and starts a new interval.
func (o *observer) mark() ObserverMark {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.counts()
	m.Touched, m.TouchedMore = o.touched, o.touchedMore
	o.touched, o.touchedMore = nil, 0
	o.gen++
	return m
}

func (o *observer) counts() ObserverMark {
	m := ObserverMark{Queries: o.queries, Lookups: o.lookups}
	if o.noRouteErr == nil {
		n, err := readNoRoutes()
		if err == nil {
			m.NoRoute = max(0, n-o.noRouteBase)
		}
	}
	return m
}

// report is everything so far.
func (o *observer) report() ObserverReport {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := ObserverReport{ObserverMark: o.counts(), Keys: append([]ObservedQuestion(nil), o.keys...),
		KeysDropped: o.dropped, Malformed: o.malformed, TCPRefused: o.tcpRefused}
	if r.Keys == nil {
		r.Keys = []ObservedQuestion{}
	}
	if o.noRouteErr != nil {
		r.NoRouteError = o.noRouteErr.Error()
	}
	r.Resolver = o.resolver
	return r
}

// resolverNote says whether the resolv.conf at path sends lookups anywhere but the observer:
// "" when it names no nameserver (the C library's default is 127.0.0.1) or only 127.0.0.1.
func resolverNote(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "" // no resolv.conf: the default, 127.0.0.1
	}
	others := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" && f[1] != "127.0.0.1" {
			others++
		}
	}
	if others == 0 {
		return ""
	}
	return fmt.Sprintf("the image's /etc/resolv.conf names %d other nameserver(s): lookups sent there are counted as connections with no route, without their names", others)
}

// readNoRoutes is the kernel's count of packets this network namespace had no route for, IPv4
// (Ip: OutNoRoutes in /proc/net/snmp) and IPv6 (Ip6OutNoRoutes in /proc/net/snmp6, absent
// when IPv6 is disabled, as Docker leaves it in a container).
func readNoRoutes() (int, error) {
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return 0, err
	}
	n, err := parseSNMP(b)
	if err != nil {
		return 0, err
	}
	if b6, err := os.ReadFile("/proc/net/snmp6"); err == nil {
		for _, line := range strings.Split(string(b6), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == "Ip6OutNoRoutes" {
				if v, err := strconv.Atoi(f[1]); err == nil {
					n += v
				}
			}
		}
	}
	return n, nil
}

// parseSNMP reads OutNoRoutes from /proc/net/snmp's two "Ip:" lines (names, then values).
func parseSNMP(b []byte) (int, error) {
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Ip:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, name := range names {
			if name == "OutNoRoutes" && i < len(f) {
				return strconv.Atoi(f[i])
			}
		}
		break
	}
	return 0, errors.New("no Ip: OutNoRoutes in /proc/net/snmp")
}

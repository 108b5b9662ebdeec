// Package egress turns what the agent's sandbox observed of its own network use into what the
// maintainer is told: which names the model's commands tried to resolve and how often, how many
// connections to an address had no route, which commands tried (with their exit status) or
// were not found, and how to give the next run what it lacked (a .frognano/setup.sh snippet of
// docs/environments.md, or an image with the missing toolchain).
//
// Its facts come from the run itself, never from the model's words: the network observer's
// counts and the kernel's (runner/sandbox's NetworkReport), the commands the host sent and the
// exit status the executor's protocol carried, a PATH check made after every process of the
// model was ended, and the files of the base commit. Every name and command in them is still
// text a process in the sandbox chose: this package parses the observer's questions with a DNS
// library, escapes what is not a plain host name, and bounds every list; the renderer
// (runner) makes it inert. It never reaches the network and never names a package registry.
package egress

import (
	"cmp"
	"slices"
	"strings"

	"github.com/frognano/frognano/runner/sandbox"
)

// Bounds of a Report.
const (
	maxHosts   = 100
	maxCalls   = 50
	maxMissing = 20
	// maxCommand bounds a command as reported: its first line, at most this many bytes.
	maxCommand = 200
)

// Report is what the maintainer is told. Its zero value (Empty) says nothing.
type Report struct {
	// Unobserved, when set, says why some of the run's network use may be missing below (the
	// observer did not start, was disturbed, or the image's resolv.conf sends lookups
	// elsewhere).
	Unobserved string
	// Hosts are the names looked up, most looked-up first.
	Hosts []Host
	// HostsMore counts the lookups whose names were not kept (the observer's table was full,
	// or past maxHosts).
	HostsMore int
	// Lookups is every lookup of the run; NoRoute every packet the kernel had no route for
	// (a connect or send to an address outside the sandbox).
	Lookups, NoRoute int
	// Calls are the Bash calls that tried to reach the network or ran a command that was not
	// found, in order; CallsMore counts those past maxCalls.
	Calls     []Call
	CallsMore int
	// Missing are the commands the model ran that the sandbox does not have.
	Missing []Missing
	// Advice is what to do, one item per ecosystem or toolchain.
	Advice []Advice
}

// Host is one name the model's commands tried to resolve.
type Host struct {
	Name string // lower case; bytes outside a host name's letters escaped (\xHH)
	// Lookups counts the resolver's tries (a try that asks for IPv4 and IPv6 addresses counts
	// once, and the resolver's resends of an unanswered question not at all); Queries every
	// question received.
	Lookups, Queries int
}

// Call is one Bash call that tried to reach the network or ran a command that was not found.
type Call struct {
	Command  string // its first line, at most maxCommand bytes, as the host sent it
	ExitCode *int   // from the executor's protocol; nil when it did not run to its end
	Lookups  int
	NoRoute  int
	Hosts    []string // names it looked up (a few)
	Tool     string   // the package manager or fetcher it ran ("pip", "npm", "curl"...), if known
	NotFound string   // the command that was not found (exit 127, and not on the sandbox's PATH)
}

// Missing is a command the model ran that the sandbox's image does not have.
type Missing struct {
	Command   string
	Toolchain string // "Node", "Rust", "Go"...; "" when unknown
	Calls     int
}

// Empty reports whether there is nothing to tell.
func (r *Report) Empty() bool {
	return r == nil || (r.Unobserved == "" && len(r.Hosts) == 0 && r.HostsMore == 0 && r.NoRoute == 0 && len(r.Missing) == 0)
}

// Attempted reports whether the model's commands tried to reach the network.
func (r *Report) Attempted() bool {
	return r != nil && (r.Lookups > 0 || r.NoRoute > 0)
}

// Input is what Analyze reads besides the sandbox's report.
type Input struct {
	// Missing are the commands of NotFoundCandidates that the sandbox's PATH does not hold,
	// checked after every process of the model was ended (the runner's check).
	Missing []string
	// Files are the names of Manifests present at the root of the base commit's tree.
	Files []string
	// HasSetup is whether the base commit has .frognano/setup.sh.
	HasSetup bool
}

// Analyze builds the Report of one agent sandbox.
func Analyze(rep sandbox.NetworkReport, in Input) *Report {
	r := &Report{Unobserved: unobserved(rep)}
	names := questionNames(rep.Observer.Keys)
	r.Hosts, r.HostsMore = hosts(rep.Observer.Keys, names)
	r.HostsMore += rep.Observer.KeysDropped
	r.Lookups, r.NoRoute = rep.Observer.Lookups, rep.Observer.NoRoute
	missing := map[string]bool{}
	for _, m := range in.Missing {
		missing[m] = true
	}
	notFound := map[string]int{}
	var order []string
	for _, c := range rep.Calls {
		words := commandWords(c.Command)
		call := Call{Command: firstLine(c.Command), ExitCode: c.ExitCode, Lookups: c.Lookups, NoRoute: c.NoRoute, Tool: toolOf(words, c.Command)}
		if c.ExitCode != nil && *c.ExitCode == 127 {
			for _, w := range words {
				if missing[w] {
					call.NotFound = w
					break
				}
			}
		}
		if call.NotFound != "" {
			if notFound[call.NotFound] == 0 {
				order = append(order, call.NotFound)
			}
			notFound[call.NotFound]++
		}
		if call.NotFound == "" && (!c.Observed || (c.Lookups == 0 && c.NoRoute == 0)) {
			continue
		}
		for _, i := range c.Questions {
			if i >= 0 && i < len(names) && names[i] != "" && !slices.Contains(call.Hosts, names[i]) {
				call.Hosts = append(call.Hosts, names[i])
			}
		}
		if len(r.Calls) == maxCalls {
			r.CallsMore++
			continue
		}
		r.Calls = append(r.Calls, call)
	}
	for _, name := range order[:min(len(order), maxMissing)] {
		r.Missing = append(r.Missing, Missing{Command: name, Toolchain: toolchains[name], Calls: notFound[name]})
	}
	r.Advice = advise(r, in)
	return r
}

// unobserved says why the report may miss some network use.
func unobserved(rep sandbox.NetworkReport) string {
	var why []string
	if rep.Why != "" {
		why = append(why, rep.Why)
	}
	if rep.Observer.Resolver != "" {
		why = append(why, rep.Observer.Resolver)
	}
	if rep.Observer.NoRouteError != "" {
		why = append(why, "the kernel's count of connections with no route could not be read: "+rep.Observer.NoRouteError)
	}
	return strings.Join(why, "; ")
}

// hosts merges the observer's questions by name (a name asked for IPv4 and IPv6 addresses,
// or in another letter case, is one host). It returns at most maxHosts, and the lookups of
// the others.
func hosts(keys []sandboxQuestion, names []string) ([]Host, int) {
	type agg struct {
		lookups map[uint16]int // by question type: a try asks for each type once
		queries int
	}
	by := map[string]*agg{}
	var order []string
	for i, k := range keys {
		name := names[i]
		if name == "" {
			continue
		}
		a := by[name]
		if a == nil {
			a = &agg{lookups: map[uint16]int{}}
			by[name] = a
			order = append(order, name)
		}
		a.lookups[questionType(k.Question)] += k.Lookups
		a.queries += k.Queries
	}
	var out []Host
	for _, name := range order {
		a := by[name]
		h := Host{Name: name, Queries: a.queries}
		for _, n := range a.lookups {
			h.Lookups = max(h.Lookups, n)
		}
		out = append(out, h)
	}
	slices.SortStableFunc(out, func(a, b Host) int {
		return cmp.Or(cmp.Compare(b.Lookups, a.Lookups), cmp.Compare(a.Name, b.Name))
	})
	more := 0
	if len(out) > maxHosts {
		for _, h := range out[maxHosts:] {
			more += h.Lookups
		}
		out = out[:maxHosts]
	}
	return out, more
}

// firstLine is a command's first line, at most maxCommand bytes (cut on a rune boundary),
// with " …" when something was cut.
func firstLine(s string) string {
	line, _, more := strings.Cut(s, "\n")
	line = strings.TrimSpace(line)
	if len(line) > maxCommand {
		cut := maxCommand
		for cut > 0 && !utf8RuneStart(line[cut]) {
			cut--
		}
		line, more = line[:cut], true
	}
	if more {
		line += " …"
	}
	return line
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

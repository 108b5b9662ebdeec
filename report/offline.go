package report

import (
	"fmt"
	"strings"

	"github.com/frognano/frognano/runner/egress"
)

// writeEgress is the section that says what the offline sandbox stopped (Result.Egress): the
// names looked up, connections with no route, the commands that tried or were not found, and
// what to do. Nothing when there is nothing to say. Every name and command is the model's
// text: redacted, then a code span; the advice's words and snippets are frognano's own. Lists
// are cut at the detail level's trust count, and the least detailed level leaves the snippets
// out (the report keeps them).
func (x *render) writeEgress(b *strings.Builder) {
	e := x.r.Egress
	if e.Empty() {
		return
	}
	limit := x.d.trust
	b.WriteString("## What the offline sandbox stopped\n\n")
	if e.Attempted() {
		b.WriteString("The sandbox has no network, and the model's commands tried to reach it. Counted by frognano's observer " +
			"in the sandbox and the kernel, out of the model's reach (what the commands printed does not count):\n\n")
	}
	if len(e.Hosts) > 0 {
		b.WriteString("| name looked up | lookups |\n|---|---|\n")
		for i, h := range e.Hosts {
			if i == limit {
				fmt.Fprintf(b, "| and %d more | |\n", len(e.Hosts)-i)
				break
			}
			fmt.Fprintf(b, "| %s | %d |\n", codeCell(x.redact(h.Name), 120), h.Lookups)
		}
		b.WriteString("\n")
	}
	if e.HostsMore > 0 {
		fmt.Fprintf(b, "- %d more lookup(s) of names the observer did not keep.\n", e.HostsMore)
	}
	if e.NoRoute > 0 {
		fmt.Fprintf(b, "- %d connection(s) or packet(s) to an address had no route (the kernel's count; addresses are not recorded).\n", e.NoRoute)
	}
	if e.Unobserved != "" {
		fmt.Fprintf(b, "- Network use may be missing here: %s\n", prose(x.redact(e.Unobserved), x.d.note))
	}
	if len(e.Calls) > 0 {
		b.WriteString("\nCommands that tried, or were not found (exit status as the sandbox's executor reported it):\n\n")
		for i, c := range e.Calls {
			if i == limit {
				fmt.Fprintf(b, "- and %d more\n", len(e.Calls)-i+e.CallsMore)
				break
			}
			fmt.Fprintf(b, "- %s: %s\n", codeSpan(x.redact(c.Command), 200), x.callFacts(c))
		}
		if e.CallsMore > 0 && len(e.Calls) <= limit {
			fmt.Fprintf(b, "- and %d more\n", e.CallsMore)
		}
	}
	b.WriteString("\n")
	if len(e.Advice) == 0 {
		return
	}
	b.WriteString("### What to do\n\n")
	for _, a := range e.Advice {
		x.writeAdvice(b, a)
	}
}

// callFacts is what one call did, in words.
func (x *render) callFacts(c egress.Call) string {
	var parts []string
	if c.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit %d", *c.ExitCode))
	} else {
		parts = append(parts, "did not finish")
	}
	if c.NotFound != "" {
		parts = append(parts, codeSpan(x.redact(c.NotFound), 64)+" is not in the sandbox")
	}
	// The call's own counts are of questions (a lookup asks for IPv4 and IPv6 addresses in
	// two), so the call names its hosts and the table above counts the lookups.
	switch {
	case len(c.Hosts) > 0:
		var hs []string
		for i, h := range c.Hosts {
			if i == 3 {
				hs = append(hs, fmt.Sprintf("and %d more", len(c.Hosts)-i))
				break
			}
			hs = append(hs, codeSpan(x.redact(h), 120))
		}
		parts = append(parts, "while it ran, the sandbox looked up "+strings.Join(hs, ", "))
	case c.Lookups > 0:
		parts = append(parts, "looked up names the observer did not keep")
	}
	if c.NoRoute > 0 {
		parts = append(parts, fmt.Sprintf("%d connection(s) with no route", c.NoRoute))
	}
	return strings.Join(parts, "; ")
}

// writeAdvice is one thing to do.
func (x *render) writeAdvice(b *strings.Builder, a egress.Advice) {
	// Ecosystem and Why are egress's own words; NotFound is a program name the model ran.
	title, has := a.Ecosystem, a.Ecosystem
	why := a.Why
	if a.NotFound != "" {
		why = codeSpan(x.redact(a.NotFound), 64) + " " + why
		if title == "" {
			title, has = codeSpan(x.redact(a.NotFound), 64), "it"
		}
	}
	fmt.Fprintf(b, "**%s** (%s).", title, why)
	if a.Image {
		fmt.Fprintf(b, " Map the repository to an image that has %s: the operator's setting `FROGNANO_SANDBOX_IMAGES` "+
			"(`OWNER/NAME=IMAGE`; deploy/sandbox/README.md shows how to derive one from the sandbox image).", has)
	}
	where := "Add `.frognano/setup.sh`"
	if a.SetupExists {
		where = "Add to the repository's `.frognano/setup.sh`"
	}
	if a.Hint != "" {
		b.WriteString(" " + a.Hint)
	}
	if a.Setup == "" {
		b.WriteString("\n\n")
		return
	}
	if a.Image {
		b.WriteString(" Or install it in setup, from the default image:")
	} else {
		fmt.Fprintf(b, " %s, which runs once with network before the model (docs/environments.md):", where)
	}
	if x.d.final < 2000 {
		b.WriteString(" the example in docs/environments.md.\n\n")
		return
	}
	b.WriteString("\n\n" + codeBlock(a.Setup, "sh") + "\n")
}

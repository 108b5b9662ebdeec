package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/frognano/frognano/check/deps"
	"github.com/frognano/frognano/runner"
	"github.com/frognano/frognano/runner/audit"
)

// This file renders Result.Dependencies (check/deps): the warning at the top when a new
// version has a known vulnerability, the Dependencies section of the report, the PR body and
// the check run, and the headline's line. Every name, version, path, id and summary came from
// the patch or the operator's export: each goes through codeSpan, codeCell or prose, redacted.

// vulnerableChanges returns the changes whose new version has a known vulnerability.
func vulnerableChanges(r *runner.Result) []deps.Change {
	if r == nil || r.Patch == nil {
		return nil
	}
	return r.Dependencies.Vulnerable()
}

// vulnCount is how many (change, vulnerability) pairs were found.
func vulnCount(cs []deps.Change) int {
	n := 0
	for _, c := range cs {
		n += len(c.Vulns)
	}
	return n
}

// writeDepsWarning is the warning, at the top, that the patch adds versions with known
// vulnerabilities, and the one that it changes where dependencies come from
// (deps_sources.go).
func (x *render) writeDepsWarning(b *strings.Builder) {
	x.writeVulnWarning(b)
	x.writeSourceWarning(b)
}

func (x *render) writeVulnWarning(b *strings.Builder) {
	cs := vulnerableChanges(x.r)
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(b, "> [!CAUTION]\n> **The patch adds dependency versions with known vulnerabilities** (%d, in OSV's offline data):\n>\n", vulnCount(cs))
	n := 0
	for _, c := range cs {
		for _, v := range c.Vulns {
			if n == x.d.trust {
				fmt.Fprintf(b, "> - and %d more (listed under Dependencies)\n", vulnCount(cs)-n)
				b.WriteString("\n")
				return
			}
			n++
			fmt.Fprintf(b, "> - %s %s: %s\n", codeSpan(x.redact(c.Name), 100), codeSpan(x.redact(v.Version), 60), x.vulnLine(v))
		}
	}
	b.WriteString("\n")
}

// vulnLine is "ID (aliases), severity, fixed in X".
func (x *render) vulnLine(v deps.Vuln) string {
	s := codeSpan(x.redact(v.ID), 60)
	if len(v.Aliases) > 0 {
		var as []string
		for i, a := range v.Aliases {
			if i == 3 {
				as = append(as, "…")
				break
			}
			as = append(as, codeSpan(x.redact(a), 60))
		}
		s += " (" + strings.Join(as, ", ") + ")"
	}
	if v.Severity != "" {
		s += ", severity " + codeSpan(x.redact(v.Severity), 60)
	}
	if len(v.Fixed) > 0 {
		var fs []string
		for i, f := range v.Fixed {
			if i == 3 {
				fs = append(fs, "…")
				break
			}
			fs = append(fs, codeSpan(x.redact(f), 60))
		}
		s += ", fixed in " + strings.Join(fs, ", ")
	} else {
		s += ", no fixed version known"
	}
	return s
}

// installText says whether the environment the tests ran in had the new version.
func installText(c deps.Change, x *render) string {
	if !audit.Installable(c) {
		return ""
	}
	if x.r.TestsAfter == nil {
		return "no tests ran with the patch"
	}
	if c.Toolchain() {
		return "the image's Go toolchain (not installed by the patch)"
	}
	switch c.Install {
	case deps.Installed:
		if c.Found != "" && c.New[0].Req != "" {
			return "yes (" + codeCell(x.redact(c.Found), 40) + ")"
		}
		return "yes"
	case deps.Missing:
		if c.Found != "" {
			return "**no**, found " + codeCell(x.redact(c.Found), 40) + ": the tests after ran without this version"
		}
		return "**no**: the tests after ran without it"
	}
	return "most likely not (see below)"
}

// versions lists what entries say: the version as written, and where the entry comes from
// when that is not its registry.
func versions(x *render, ps []deps.Package) string {
	var s []string
	for i, p := range ps {
		if i == 3 {
			s = append(s, fmt.Sprintf("and %d more", len(ps)-i))
			break
		}
		s = append(s, x.entry(p, true))
	}
	return strings.Join(s, ", ")
}

// entry is one entry's version and source: "`1.0`", "from the repository `git+…`", "`0.1`
// from the local path `../x`". cell: inside a table cell.
func (x *render) entry(p deps.Package, cell bool) string {
	code := codeSpan
	if cell {
		code = codeCell
	}
	words, where := p.Source.Describe()
	v := ""
	if p.Display() != "(no version)" || words == "" {
		v = code(x.redact(p.Display()), 60)
	}
	if words == "" {
		return v
	}
	if v != "" {
		v += " "
	}
	return v + "from " + words + " " + code(x.redact(where), 120)
}

// pkgName is a change's package as a table shows it: its name (or, when a URL or path names
// none, "(no name)") and its role.
func (x *render) pkgName(c deps.Change, cell bool) string {
	code := codeSpan
	if cell {
		code = codeCell
	}
	n := "(no name)"
	if c.Name != "" {
		n = code(x.redact(c.Name), 100)
	}
	if c.Role != "" {
		n += " (" + c.Role + ")"
	}
	return n
}

// writeDependencies is the Dependencies section: every package the patch adds, removes or
// changes, its known vulnerabilities, whether the tests ran with it, and what was not checked.
func (x *render) writeDependencies(b *strings.Builder) {
	rep := x.r.Dependencies
	if x.r.Patch == nil || rep == nil {
		return
	}
	b.WriteString("## Dependencies\n\n")
	fmt.Fprintf(b, "The patch changes %d dependency file(s): %s.\n\n", len(rep.Files), x.codeList(rep.Files, x.d.dropped+3))
	if len(rep.Changes) > 0 {
		b.WriteString("| package | ecosystem | file | change | known vulnerabilities | installed when the tests ran |\n|---|---|---|---|---|---|\n")
		unchecked := false
		for i, c := range rep.Changes {
			if i == x.d.files {
				fmt.Fprintf(b, "| and %d more | | | | | |\n", len(rep.Changes)-i)
				break
			}
			change := ""
			switch c.Kind {
			case deps.Added:
				change = "added " + versions(x, c.New)
			case deps.Removed:
				change = "removed " + versions(x, c.Old)
			case deps.Unlisted:
				change = "no longer found: " + versions(x, c.Old) + " (these files hold what frognano could not read, listed below)"
			case deps.Moved:
				change = "moved from " + codeCell(x.redact(c.Old[0].In), 100)
			default:
				switch {
				case len(c.Old) == 0: // another entry of a package that keeps its others
					change = "also " + versions(x, c.New)
				case len(c.New) == 0:
					change = "no longer " + versions(x, c.Old) + " (its other entries stay)"
				default:
					change = versions(x, c.Old) + " → " + versions(x, c.New)
					if c.Old[0].In != c.New[0].In {
						change += " (was in " + codeCell(x.redact(c.Old[0].In), 100) + ")"
					}
				}
			}
			vulns := ""
			switch {
			case len(c.Vulns) > 0:
				var ids []string
				for _, v := range c.Vulns {
					ids = append(ids, codeCell(x.redact(v.ID), 60))
				}
				vulns = fmt.Sprintf("**%d**: %s", len(c.Vulns), strings.Join(ids, ", "))
			case c.Kind != deps.Removed && c.Kind != deps.Unlisted && slices.Contains(rep.VulnChecked, c.Ecosystem) && hasVersion(c.New):
				vulns = "none known"
			}
			inst := installText(c, x)
			if audit.Installable(c) && c.Install == deps.Unchecked && !c.Toolchain() && x.r.TestsAfter != nil {
				unchecked = true
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", x.pkgName(c, true), escapePunct(c.Ecosystem),
				codeCell(x.redact(c.File), 100), change, vulns, inst)
		}
		b.WriteString("\n")
		if unchecked {
			b.WriteString("A version the patch adds was not in the environment the tests ran in unless the table says so: " +
				"that environment was built from the base commit, and the sandbox is offline, so it could not install it. " +
				"The tests after most likely ran without it. frognano checks Python distributions and Go modules in the " +
				"environment image; other packages are not checked.\n\n")
		}
	}
	x.writeSettings(b)
	x.writeUnread(b)
	x.writeVulnList(b)
	switch {
	case !rep.VulnData:
		b.WriteString("No vulnerability data was configured (`FROGNANO_OSV_DIR`): the versions were not checked for known vulnerabilities.\n\n")
	case len(rep.VulnChecked) == 0:
		b.WriteString("No version was checked for known vulnerabilities (see the notes).\n\n")
	default:
		var es []string
		for _, e := range rep.VulnChecked {
			es = append(es, escapePunct(e))
		}
		fmt.Fprintf(b, "Checked for known vulnerabilities against OSV's offline exports (`FROGNANO_OSV_DIR`): %s.\n\n", strings.Join(es, ", "))
	}
	for i, n := range rep.Notes {
		if i == x.d.notes {
			fmt.Fprintf(b, "- and %d more notes\n", len(rep.Notes)-i)
			break
		}
		fmt.Fprintf(b, "- %s\n", prose(x.redact(n), x.d.note))
	}
	if len(rep.Notes) > 0 {
		b.WriteString("\n")
	}
}

func hasVersion(ps []deps.Package) bool {
	for _, p := range ps {
		if p.Version != "" && p.Checkable() {
			return true
		}
	}
	return false
}

// writeVulnList lists each known vulnerability with its summary.
func (x *render) writeVulnList(b *strings.Builder) {
	cs := vulnerableChanges(x.r)
	if len(cs) == 0 {
		return
	}
	b.WriteString("Known vulnerabilities of the new versions:\n\n")
	n := 0
	for _, c := range cs {
		for _, v := range c.Vulns {
			if n == x.d.trust {
				fmt.Fprintf(b, "- and %d more\n\n", vulnCount(cs)-n)
				return
			}
			n++
			line := fmt.Sprintf("- %s %s in %s: %s", codeSpan(x.redact(c.Name), 100), codeSpan(x.redact(v.Version), 60),
				codeSpan(x.redact(c.File), 100), x.vulnLine(v))
			if v.Summary != "" {
				line += ". " + prose(x.redact(v.Summary), 200)
			}
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("\n")
}

// depsHeadline is the headline's part about dependencies: known vulnerabilities first, then
// new versions the tests ran without.
func depsHeadline(r *runner.Result) []string {
	if r.Patch == nil || r.Dependencies == nil {
		return nil
	}
	x := newRender(r, nil, 0)
	var parts []string
	if line := sourcesHeadline(r); line != "" {
		parts = append(parts, line)
	}
	if cs := vulnerableChanges(r); len(cs) > 0 {
		var s []string
		for _, c := range cs {
			if len(s) == 5 {
				s = append(s, "and more (listed in the pull request)")
				break
			}
			ids := []string{}
			for _, v := range c.Vulns {
				ids = append(ids, codeSpan(v.ID, 60))
			}
			s = append(s, codeSpan(c.Name, 100)+" "+codeSpan(c.Vulns[0].Version, 60)+" ("+strings.Join(ids, ", ")+")")
		}
		parts = append(parts, "**The patch adds dependency versions with known vulnerabilities:** "+strings.Join(s, "; ")+".")
	}
	if r.TestsAfter == nil {
		return parts
	}
	var missing, likely []string
	for _, c := range r.Dependencies.Changes {
		if !audit.Installable(c) || c.Install == deps.Installed || c.Toolchain() {
			continue
		}
		list := &likely
		if c.Install == deps.Missing {
			list = &missing
		}
		switch n := len(*list); {
		case n == 5:
			*list = append(*list, "and more")
		case n < 5:
			*list = append(*list, codeSpan(c.Name, 100)+" "+versions(x, c.New))
		}
	}
	if len(missing) > 0 {
		parts = append(parts, "New dependency versions the tests after ran without (not in their environment; the offline sandbox could not install them): "+
			strings.Join(missing, ", ")+".")
	}
	if len(likely) > 0 {
		parts = append(parts, "New dependency versions the tests after most likely ran without (added after their environment was built; not checked): "+
			strings.Join(likely, ", ")+".")
	}
	return parts
}

// depsTitle is what the check run's title adds when a new version has a known vulnerability,
// and when the patch changes where dependencies come from.
func depsTitle(r *runner.Result) string {
	t := ""
	if cs := vulnerableChanges(r); len(cs) > 0 {
		t += fmt.Sprintf(" Known vulnerabilities in %d new dependency version(s).", len(cs))
	}
	if fs := sourceFindings(r); len(fs) > 0 {
		t += fmt.Sprintf(" Where dependencies come from changes (%d).", len(fs))
	}
	return t
}

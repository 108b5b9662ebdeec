package report

import (
	"fmt"
	"strings"

	"github.com/frognano/frognano/check/deps"
	"github.com/frognano/frognano/runner"
)

// This file renders what check/deps found about where dependencies come from: the warning at
// the top when the patch changes it (a new package index, a package that now comes from a
// URL, a repository or a path), the settings and the unread entries of the Dependencies
// section, and the headline's line. Every name, path, URL and reason came from the patch: each
// goes through codeSpan, codeCell or prose, redacted.

// sourceFindings returns the changes of source of the checked patch.
func sourceFindings(r *runner.Result) []deps.Finding {
	if r == nil || r.Patch == nil {
		return nil
	}
	return r.Dependencies.Findings()
}

// settingWords says what a setting does, in words, for a finding. uv's settings are the same
// in [tool.uv], its [tool.uv.pip] and uv.toml (check/deps names them with that prefix).
func settingWords(name string) string {
	short := name
	for _, p := range []string{"tool.uv.pip.", "tool.uv.", "uv.toml.pip.", "uv.toml."} {
		if k, ok := strings.CutPrefix(name, p); ok {
			short = "uv:" + k
			break
		}
	}
	switch {
	case short == "--index-url" || short == "uv:index-url" || short == "pypi.url" || short == "registry":
		return "replaces the package index: every package is fetched from there"
	case short == "--extra-index-url" || short == "uv:extra-index-url" || short == "uv:index" || short == "tool.poetry.source" ||
		short == "tool.pdm.source" || strings.HasPrefix(short, "pypi.") && strings.HasSuffix(short, ".url") ||
		strings.HasPrefix(short, "repositories.") && strings.HasSuffix(short, ".url"):
		return "adds a package index: packages are looked for there too, and one published there under the name of a package this project uses can be installed instead of it (dependency confusion)"
	case strings.HasSuffix(short, ":registry"):
		return "replaces the registry of the scope's packages: they are fetched from there"
	case short == "--find-links" || short == "uv:find-links":
		return "adds a place package archives are taken from, besides the index"
	case short == "--trusted-host" || short == "uv:allow-insecure-host" || short == "uv:trusted-host":
		return "trusts this host without a valid HTTPS certificate"
	case short == "strict-ssl" || strings.HasSuffix(short, "verify_ssl") || strings.HasPrefix(short, "certificates."):
		return "stops checking the index's HTTPS certificate: whoever is on the way can answer for it"
	case short == "uv:index-strategy":
		return "lets any index answer for any package, not only the first that has it (dependency confusion)"
	case strings.HasSuffix(short, "install-mirror") || short == "uv:python-downloads-json-url":
		return "changes where uv downloads Python itself from"
	case short == "--requirement" || short == "--constraint":
		return "makes pip download a requirements file when it runs; what it holds was not read"
	}
	return "changes where packages are fetched from"
}

// findingLine is one finding, in words.
func (x *render) findingLine(f deps.Finding) string {
	if s := f.Setting; s != nil {
		return fmt.Sprintf("%s sets %s %s: it %s.", codeSpan(x.redact(s.File), 100), codeSpan(x.redact(s.Name), 60),
			codeSpan(x.redact(s.Value), 150), settingWords(s.Name))
	}
	c := f.Change
	var now []string
	for _, p := range c.New {
		if p.Source.Kind != deps.Registry {
			now = append(now, x.entry(p, false))
		}
	}
	line := fmt.Sprintf("%s in %s: ", x.pkgName(*c, false), codeSpan(x.redact(c.File), 100))
	if c.Kind == deps.Added {
		line += "new, " + strings.Join(now, ", ")
	} else {
		line += "now " + strings.Join(now, ", ") + "; it was " + versions(x, c.Old)
		if len(c.Old) > 0 && c.Old[0].Source.Kind == deps.Registry {
			line += " from its registry"
		}
	}
	for _, p := range c.New {
		if p.Source.Outside {
			line += " (a path outside the repository: what it names is not in the pull request)"
			break
		}
	}
	return line + "."
}

// writeSourceWarning is the warning, at the top, that the patch changes where dependencies
// come from.
func (x *render) writeSourceWarning(b *strings.Builder) {
	fs := sourceFindings(x.r)
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(b, "> [!CAUTION]\n> **The patch changes where dependencies come from** (%d). The package managers fetch and run "+
		"what these name; no vulnerability data covers them:\n>\n", len(fs))
	for i, f := range fs {
		if i == x.d.trust {
			fmt.Fprintf(b, "> - and %d more (listed under Dependencies)\n", len(fs)-i)
			break
		}
		fmt.Fprintf(b, "> - %s\n", x.findingLine(f))
	}
	b.WriteString("\n")
}

// writeSettings lists the settings the patch adds to or removes from the dependency files.
func (x *render) writeSettings(b *strings.Builder) {
	ss := x.r.Dependencies.Settings
	if len(ss) == 0 {
		return
	}
	b.WriteString("Settings of these files that the patch adds or removes:\n\n")
	for i, s := range ss {
		if i == x.d.files {
			fmt.Fprintf(b, "- and %d more\n", len(ss)-i)
			break
		}
		verb := "adds"
		if s.Kind == deps.Removed {
			verb = "removes"
		}
		fmt.Fprintf(b, "- %s %s %s", codeSpan(x.redact(s.File), 100), verb, codeSpan(x.redact(s.Name), 60))
		if s.Value != "" {
			b.WriteString(" " + codeSpan(x.redact(s.Value), 150))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// writeUnread lists what could not be read, with why.
func (x *render) writeUnread(b *strings.Builder) {
	us := x.r.Dependencies.Unread
	if len(us) == 0 {
		return
	}
	b.WriteString("Not read (the package managers do read these; what they say is not in the list above):\n\n")
	for i, u := range us {
		if i == x.d.notes {
			fmt.Fprintf(b, "- and %d more\n", len(us)-i)
			break
		}
		where := codeSpan(x.redact(u.File), 100)
		if u.Line > 0 {
			where += fmt.Sprintf(" line %d", u.Line)
		}
		if u.AtBase {
			where += " (at the base commit)"
		}
		if u.What != "" {
			where += " " + codeSpan(x.redact(u.What), 150)
		}
		// Why is frognano's own words; Detail is what the file or a parser said.
		why := u.Why
		if u.Detail != "" {
			why += ": " + codeSpan(x.redact(u.Detail), x.d.note)
		}
		fmt.Fprintf(b, "- %s: %s.\n", where, why)
	}
	b.WriteString("\n")
}

// sourcesHeadline is the headline's line about where dependencies come from.
func sourcesHeadline(r *runner.Result) string {
	fs := sourceFindings(r)
	if len(fs) == 0 {
		return ""
	}
	var s []string
	for i, f := range fs {
		if i == 5 {
			s = append(s, "and more (listed in the pull request)")
			break
		}
		if f.Setting != nil {
			s = append(s, "a new "+codeSpan(f.Setting.Name, 60)+" in "+codeSpan(f.Setting.File, 100))
			continue
		}
		s = append(s, codeSpan(f.Change.Name, 100)+" in "+codeSpan(f.Change.File, 100))
	}
	return "**The patch changes where dependencies come from:** " + strings.Join(s, "; ") + "."
}

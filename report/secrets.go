package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/frognano/frognano/check/secrets"
)

// writeSecrets is the secrets check's section: what gitleaks' rules found in the files the
// patch publishes, one row per finding (rule, file, line, and what allowed it), never a value.
// What refused the patch comes first. Only the file's name came from the model: it is a code
// span, redacted; the rest is frognano's own words.
func (x *render) writeSecrets(b *strings.Builder) {
	r := x.r
	if len(r.SecretFindings)+len(r.SecretsAllowed) == 0 {
		return
	}
	b.WriteString("## Secrets\n\n")
	switch {
	case len(r.SecretFindings) > 0 && r.Patch == nil:
		b.WriteString("**The patch was refused:** the files it would publish hold what looks like a secret " +
			"(gitleaks' rules, `FROGNANO_SECRETS=block`), so nothing was pushed. " +
			"A known test fixture can be let through by the base branch's `.gitleaks.toml` or `.gitleaksignore`.\n\n")
	case len(r.SecretFindings) > 0:
		b.WriteString("**The patch holds what looks like a secret** (gitleaks' rules); " +
			"it was published because `FROGNANO_SECRETS=warn`.\n\n")
	default:
		b.WriteString("Gitleaks' rules found these in the files the patch publishes; each is allowed, so none refuses the patch.\n\n")
	}
	b.WriteString("| rule | file | line | allowed by |\n|---|---|---|---|\n")
	rows := append(append([]secrets.Finding{}, r.SecretFindings...), r.SecretsAllowed...)
	for i, f := range rows {
		if i == x.d.secrets {
			fmt.Fprintf(b, "| and %d more | | | |\n", len(rows)-i)
			break
		}
		line := strconv.Itoa(f.Line)
		if f.Line == 0 {
			line = "its name"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", codeCell(f.Rule, 80), codeCell(x.redact(f.File), 200), line, allowedBy(f))
	}
	b.WriteString("\n")
}

// allowedBy is a finding's "allowed by" cell: frognano's words, file names as code spans.
func allowedBy(f secrets.Finding) string {
	switch f.Allowed {
	case secrets.Refuses:
		return "**nothing**"
	case secrets.InBase:
		return "already in the base"
	case secrets.ByIgnore:
		return codeCell(secrets.IgnorePath, 0) + " of the base"
	case secrets.ByAllowList:
		return codeCell(secrets.AllowListPath, 0) + " of the base"
	case secrets.PlaceholderRule:
		return "placeholder value (gitleaks' rule " + codeCell(f.Rule, 80) + ")"
	case secrets.PlaceholderDefault:
		return "placeholder value (gitleaks' default allow-list)"
	}
	return codeCell(string(f.Allowed), 80)
}

// secretsLine names at most max findings in markdown, the rule and the file (the model chose
// its name) as code spans: "`rule` in `file` line N; ...".
func secretsLine(fs []secrets.Finding, max int) string {
	var s []string
	for i, f := range fs {
		if i == max {
			s = append(s, fmt.Sprintf("and %d more (listed in the pull request)", len(fs)-i))
			break
		}
		s = append(s, fmt.Sprintf("%s in %s %s", codeSpan(f.Rule, 100), codeSpan(f.File, 100), f.Where()))
	}
	return strings.Join(s, "; ")
}

package runner

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/frognano/frognano/runner/patch"
	"github.com/frognano/frognano/runner/secrets"
)

// SecretsError refuses a patch in which runner/secrets found what looks like a secret
// (FROGNANO_SECRETS=block). Its text names each finding by rule, file and line, never a value.
type SecretsError struct{ Findings []secrets.Finding }

func (e *SecretsError) Error() string {
	return "it holds what looks like a secret (gitleaks' rules; FROGNANO_SECRETS=block): " + secrets.List(e.Findings) +
		". A known test fixture can be allowed by the base branch's .gitleaks.toml"
}

// scanSecrets runs runner/secrets over the checked patch p: under Block (the default) a
// finding, or a scan that could not be done, refuses the patch with the returned error; under
// Warn the patch is kept and a note lists what was found. Either way Result.SecretFindings
// holds the findings.
func (x *run) scanSecrets(ctx context.Context, p *patch.Checked) error {
	if len(p.Diff) == 0 {
		return nil
	}
	// The allow-list is the base branch's (a follow-up's SetupCommit), never one of frognano's
	// own branch, which an earlier run's patch wrote.
	found, err := secrets.Scan(ctx, patch.HostGit(x.spec.RepoDir),
		secrets.Input{Base: x.base, Diff: p.Diff, AllowListAt: cmp.Or(x.spec.SetupCommit, x.base)})
	warn := x.r.cfg.Secrets == secrets.Warn
	switch {
	case err != nil && !warn:
		return fmt.Errorf("it could not be scanned for secrets (FROGNANO_SECRETS=block): %w", err)
	case err != nil:
		x.note("The patch could not be scanned for secrets; it is kept because FROGNANO_SECRETS=warn: " + err.Error())
	case len(found) == 0:
	case !warn:
		x.res.SecretFindings = found
		return &SecretsError{Findings: found}
	default:
		x.res.SecretFindings = found
		x.note("The patch holds what looks like a secret (gitleaks' rules); it is kept because FROGNANO_SECRETS=warn: " +
			secrets.List(found))
	}
	return nil
}

// secretsLine names at most max findings in markdown, the file (the model chose its name) as a
// code span: "rule in `file` line N; ...".
func secretsLine(fs []secrets.Finding, max int) string {
	var s []string
	for i, f := range fs {
		if i == max {
			s = append(s, fmt.Sprintf("and %d more (listed in the run's report)", len(fs)-i))
			break
		}
		s = append(s, fmt.Sprintf("%s in %s line %d", prose(f.Rule, 100), codeSpan(f.File, 100), f.Line))
	}
	return strings.Join(s, "; ")
}

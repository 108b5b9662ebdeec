package runner

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/secrets"
)

// SecretsError refuses a patch in which check/secrets found what looks like a secret
// (FROGNANO_SECRETS=block). Its text names each finding by rule, file and line, never a value;
// the report shows them as a table (writeSecrets), and the run's notes do not repeat them.
type SecretsError struct{ Findings []secrets.Finding }

func (e *SecretsError) Error() string {
	return "it holds what looks like a secret (gitleaks' rules; FROGNANO_SECRETS=block): " + secrets.List(e.Findings) +
		". A known test fixture can be allowed by the base branch's .gitleaks.toml or .gitleaksignore"
}

// scanSecrets runs check/secrets over what the checked patch p publishes: under Block (the
// default) a finding, or a scan that could not be done, refuses the patch with the returned
// error; under Warn the patch is kept. Either way Result.SecretFindings holds the findings and
// Result.SecretsAllowed what was found and not blamed on the patch, which the report lists.
func (x *run) scanSecrets(ctx context.Context, p *patch.Checked) error {
	if len(p.Diff) == 0 {
		return nil
	}
	// The allow rules are the base branch's (a follow-up's SetupCommit), never those of
	// frognano's own branch, which an earlier run's patch wrote.
	found, err := secrets.Scan(ctx, patch.HostGit(x.spec.RepoDir),
		secrets.Input{Base: x.base, Diff: p.Diff, AllowListAt: cmp.Or(x.spec.SetupCommit, x.base)})
	warn := x.r.cfg.Secrets == secrets.Warn
	switch {
	case err != nil && !warn:
		return fmt.Errorf("it could not be scanned for secrets (FROGNANO_SECRETS=block): %w", err)
	case err != nil:
		x.note("The patch could not be scanned for secrets; it is kept because FROGNANO_SECRETS=warn: " + err.Error())
		return nil
	}
	x.res.SecretFindings, x.res.SecretsAllowed = found.Findings, found.Allowed
	if len(found.Findings) > 0 && !warn {
		return &SecretsError{Findings: found.Findings}
	}
	return nil
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
		s = append(s, fmt.Sprintf("%s in %s line %d", codeSpan(f.Rule, 100), codeSpan(f.File, 100), f.Line))
	}
	return strings.Join(s, "; ")
}

package audit

import (
	"context"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/check/secrets"
)

// SecretsError refuses a patch in which check/secrets found what looks like a secret
// (FROGNANO_SECRETS=block). Its text names each finding by rule, file and line, never a value;
// the report shows them as a table (package report), and the run's notes do not repeat them.
type SecretsError struct{ Findings []secrets.Finding }

func (e *SecretsError) Error() string {
	return "it holds what looks like a secret (gitleaks' rules; FROGNANO_SECRETS=block): " + secrets.List(e.Findings) +
		". A known test fixture can be allowed by the base branch's .gitleaks.toml or .gitleaksignore"
}

// ScanError is a secrets scan that could not be done under FROGNANO_SECRETS=block: the patch is
// refused as not scanned, never published unread.
type ScanError struct{ Err error }

func (e *ScanError) Error() string {
	return "it could not be scanned for secrets (FROGNANO_SECRETS=block): " + e.Err.Error()
}
func (e *ScanError) Unwrap() error { return e.Err }

// Secrets runs check/secrets over what the checked patch p publishes: under secrets.Block (the
// default) a finding, or a scan that could not be done, refuses the patch with the returned
// error (a *SecretsError for findings, a *ScanError for a scan that could not be done); under secrets.Warn the patch is kept. found are the
// findings blamed on the patch (Result.SecretFindings) and allowed what was found and not
// blamed on it (Result.SecretsAllowed), which the report lists; both are nil when the scan
// could not be done.
func (a *Auditor) Secrets(ctx context.Context, p *patch.Checked, mode secrets.Mode) (found, allowed []secrets.Finding, err error) {
	if len(p.Diff) == 0 {
		return nil, nil, nil
	}
	// The allow rules are the base branch's (a follow-up's SetupCommit), never those of
	// frognano's own branch, which an earlier run's patch wrote.
	res, err := secrets.Scan(ctx, patch.HostGit(a.RepoDir),
		secrets.Input{Base: a.Base, Diff: p.Diff, AllowListAt: a.ConfigAt})
	warn := mode == secrets.Warn
	switch {
	case err != nil && !warn:
		return nil, nil, &ScanError{err}
	case err != nil:
		a.Note("The patch could not be scanned for secrets; it is kept because FROGNANO_SECRETS=warn: " + err.Error())
		return nil, nil, nil
	}
	if len(res.Findings) > 0 && !warn {
		return res.Findings, res.Allowed, &SecretsError{Findings: res.Findings}
	}
	return res.Findings, res.Allowed, nil
}

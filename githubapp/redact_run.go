package githubapp

import secretscan "github.com/frognano/frognano/check/secrets"

// RedactRun is Redact, then gitleaks' default rules (check/secrets.Redact: "[secret: RULE]" in
// place of every value they find). It is for the text of a run that code the patch or the model
// controls may have written, whatever kind of secret it holds: the output of the tests run with
// the patch, the test names they report, the patch's paths, the operator's scanners' messages,
// the setup log, the model's last words, and the report, pull request body, status comment and
// check run built from them. A test the patch adds can print a key it assembles at run time (the
// patch's files hold nothing gitleaks reads); this is what keeps it off GitHub and the run page.
// It costs far more than Redact (gitleaks reads about 1.5 MB/s), so it is not for log lines.
func RedactRun(s string) string {
	return secretscan.Redact(Redact(s))
}

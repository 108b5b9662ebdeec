// Package secrets owns the scan of a patch for secrets a repository must not receive, with
// gitleaks' default rules used as a library, entirely offline.
//
// What is scanned is what will be published: the patch is applied to the base commit of the
// host's own clone in a throwaway index and object directory (patch.Published), and every file
// the patched tree adds, changes or renames is read whole from git's objects, binary or not,
// whatever its name or size, never the diff text the sandbox produced; the text a file spells
// in UTF-16 (a NUL byte beside each character, what Windows tools write) is read too. A value a
// rule finds
// there is the patch's unless the base's file at the same path (or the rename's source) holds
// the same value by the same rule: a key the patch assembles from lines it did not change is
// the patch's, one the base already holds is listed as such.
//
// Nothing the patch writes beside a secret can let it through. gitleaks' own allow-lists count
// only where they judge the secret's own text (regexes on the secret, stopwords: a
// placeholder), a global regex only where it matches the whole secret, and none judges a
// private key, whose block holds the label, headers and decoy lines the patch writes; their
// path allow-lists, their regexes on the rest of the line or match and
// `gitleaks:allow` comments do not. A repository lets known fixtures through with the
// allow-lists of a `.gitleaks.toml` and the fingerprints of a `.gitleaksignore`, both read from
// git's objects at its base branch's head (Input.AllowListAt), never from the patch nor from
// frognano's own branch; the `.gitleaks.toml`'s rules and every other setting are ignored.
// Every finding an allow rule let through is still returned (Result.Allowed), with the rule
// that did.
//
// Nor can a value the patch writes before it: a rule's match ends at the first value it takes
// (a Kubernetes Secret's first data entry), and gitleaks reads on after the match, so an entry
// written first (a placeholder, a Helm template, a value the base held) hid the values after it.
// Each file, the base's too, is read again with the values found so far blanked, until a round
// finds nothing new (uncover.go); Redact does the same, with its detector free of allow-lists
// and the placeholders dropped after. Past 16 rounds the scan fails: the patch is not published
// half read.
//
// It must never store, log or return a finding's value: a Finding names the rule, the file,
// the line and what allowed it, nothing else; values are compared in memory, by hash, and
// gitleaks' own logger is silenced.
//
// It is one of the check packages (check/...): it must never hold a credential, start or reach a
// sandbox, talk to GitHub or the network, or import runner, githubapp, queue, run, server or web
// (internal/layout's test checks the imports).
package secrets

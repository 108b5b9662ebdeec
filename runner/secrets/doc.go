// Package secrets owns the scan of a patch for secrets a repository must not receive: every
// line the patch adds or changes (a new file whole, a binary file by its content) goes through
// gitleaks' detector with its default rules, used as a library, entirely offline.
//
// What is scanned is what git really builds: the patch is applied to the base commit of the
// host's own clone in a throwaway index and object directory, and git's own diff of that tree
// against the base (with --text, so binary content is read as lines) is what the detector
// reads, never the diff text the sandbox produced. A repository may let known test fixtures
// through with the allow-lists of a `.gitleaks.toml` read from git's objects at its base
// branch's head (Input.AllowListAt), never from the patch nor from frognano's own branch; its
// rules and every other setting are ignored, and so are `gitleaks:allow` comments, which the
// patch itself could write.
//
// It must never store, log or return a finding's value: a Finding names the rule, the file and
// the line, nothing else, and gitleaks' own logger is silenced.
package secrets

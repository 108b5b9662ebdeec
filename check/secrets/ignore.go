package secrets

import (
	"strconv"
	"strings"
)

// IgnorePath is the file of the base commit whose fingerprints let single findings through
// (gitleaks' own format).
const IgnorePath = ".gitleaksignore"

// maxIgnoreEntries bounds the fingerprints read from one .gitleaksignore.
const maxIgnoreEntries = 100_000

// parseIgnore reads a .gitleaksignore as gitleaks does: one fingerprint a line, blank lines and
// lines starting with "#" skipped, surrounding space trimmed, backslashes in the path read as
// slashes. Only the global form FILE:RULE:LINE counts: the published tree is a commit that
// does not exist yet, so a COMMIT:FILE:RULE:LINE fingerprint names none of its findings, and a
// line of any other shape names nothing. The result is the set of fingerprints, at most
// maxIgnoreEntries of them. It never fails and never panics: the file is the repository's
// text, and a line it cannot read lets nothing through.
func parseIgnore(b []byte) map[string]bool {
	set := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if len(set) == maxIgnoreEntries {
			break
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) != 3 || f[0] == "" || f[1] == "" {
			continue
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || strconv.Itoa(n) != f[2] {
			continue
		}
		set[fingerprint(strings.ReplaceAll(f[0], `\`, "/"), f[1], n)] = true
	}
	return set
}

// fingerprint is gitleaks' global fingerprint of a finding: FILE:RULE:LINE.
func fingerprint(file, rule string, line int) string {
	return file + ":" + rule + ":" + strconv.Itoa(line)
}

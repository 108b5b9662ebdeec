package scanner

import (
	"regexp"
	"sort"
	"strings"
)

// Suppression is a comment, on a line the patch added or changed, that tells a scanner to
// skip findings: the patch could write it to hide what a scanner would report. Text is the
// directive as written (untrusted, cut).
type Suppression struct {
	File string
	Line int
	Kind string // frognano's name for the directive: "nosemgrep", "# nosec", "eslint-disable", ...
	For  string // the tools that honour it, for the reader
	Text string
}

// MaxSuppressions bounds the suppressions kept from one patch; the rest are counted.
const MaxSuppressions = 200

// maxDirective is the most characters of a directive kept as Text.
const maxDirective = 80

// tail is what may follow a directive: the rules or codes it names ("nosec B602, B607",
// "nolint:gosec", "disable=W0611"), so the reader sees what it silences.
const tail = `(?:[ \t]*[:=(\[]?[ \t]*["']?[\w@./:-]+["']?(?:[ \t]*,[ \t]*["']?[\w@./:-]+["']?)*[)\]]?)?`

// directive is one kind of suppression comment, matched on each added line in any case and
// anywhere on it: the tools accept many spellings (#nosec, # nosec, // #nosec; # NOQA), and a
// match inside a string is a false alarm a reviewer can dismiss, while a miss hides a finding.
type directive struct {
	kind, honouredBy string
	re               *regexp.Regexp
}

func dir(kind, honouredBy, re string) directive {
	return directive{kind, honouredBy, regexp.MustCompile(`(?i)` + re + tail)}
}

// directives are the suppression comments of the scanners frognano knows and of the other
// common security and lint tools. Deliberately not listed: "# type: ignore", "# pyright:
// ignore", "@ts-ignore", "@ts-expect-error" and "@ts-nocheck" (type checkers), "# pragma: no
// cover", "istanbul ignore" and "c8 ignore" (coverage), "prettier-ignore", "# fmt: off" and
// "# isort: skip" (formatters): no security scanner honours them, and type-checker comments
// are in a great many ordinary patches, where listing them would bury the ones that hide
// findings.
var directives = []directive{
	dir("nosemgrep", "Semgrep", `\bnosem(?:grep)?\b`),
	dir("nosec", "Bandit, gosec", `\bnosec\b`),
	dir("noqa", "flake8, Ruff (its S rules are Bandit's)", `\bnoqa\b`),
	dir("nolint", "golangci-lint, clang-tidy", `\bnolint(?:nextline|begin)?\b`),
	dir("lint:ignore", "staticcheck", `\blint:(?:file-)?ignore\b`),
	dir("pylint: disable", "pylint", `\bpylint\s*:\s*(?:disable(?:-next)?|skip-file)\b`),
	dir("eslint-disable", "ESLint", `\beslint-disable(?:-next-line|-line)?\b`),
	dir("eslint configuration comment", "ESLint (turns rules off inline)", `(?:^|/\*|\*|//)\s*eslint\s+["']?[@\w/-]+["']?\s*:\s*["']?(?:off|0|warn|1)\b["']?`),
	dir("tslint:disable", "TSLint", `\btslint:disable\b`),
	dir("biome-ignore", "Biome", `\bbiome-ignore\b`),
	dir("deno-lint-ignore", "deno lint", `\bdeno-lint-ignore(?:-file)?\b`),
	dir("gitleaks:allow", "gitleaks", `\bgitleaks:allow\b`),
	dir("pragma: allowlist secret", "detect-secrets", `\bpragma:\s*allowlist\b`),
	dir("NOSONAR", "SonarQube", `\bNOSONAR\b`),
	dir("NOPMD", "PMD", `\bNOPMD\b`),
	dir("codeql", "CodeQL", `\b(?:codeql|lgtm)\s*\[`),
	dir("shellcheck disable", "ShellCheck", `\bshellcheck\s+disable\b`),
	dir("hadolint ignore", "hadolint", `\bhadolint\s+(?:global\s+)?ignore\b`),
	dir("checkov:skip", "Checkov", `\bcheckov:skip\b`),
	dir("tfsec:ignore", "tfsec", `\btfsec:ignore\b`),
	dir("trivy:ignore", "Trivy", `\btrivy:ignore\b`),
	dir("kics-scan ignore", "KICS", `\bkics-scan\s+(?:ignore|disable)\b`),
	dir("rubocop:disable", "RuboCop, Brakeman", `\brubocop:(?:disable|todo)\b`),
	dir("phpcs:ignore", "PHP_CodeSniffer", `\bphpcs:(?:ignore|disable)\b`),
	dir("@phpstan-ignore", "PHPStan", `@phpstan-ignore`),
	dir("@psalm-suppress", "Psalm", `@psalm-suppress\b`),
	dir("@SuppressWarnings", "SpotBugs, SonarJava, javac", `@Suppress(?:FB)?Warnings\b`),
	dir("SuppressMessage", ".NET analyzers", `\bSuppressMessage(?:Attribute)?\s*\(`),
	dir("#pragma warning disable", ".NET analyzers", `#\s*pragma\s+warning\s+disable\b`),
}

// Added is a run of consecutive lines the patch adds to one file, git's own view of the
// patched tree: Line is the number of its first line in the new file (1-based), Text the lines
// joined by "\n". The runner makes them from the host's diff (check/secrets.AddedLines).
type Added struct {
	Path string
	Line int
	Text string
}

// Suppressions returns the suppression comments on the added lines, one per file, line and
// kind, sorted by file and line; at most MaxSuppressions, more counts the rest. It never
// panics and reads each line once per directive, in time linear in its length.
func Suppressions(added []Added) (out []Suppression, more int) {
	type key struct {
		file string
		line int
		kind string
	}
	seen := map[key]bool{}
	for _, a := range added {
		if a.Path == "" || a.Path == "?" || a.Line < 1 {
			continue
		}
		for i, line := range strings.Split(a.Text, "\n") {
			n := a.Line + i
			for _, d := range directives {
				m := d.re.FindString(line)
				if m == "" {
					continue
				}
				k := key{a.Path, n, d.kind}
				if seen[k] {
					continue
				}
				seen[k] = true
				out = append(out, Suppression{File: a.Path, Line: n, Kind: d.kind, For: d.honouredBy,
					Text: clean(strings.TrimLeft(m, "/*# \t"), maxDirective)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	if len(out) > MaxSuppressions {
		more, out = len(out)-MaxSuppressions, out[:MaxSuppressions]
	}
	return out, more
}

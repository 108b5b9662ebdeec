package scanner

import (
	"encoding/json"
	"path"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
)

// Suppression is a comment, on a line the patch added or changed, that tells a scanner to
// skip findings (on its lines, or in the whole file for a generated-file marker), or a line of a
// .gitattributes that hides a file's diff from the reviewer: the patch could write it to hide
// what a scanner or a reviewer would see. Text is the directive as written (untrusted, cut).
type Suppression struct {
	File string
	Line int
	Kind string // frognano's name for the directive: "nosemgrep", "# nosec", "eslint-disable", ...
	For  string // the tools that honour it, for the reader
	Text string
	// InBase: the patch did not write it (its line is the base's), but it covers the whole
	// file, or the rest of it, where the patch adds lines (FileWide): a scanner skips them.
	InBase bool `json:",omitempty"`
}

// MaxSuppressions bounds the suppressions kept from one patch; the rest are counted.
const MaxSuppressions = 200

// maxDirective is the most characters of a directive kept as Text.
const maxDirective = 80

// tail is what may follow a directive: the rules or codes it names ("nosec B602, B607",
// "nolint:gosec", "disable=W0611"), so the reader sees what it silences.
const tail = `(?:[ \t]*[:=(\[]?[ \t]*["']?[\w@./:-]+["']?(?:[ \t]*,[ \t]*["']?[\w@./:-]+["']?)*[)\]]?)?`

// directive is one kind of suppression comment, matched on each added line (and in each block
// comment of several lines, read whole) in any case and anywhere on it: the tools accept many
// spellings (#nosec, # nosec, // #nosec; # NOQA), and a match inside a string is a false alarm
// a reviewer can dismiss, while a miss hides a finding.
type directive struct {
	kind, honouredBy string
	re               *regexp.Regexp
	// find, when set, is used instead of re: the directives whose grammar a regular expression
	// cannot say (every rule of an eslint configuration comment; any linguist-generated value but
	// "false"). Like regexp's FindAllStringIndex: at most n matches (all if n < 0).
	find func(s string, n int) [][]int
	in   func(path string) bool // the files it is a directive in; nil: any
}

func dir(kind, honouredBy, re string) directive {
	return directive{kind: kind, honouredBy: honouredBy, re: regexp.MustCompile(`(?i)` + re + tail)}
}

// findAll returns the places of at most n matches of d in s (all if n < 0).
func (d directive) findAll(s string, n int) [][]int {
	if d.find != nil {
		return d.find(s, n)
	}
	return d.re.FindAllStringIndex(s, n)
}

// attributesFile reports whether p is a .gitattributes file, whose lines tell git and GitHub
// how to show the files they name.
func attributesFile(p string) bool { return path.Base(p) == ".gitattributes" }

// directives are the suppression comments of the scanners frognano knows and of the other
// common security and lint tools. Deliberately not listed: "# type: ignore", "# pyright:
// ignore", "@ts-ignore", "@ts-expect-error" and "@ts-nocheck" (type checkers), "# pragma: no
// cover", "istanbul ignore" and "c8 ignore" (coverage), "prettier-ignore", "# fmt: off" and
// "# isort: skip" (formatters): no security scanner honours them, and type-checker comments
// are in a great many ordinary patches, where listing them would bury the ones that hide
// findings.
var directives = []directive{
	dir("nosemgrep", "Semgrep", `\bnosem(?:grep)?\b`),
	dir("nosec", "Bandit, gosec", `\b(?:nosec|gosec:disable)\b`),
	dir("noqa", "flake8, Ruff (its S rules are Bandit's)", `\b(?:noqa|ruff[ \t]*:[ \t]*(?:disable|ignore))\b`),
	dir("nolint", "golangci-lint, clang-tidy", `\bnolint(?:nextline|begin)?\b`),
	dir("lint:ignore", "staticcheck", `\blint:(?:file-)?ignore\b`),
	// pylint reads a list of pragmas after "pylint:", in any order ("enable=x, disable=y").
	dir("pylint: disable", "pylint", `\bpylint[ \t]*:[^;#\n]*?\b(?:disable(?:-next|-msg|-all)?|skip-file)\b`),
	dir("eslint-disable", "ESLint", `\beslint-disable(?:-next-line|-line)?\b`),
	{kind: "eslint configuration comment", honouredBy: "ESLint (turns rules off inline, in the whole file)", find: eslintOff(lineHead)},
	dir("tslint:disable", "TSLint", `\btslint:disable\b`),
	dir("biome-ignore", "Biome", `\bbiome-ignore\b`),
	dir("deno-lint-ignore", "deno lint", `\bdeno-lint-ignore(?:-file)?\b`),
	dir("gitleaks:allow", "gitleaks", `\bgitleaks:allow\b`),
	dir("trufflehog:ignore", "TruffleHog", `\btrufflehog:ignore\b`),
	dir("pragma: allowlist secret", "detect-secrets", `\bpragma:[ \t]*(?:allow|white)list\b`),
	dir("NOSONAR", "SonarQube", `\bNOSONAR\b`),
	dir("NOPMD", "PMD", `\bNOPMD\b`),
	dir("codeql", "CodeQL", `\b(?:codeql|lgtm)\s*\[`),
	// ShellCheck reads "# shellcheck" and key=value pairs in any order, values plain or quoted
	// ("source=/dev/null disable=SC2086"); extended-analysis=false turns its dataflow checks off.
	dir("shellcheck disable", "ShellCheck", `\bshellcheck[ \t]+(?:[a-z-]+=(?:'[^'\n]*'|"[^"\n]*"|[^\s'"]*)[ \t]+)*(?:disable|extended-analysis[ \t]*=[ \t]*["']?false)\b`),
	dir("hadolint ignore", "hadolint", `\bhadolint\s+(?:global\s+)?ignore\b`),
	dir("checkov:skip", "Checkov", `\bcheckov:skip\b`),
	dir("tfsec:ignore", "tfsec", `\btfsec:ignore\b`),
	dir("trivy:ignore", "Trivy", `\btrivy:ignore\b`),
	dir("kics-scan ignore", "KICS", `\bkics-scan\s+(?:ignore|disable)\b`),
	// RuboCop takes spaces around the colon ("# rubocop : disable"); push with -Cop disables too.
	dir("rubocop:disable", "RuboCop, Brakeman", `\brubocop[ \t]*:[ \t]*(?:disable|todo|push\b[^\n#]*?[ \t]-[a-z])`),
	dir("phpcs:ignore", "PHP_CodeSniffer", `(?:\bphpcs:(?:ignore(?:file)?|disable)|@codingStandardsIgnore(?:Line|Start|File))\b`),
	dir("@phpstan-ignore", "PHPStan", `@phpstan-ignore`),
	dir("@psalm-suppress", "Psalm", `@psalm-suppress\b`),
	dir("@SuppressWarnings", "SpotBugs, SonarJava, javac; Kotlin's @Suppress (detekt, ktlint)", `@(?:file:)?Suppress(?:(?:FB)?Warnings)?\b`),
	dir("SuppressMessage", ".NET analyzers", `\bSuppressMessage(?:Attribute)?\s*\(`),
	dir("#pragma warning disable", ".NET analyzers, MSVC", `#[ \t]*pragma[ \t]+warning[ \t]*(?:\([ \t]*)?disable\b`),
	dir("revive:disable", "revive", `\brevive:disable\b`),
	// A generated-file marker makes a scanner skip the whole file, whatever it holds: Go's
	// "Code generated ... DO NOT EDIT." (golangci-lint's default also takes "do not edit" and
	// "autogenerated file" anywhere in the file's first comments), Phabricator's "@generated",
	// .NET's "<auto-generated>".
	dir("generated-file marker", "golangci-lint, gosec -exclude-generated, staticcheck, revive (the whole file is skipped)",
		`\b(?:code generated\b.*\bdo not edit|do not edit|auto-?generated file|code generated by)\b`),
	dir("@generated", "tools that follow Phabricator's convention (Pyre, Flow, Buck, linters with a generated-files option): the whole file is skipped", `@generated\b`),
	dir("<auto-generated>", ".NET analyzers (the whole file is skipped)", `<auto-?generated\b`),
	// In a .gitattributes: a file marked generated is collapsed in the pull request's diff on
	// GitHub, and one marked -diff or binary shows no diff in git (nor, for binary, on GitHub).
	// Linguist takes linguist-generated as set when it is set or has any value but "false"
	// (lazy_blob.rb boolean_attribute, which compares case-sensitively): "=yes", "=FALSE".
	// -linguist-generated and !linguist-generated leave it to Linguist's own rules. Not
	// listed: linguist-vendored and linguist-documentation (they only take a file out of the
	// language statistics, its diff is shown), and diff=DRIVER (a driver is defined in the
	// reader's git configuration, not the repository: an unknown one is a plain diff).
	{kind: "linguist-generated", honouredBy: "GitHub (collapses the file's diff in the pull request), Linguist",
		find: linguistGenerated, in: attributesFile},
	{kind: "-diff / binary", honouredBy: "git and GitHub (the file's changes are shown as binary, with no diff)",
		re: regexp.MustCompile(`(?i)(?:^|\s)(?:-diff|binary)(?:\s|$)`), in: attributesFile},
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
// kind, sorted by file and line; at most MaxSuppressions, more counts the rest. Each line is
// read on its own, and each block comment (/* ... */) that spans lines is read whole too, as
// the tools read it: a directive whose words are on several lines ("/* eslint\n no-eval: off
// */") is listed at the line where it starts. It never panics and reads each line at most
// twice per directive, in time linear in its length.
func Suppressions(added []Added) (out []Suppression, more int) {
	type key struct {
		file string
		line int
		kind string
	}
	seen := map[key]bool{}
	add := func(a Added, n int, d directive, m string) {
		k := key{a.Path, n, d.kind}
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, Suppression{File: a.Path, Line: n, Kind: d.kind, For: d.honouredBy,
			Text: clean(strings.TrimLeft(m, directiveLead), maxDirective)})
	}
	for _, a := range added {
		if a.Path == "" || a.Path == "?" || a.Line < 1 {
			continue
		}
		for i, line := range strings.Split(a.Text, "\n") {
			for _, d := range directives {
				if d.in != nil && !d.in(a.Path) {
					continue
				}
				if loc := d.findAll(line, 1); len(loc) > 0 {
					add(a, a.Line+i, d, line[loc[0][0]:loc[0][1]])
				}
			}
		}
		if attributesFile(a.Path) {
			continue // no comments there: "src/*" is a pattern
		}
		var starts []int // the offset of each line of a.Text after the first
		for i := 0; i < len(a.Text); i++ {
			if a.Text[i] == '\n' {
				starts = append(starts, i+1)
			}
		}
		for _, c := range multiLineComments(a.Text) {
			comment := a.Text[c[0]:c[1]]
			for i, d := range directives {
				if !spans[i] || d.in != nil && !d.in(a.Path) {
					continue
				}
				for _, loc := range d.findAll(comment, -1) {
					m := comment[loc[0]:loc[1]]
					at := c[0] + loc[0] + len(m) - len(strings.TrimLeft(m, directiveLead))
					add(a, a.Line+sort.SearchInts(starts, at+1), d, m)
				}
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

// spans tells, for each of directives, whether it can match across a line break: the others
// find nothing in a comment read whole that the lines read alone do not.
var spans = func() []bool {
	out := make([]bool, len(directives))
	for i, d := range directives {
		out[i] = d.find != nil || matchesNewline(d.re)
	}
	return out
}()

// matchesNewline reports whether some match of re can hold a "\n" (or whether that cannot be told).
func matchesNewline(re *regexp.Regexp) bool {
	r, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(r *syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpAnyChar:
			return true
		case syntax.OpLiteral:
			for _, c := range r.Rune {
				if c == '\n' {
					return true
				}
			}
		case syntax.OpCharClass:
			for i := 0; i+1 < len(r.Rune); i += 2 {
				if r.Rune[i] <= '\n' && '\n' <= r.Rune[i+1] {
					return true
				}
			}
		}
		for _, s := range r.Sub {
			if walk(s) {
				return true
			}
		}
		return false
	}
	return walk(r)
}

// directiveLead is what a directive's text starts with that is not the directive: comment
// markers and space.
const directiveLead = "/*# \t\r\n"

// multiLineComments returns where each block comment of text that spans lines starts and ends;
// one not closed runs to the end of text (the rest of the comment is not the patch's, or not
// there).
func multiLineComments(text string) (out [][2]int) {
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], "/*")
		if j < 0 {
			break
		}
		start, end := i+j, len(text)
		if k := strings.Index(text[i+j+2:], "*/"); k >= 0 {
			end = i + j + 2 + k + 2
		}
		if strings.IndexByte(text[start:end], '\n') >= 0 {
			out = append(out, [2]int{start, end})
		}
		i = end
	}
	return out
}

// lineHead and blockHead start an eslint configuration comment: ESLint reads a block comment
// whose text, trimmed, starts with "eslint" and a space or newline (linter.js
// getDirectiveComments). A line is read from any comment marker or the line's start (a line
// inside a block comment); frognano also lists one in a // comment, which ESLint ignores.
var (
	lineHead  = regexp.MustCompile(`(?i)(?:^|/\*|\*|//)\s*eslint(?:\s|$)`)
	blockHead = regexp.MustCompile(`(?i)/\*\s*eslint\s`)
)

// eslintOff finds eslint configuration comments, from head to the end of the comment, that
// turn a rule off or down to a warning: any rule of the list, not only the first
// ("no-console: error, no-eval: off"), in every form ESLint takes ("off", 0, "warn", 1, quoted
// or not, or as an array's first item: ["off"], [0, {...}]). A comment that only turns rules
// on ("error", 2) is not listed. A match runs from the head to the end of the first such
// rule's severity.
func eslintOff(head *regexp.Regexp) func(s string, n int) [][]int {
	return func(s string, n int) (out [][]int) {
		end := 0
		for _, h := range head.FindAllStringIndex(s, -1) {
			if n >= 0 && len(out) >= n {
				break
			}
			if h[0] < end {
				continue // inside the comment read before
			}
			end = len(s)
			if k := strings.Index(s[h[1]:], "*/"); k >= 0 {
				end = h[1] + k
			}
			if e := offRule(s[h[1]:end]); e >= 0 {
				out = append(out, []int{h[0], h[1] + e})
			}
		}
		return out
	}
}

// offRule returns the end of the severity of the first rule in an eslint configuration list
// ("a: off, b: [1, {x: 0}]", JSON or levn) that is off or a warning, or -1. Only rules at the top
// level count ("x: 0" inside a rule's options is not a rule), and ESLint's description after
// " -- " is not read.
func offRule(b string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case '-':
			if i > 0 && isSpace(b[i-1]) && strings.HasPrefix(b[i:], "--") {
				j := i + 2
				for j < len(b) && b[j] == '-' {
					j++
				}
				if j >= len(b) || isSpace(b[j]) {
					return -1
				}
				i = j - 1
			}
		case ':':
			if depth == 0 {
				if e := offSeverity(b[i+1:]); e >= 0 {
					return i + 1 + e
				}
			}
		}
	}
	return -1
}

// offSeverity returns the end of v's severity when it turns the rule off or to a warning: off,
// warn, or a number whose value is 0 or 1 however it is spelled (0, 0.0, 1e0, -0: ESLint reads
// the comment's values as JSON or levn does, and compares numbers by value), bare, quoted (a
// double-quoted one with its JSON escapes decoded: "of\u0066") or first in an array.
func offSeverity(v string) int {
	i := 0
	skip := func() {
		for i < len(v) && isSpace(v[i]) {
			i++
		}
	}
	skip()
	array := i < len(v) && v[i] == '['
	if array {
		i++
		skip()
	}
	var q byte
	if i < len(v) && (v[i] == '"' || v[i] == '\'') {
		q = v[i]
		i++
	}
	j := i
	var word string
	if q == '"' {
		// To the closing quote, past escaped ones, and decoded as JSON decodes it.
		for j < len(v) && v[j] != '"' {
			if v[j] == '\\' {
				j++
			}
			j++
		}
		if j > len(v) {
			return -1
		}
		if err := json.Unmarshal([]byte(v[i-1:min(j+1, len(v))]), &word); err != nil {
			word = v[i:min(j, len(v))]
		}
	} else {
		for j < len(v) && (isWord(v[j]) || v[j] == '.' || v[j] == '-' || v[j] == '+') {
			j++
		}
		word = v[i:j]
	}
	switch w := strings.ToLower(strings.TrimSpace(word)); w {
	case "off", "warn":
	default:
		f, err := strconv.ParseFloat(w, 64)
		if err != nil || f != 0 && f != 1 {
			return -1
		}
	}
	if q != 0 && j < len(v) && v[j] == q {
		j++
	}
	if array && j < len(v) && v[j] == ']' {
		j++
	}
	return j
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// linguistGenerated finds a .gitattributes line that leaves linguist-generated set: git takes
// a line's last setting of an attribute, so the last of `linguist-generated`,
// `linguist-generated=VALUE`, `-linguist-generated` and `!linguist-generated` on the line
// decides, and it is listed (that word's place) when it is set or has any value but "false".
func linguistGenerated(s string, n int) (out [][]int) {
	if n == 0 {
		return nil
	}
	last := []int(nil)
	for i := 0; i < len(s); {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		// The name in any case (over-listing is the safe side); the value as Linguist
		// compares it, exactly: "FALSE" is not "false".
		name, value, hasValue := strings.Cut(s[i:j], "=")
		name = strings.ToLower(name)
		switch {
		case name == "linguist-generated":
			if hasValue && value == "false" {
				last = nil
			} else {
				last = []int{i, j}
			}
		case name == "-linguist-generated" || name == "!linguist-generated":
			last = nil
		}
		i = j
	}
	if last != nil {
		out = append(out, last)
	}
	return out
}

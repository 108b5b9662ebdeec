package scanner

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSuppressions: every spelling the tools accept is listed with the kind frognano names it
// by and the directive as written; comments that silence no security scanner are not.
func TestSuppressions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line, kind, text string
	}{
		{"x = eval(s)  # nosemgrep", "nosemgrep", "nosemgrep"},
		{"x = eval(s)  # nosemgrep: python.lang.eval, other.rule", "nosemgrep", "nosemgrep: python.lang.eval, other.rule"},
		{"// NOSEM", "nosemgrep", "NOSEM"},
		{"subprocess.call(c, shell=True)  # nosec B602, B607", "nosec", "nosec B602, B607"},
		{"os.system(c) #nosec", "nosec", "nosec"},
		{"h := md5.New() // #nosec G401 -- legacy", "nosec", "nosec G401"},
		{"import pickle  # noqa: S403", "noqa", "noqa: S403"},
		{"# ruff: noqa", "noqa", "noqa"},
		{"x = 1  # NOQA", "noqa", "NOQA"},
		{"//nolint:gosec // it is fine", "nolint", "nolint:gosec"},
		{"// nolint", "nolint", "nolint"},
		{"int x = f(); // NOLINTNEXTLINE(cert-err33-c)", "nolint", "NOLINTNEXTLINE(cert-err33-c)"},
		{"//lint:ignore SA1019 still needed", "lint:ignore", "lint:ignore SA1019"},
		{"//lint:file-ignore U1000 generated", "lint:ignore", "lint:file-ignore U1000"},
		{"import os  # pylint: disable=unused-import", "pylint: disable", "pylint: disable=unused-import"},
		{"# pylint:disable-next=eval-used", "pylint: disable", "pylint:disable-next=eval-used"},
		{"# pylint: skip-file", "pylint: disable", "pylint: skip-file"},
		{"/* eslint-disable */", "eslint-disable", "eslint-disable"},
		{"eval(s); // eslint-disable-line no-eval", "eslint-disable", "eslint-disable-line no-eval"},
		{"// eslint-disable-next-line security/detect-eval-with-expression", "eslint-disable", "eslint-disable-next-line security/detect-eval-with-expression"},
		{"/* eslint no-eval: off */", "eslint configuration comment", "eslint no-eval: off"},
		{`/*eslint "security/detect-object-injection": 0*/`, "eslint configuration comment", `eslint "security/detect-object-injection": 0`},
		{" eslint no-eval: \"off\"", "eslint configuration comment", `eslint no-eval: "off"`},
		{"const key = 'x'; // gitleaks:allow", "gitleaks:allow", "gitleaks:allow"},
		{"password = 'x'  # pragma: allowlist secret", "pragma: allowlist secret", "pragma: allowlist secret"},
		{"String q = \"...\"; // NOSONAR", "NOSONAR", "NOSONAR"},
		{"// NOPMD", "NOPMD", "NOPMD"},
		{"eval(x); // codeql[js/code-injection]", "codeql", "codeql[js/code-injection]"},
		{"eval(x); // lgtm[js/code-injection]", "codeql", "lgtm[js/code-injection]"},
		{"# shellcheck disable=SC2086", "shellcheck disable", "shellcheck disable=SC2086"},
		{"# hadolint ignore=DL3008", "hadolint ignore", "hadolint ignore=DL3008"},
		{"#checkov:skip=CKV_AWS_20:public bucket", "checkov:skip", "checkov:skip=CKV_AWS_20:public"},
		{"#tfsec:ignore:aws-s3-enable-bucket-encryption", "tfsec:ignore", "tfsec:ignore:aws-s3-enable-bucket-encryption"},
		{"#trivy:ignore:AVD-AWS-0086", "trivy:ignore", "trivy:ignore:AVD-AWS-0086"},
		{"# kics-scan ignore-line", "kics-scan ignore", "kics-scan ignore-line"},
		{"eval(x) # rubocop:disable Security/Eval", "rubocop:disable", "rubocop:disable Security/Eval"},
		{"// phpcs:ignore", "phpcs:ignore", "phpcs:ignore"},
		{"/** @phpstan-ignore-next-line */", "@phpstan-ignore", "@phpstan-ignore-next-line"},
		{"/** @psalm-suppress TaintedSql */", "@psalm-suppress", "@psalm-suppress TaintedSql"},
		{`@SuppressFBWarnings("SQL_INJECTION")`, "@SuppressWarnings", `@SuppressFBWarnings("SQL_INJECTION")`},
		{`[SuppressMessage("Security", "CA2100")]`, "SuppressMessage", `SuppressMessage("Security", "CA2100")`},
		{"#pragma warning disable CA2100", "#pragma warning disable", "pragma warning disable CA2100"},
		{"// biome-ignore lint/security/noGlobalEval: x", "biome-ignore", "biome-ignore lint/security/noGlobalEval:"},
		{"// deno-lint-ignore no-eval", "deno-lint-ignore", "deno-lint-ignore no-eval"},
		{"/* tslint:disable */", "tslint:disable", "tslint:disable"},
		// Every rule of an eslint configuration comment, in each form ESLint takes, and the
		// directives with a description after "--".
		{`/* eslint no-console: "error", no-eval: "off" */`, "eslint configuration comment", `eslint no-console: "error", no-eval: "off"`},
		{`/* eslint no-eval: ["off"] */`, "eslint configuration comment", `eslint no-eval: ["off"]`},
		{`/* eslint max-len: ["error", {code: 80}] no-eval: [1, {}] */`, "eslint configuration comment", `eslint max-len: ["error", {code: 80}] no-eval: [1`},
		{`/* eslint {"no-eval": 'Off'} */`, "eslint configuration comment", `eslint {"no-eval": 'Off'`},
		{"/* eslint no-eval: off -- the input is ours */", "eslint configuration comment", "eslint no-eval: off"},
		{"eval(s); // eslint-disable-line no-eval -- reviewed", "eslint-disable", "eslint-disable-line no-eval"},
		// ShellCheck's keys in any order, quoted or not; pylint's pragmas in any order; RuboCop's
		// spaced marker and push; the other spellings of the tools already listed.
		{"# shellcheck source=/dev/null disable=SC2086", "shellcheck disable", "shellcheck source=/dev/null disable=SC2086"},
		{`# shellcheck shell=bash source='a b' disable='SC2086,SC2046'`, "shellcheck disable", `shellcheck shell=bash source='a b' disable='SC2086,SC2046'`},
		{"# shellcheck extended-analysis=false", "shellcheck disable", "shellcheck extended-analysis=false"},
		{"# pylint: enable=too-many-lines, disable=eval-used", "pylint: disable", "pylint: enable=too-many-lines, disable=eval-used"},
		{"# pylint: disable-msg=W0123", "pylint: disable", "pylint: disable-msg=W0123"},
		{"eval(x) # rubocop : disable Security/Eval", "rubocop:disable", "rubocop : disable Security/Eval"},
		{"# rubocop:push -Security/Eval", "rubocop:disable", "rubocop:push -Security/Eval"},
		{"// phpcs:ignoreFile", "phpcs:ignore", "phpcs:ignoreFile"},
		{"// @codingStandardsIgnoreLine", "phpcs:ignore", "@codingStandardsIgnoreLine"},
		{"f.Close() //gosec:disable G104 -- best effort", "nosec", "gosec:disable G104"},
		{"# ruff: disable[S101]", "noqa", "ruff: disable[S101]"},
		{"key = 'x'  # trufflehog:ignore", "trufflehog:ignore", "trufflehog:ignore"},
		{"pw = 'x'  # pragma: whitelist secret", "pragma: allowlist secret", "pragma: whitelist secret"},
		{`@Suppress("UNCHECKED_CAST")`, "@SuppressWarnings", `@Suppress("UNCHECKED_CAST")`},
		{`@file:Suppress("detekt:all")`, "@SuppressWarnings", `@file:Suppress("detekt:all")`},
		{"#pragma warning(disable: 4996)", "#pragma warning disable", "pragma warning(disable: 4996)"},
		{"//revive:disable:unexported-return", "revive:disable", "revive:disable:unexported-return"},
	} {
		got, more := Suppressions([]Added{{Path: "src/a.py", Line: 7, Text: c.line}})
		if more != 0 || len(got) != 1 {
			t.Errorf("%q: %+v, want one %s", c.line, got, c.kind)
			continue
		}
		g := got[0]
		if g.File != "src/a.py" || g.Line != 7 || g.Kind != c.kind || g.Text != c.text || g.For == "" {
			t.Errorf("%q: %+v, want kind %q text %q", c.line, g, c.kind, c.text)
		}
	}
	for _, line := range []string{
		"x = f()  # type: ignore[attr-defined]", "x = f()  # pyright: ignore", "// @ts-ignore", "// @ts-expect-error", "// @ts-nocheck",
		"if debug:  # pragma: no cover", "/* istanbul ignore next */", "/* c8 ignore next */", "// prettier-ignore", "# fmt: off", "import x  # isort: skip",
		"nosecurity = True", "cosemgrep()", "noqatar", "eslint is configured in eslint.config.js", "return nolintlint", "/* global window */",
		// Directives that turn rules on, or say nothing of a rule, are not suppressions.
		`/* eslint no-eval: "error", max-len: ["error", {code: 0}] */`, "/* eslint no-eval: 2 -- no-console: off is for later */",
		"/* eslint-enable no-eval */", "/* eslint-env node */", `/* eslint no-eval: "error" */ // fallback: off`,
		"# shellcheck source=/dev/null", "# shellcheck enable=require-variable-braces shell=bash", "# shellcheck extended-analysis=true",
		"# pylint: enable=eval-used", "# rubocop:enable Security/Eval", "# rubocop:push +Security/Eval", "@SuppressLint",
	} {
		if got, _ := Suppressions([]Added{{Path: "a", Line: 1, Text: line}}); len(got) != 0 {
			t.Errorf("%q is listed: %+v", line, got)
		}
	}
}

// TestSuppressionsPlaces: line numbers follow the added run, several kinds on one line are
// each listed, a line is listed once per kind, results are sorted, and the list is bounded.
func TestSuppressionsPlaces(t *testing.T) {
	t.Parallel()
	got, more := Suppressions([]Added{
		{Path: "b.go", Line: 10, Text: "a()\nb() //nolint:gosec // #nosec G104\nc() //nolint //nolint"},
		{Path: "a.py", Line: 3, Text: "x  # noqa"},
		{Path: "?", Line: 1, Text: "# nosec"},
		{Path: "c.py", Line: 0, Text: "# nosec"},
	})
	want := []string{"a.py:3 noqa", "b.go:11 nosec", "b.go:11 nolint", "b.go:12 nolint"}
	var have []string
	for _, s := range got {
		have = append(have, fmt.Sprintf("%s:%d %s", s.File, s.Line, s.Kind))
	}
	if more != 0 || strings.Join(have, ",") != strings.Join(want, ",") {
		t.Errorf("got %q (+%d), want %q", have, more, want)
	}
	many := strings.Repeat("x # nosec\n", MaxSuppressions+7)
	got, more = Suppressions([]Added{{Path: "m.py", Line: 1, Text: many}})
	if len(got) != MaxSuppressions || more != 7 {
		t.Errorf("%d kept, %d more; want %d and 7", len(got), more, MaxSuppressions)
	}
}

// TestSuppressionsReadMultiLineComments: a block comment that spans lines is read whole, as the
// tools read it, so a directive whose words are on several lines is listed, at the line where
// it starts; one only turning rules on is not, and a directive on one line of such a comment is
// listed once. Before, each line was read alone: "/* eslint\n no-eval: off */" was missed.
func TestSuppressionsReadMultiLineComments(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text, want string // want: "line kind" of each listed, in order
	}{
		{"/* eslint\n   no-eval: off */\neval(userInput);", "10 eslint configuration comment"},
		{"x();\n/*eslint\nno-console: \"error\",\n\tno-eval: [\"off\"]\n*/", "11 eslint configuration comment"},
		{"/* eslint no-console: error,\n   no-eval: 0 */", "10 eslint configuration comment"},
		{"a = 1; /* eslint\n  no-eval: warn", "10 eslint configuration comment"}, // not closed in the added lines
		{"/*\n * eslint no-eval: off\n */", "11 eslint configuration comment"},
		{"/* eslint-disable\n   no-eval,\n   no-implied-eval */", "10 eslint-disable"},
		{"/* one */ x();\n/* eslint\n no-eval: off */ /* eslint\n no-alert: 1 */", "11 eslint configuration comment,12 eslint configuration comment"},
		{"/* eslint\n   no-eval: error */", ""},
		{"/* eslint\n   max-len: [\"error\",\n   {code: 0}] */", ""},
		{"/* the eslint\n   rules: off */", ""},
	} {
		got, _ := Suppressions([]Added{{Path: "web/app.js", Line: 10, Text: c.text}})
		var have []string
		for _, s := range got {
			have = append(have, fmt.Sprintf("%d %s", s.Line, s.Kind))
			if strings.ContainsAny(s.Text, "\n\r") || s.For == "" {
				t.Errorf("%q: %+v", c.text, s)
			}
		}
		if g := strings.Join(have, ","); g != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.text, g, c.want)
		}
	}
	got, _ := Suppressions([]Added{{Path: ".gitattributes", Line: 1, Text: "src/* -diff\nlib/*/x binary"}})
	if len(got) != 2 || got[0].Line != 1 || got[1].Line != 2 {
		t.Errorf(".gitattributes patterns read as a comment: %+v", got)
	}
}

// FuzzSuppressions: whatever a patch adds, Suppressions never panics, places each comment on a
// line of its added run, and keeps its text short, valid UTF-8 and on one line.
func FuzzSuppressions(f *testing.F) {
	f.Add("x = 1  # nosec B602\n// eslint-disable-line no-eval", 3)
	f.Add("/* eslint no-eval: off */\n\xff\xfe# noqa", 1)
	f.Add(strings.Repeat("nolint:", 500), 9)
	f.Add("#pragma warning disable\r\n@SuppressWarnings(\"all\")", 1<<30)
	f.Add("/* eslint\n no-console: [\"error\", {a: 0}],\n no-eval: 'off' -- x */ /*eslint\n", 2)
	f.Fuzz(func(t *testing.T, text string, line int) {
		if line < 1 || line > 1<<30 {
			line = 1
		}
		got, more := Suppressions([]Added{{Path: "f", Line: line, Text: text}})
		n := strings.Count(text, "\n")
		if len(got) > MaxSuppressions || more < 0 {
			t.Fatalf("%d kept, %d more", len(got), more)
		}
		for _, s := range got {
			if s.File != "f" || s.Line < line || s.Line > line+n || s.Kind == "" || s.For == "" {
				t.Fatalf("misplaced: %+v", s)
			}
			if !utf8.ValidString(s.Text) || utf8.RuneCountInString(s.Text) > maxDirective+1 || strings.ContainsAny(s.Text, "\n\r") {
				t.Fatalf("text out of bounds: %q", s.Text)
			}
		}
	})
}

// TestGeneratedMarkersAndAttributes: a generated-file marker makes a scanner skip the whole file
// the patch wrote (Go's "Code generated ... DO NOT EDIT.", which golangci-lint and gosec honour,
// "@generated", .NET's "<auto-generated>"), and a .gitattributes line hides a file's diff from
// the reviewer (linguist-generated, -diff, binary): each is listed like a suppression comment.
// Before, none was: a patch could mark its own file generated and no scanner read it.
func TestGeneratedMarkersAndAttributes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file, line, kind, text string
	}{
		{"api/handler.go", "// Code generated by protoc-gen-go. DO NOT EDIT.", "generated-file marker", "Code generated by protoc-gen-go. DO NOT EDIT."},
		{"api/handler.go", "// Code generated; DO NOT EDIT.", "generated-file marker", "Code generated; DO NOT EDIT."},
		{"api/handler.go", "// DO NOT EDIT", "generated-file marker", "DO NOT EDIT"},
		{"api/handler.go", "// This is an autogenerated file", "generated-file marker", "autogenerated file"},
		{"web/app.js", " * @generated", "@generated", "@generated"},
		{"src/Db.cs", "// <auto-generated/>", "<auto-generated>", "auto-generated/"},
		{".gitattributes", "api/handler.go linguist-generated", "linguist-generated", "linguist-generated"},
		{"sub/.gitattributes", "*.py linguist-generated=true", "linguist-generated", "linguist-generated=true"},
		{".gitattributes", "secrets.py -diff", "-diff / binary", "-diff"},
		{".gitattributes", "*.txt binary", "-diff / binary", "binary"},
		// Linguist takes any value but "false" (compared as written) as set.
		{".gitattributes", "src/auth.py linguist-generated=yes", "linguist-generated", "linguist-generated=yes"},
		{".gitattributes", "src/auth.py linguist-generated=FALSE", "linguist-generated", "linguist-generated=FALSE"},
		{".gitattributes", "src/auth.py linguist-generated=", "linguist-generated", "linguist-generated="},
		{".gitattributes", "[attr]hide linguist-generated=0", "linguist-generated", "linguist-generated=0"},
	} {
		got, _ := Suppressions([]Added{{Path: c.file, Line: 3, Text: c.line}})
		if len(got) != 1 || got[0].Kind != c.kind || got[0].File != c.file || got[0].Line != 3 || got[0].For == "" {
			t.Errorf("%s: %q: %+v, want one %s", c.file, c.line, got, c.kind)
			continue
		}
		if !strings.Contains(got[0].Text, strings.Trim(c.text, "/<")) {
			t.Errorf("%q: text %q, want %q", c.line, got[0].Text, c.text)
		}
	}
	for _, c := range []struct{ file, line string }{
		{".gitattributes", "*.png binary-ish"}, {".gitattributes", "*.go linguist-generated=false"},
		{".gitattributes", "*.sh text eol=lf"}, {"src/a.py", "x = '-diff binary linguist-generated'"},
		{"src/a.py", "generated = True"}, {"src/a.py", "# regenerated the table"},
		// Unset or unspecified, Linguist's own rules decide; vendored and documentation only take
		// a file out of the language statistics; a diff driver is the reader's configuration.
		{".gitattributes", "*.go -linguist-generated"}, {".gitattributes", "*.go !linguist-generated"},
		{".gitattributes", "vendor/** linguist-vendored"}, {".gitattributes", "docs/** linguist-documentation=true"},
		{".gitattributes", "*.py diff=python"}, {".gitattributes", "*.png -binary"}, {".gitattributes", "*.go linguist-generated-ish"},
	} {
		if got, _ := Suppressions([]Added{{Path: c.file, Line: 1, Text: c.line}}); len(got) != 0 {
			t.Errorf("%s: %q is listed: %+v", c.file, c.line, got)
		}
	}
}

// TestLinguistGeneratedLastSettingDecides: git takes a line's last setting of an attribute, so
// `linguist-generated=false linguist-generated` leaves it set (GitHub collapses the diff) and is
// listed, while a line that ends by unsetting it is not.
func TestLinguistGeneratedLastSettingDecides(t *testing.T) {
	t.Parallel()
	for line, listed := range map[string]bool{
		"*.js linguist-generated=false linguist-generated":      true,
		"*.js linguist-generated=false linguist-generated=true": true,
		"*.js linguist-generated -linguist-generated":           false,
		"*.js linguist-generated !linguist-generated":           false,
		"*.js linguist-generated linguist-generated=false":      false,
	} {
		got, _ := Suppressions([]Added{{Path: ".gitattributes", Line: 1, Text: line}})
		if (len(got) > 0) != listed {
			t.Errorf("%q: listed %v, want %v", line, got, listed)
		}
	}
}

// TestEslintSeverityByValue: ESLint compares a numeric severity by value and reads a
// double-quoted one as JSON, so 0.0, 1.0, -0, 1e0 and "of\u0066" turn a rule off or to a
// warning, in a comment of the patch and in the base's (FileWide); 2.0 does not.
func TestEslintSeverityByValue(t *testing.T) {
	t.Parallel()
	for line, listed := range map[string]bool{
		"/* eslint no-eval: 0.0 */":           true,
		"/* eslint no-eval: 1.0 */":           true,
		"/* eslint no-eval: [0.0] */":         true,
		"/* eslint no-eval: -0 */":            true,
		"/* eslint no-eval: 1e0 */":           true,
		`/* eslint no-eval: "of\u0066" */`:    true,
		`/* eslint no-eval: ["w\u0061rn"] */`: true,
		"/* eslint no-eval: 2.0 */":           false,
		`/* eslint no-eval: "error" */`:       false,
	} {
		got, _ := Suppressions([]Added{{Path: "a.js", Line: 1, Text: line}})
		if (len(got) > 0) != listed {
			t.Errorf("%q: listed %v, want %v", line, got, listed)
		}
		if fw := FileWide("a.js", []byte(line+"\n")); (len(fw) > 0) != listed {
			t.Errorf("%q: FileWide %v, want listed %v", line, fw, listed)
		}
	}
}

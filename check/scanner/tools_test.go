package scanner

import (
	"slices"
	"strings"
	"testing"
)

// TestScannerKnowledge: what Parse makes of an entry: the known tools its command names (or
// tool= names), their configuration files with the operator's (config=), and whether the
// scanner runs the repository's code, from the operator's word, the programs the command
// starts and the table of tools.
func TestScannerKnowledge(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		entry   string
		tools   []string
		code    Code
		why     string   // a part of CodeJudgement.Why
		config  []string // patterns that must be there
		without []string // patterns that must not
	}{
		{"s=semgrep scan --config /opt/rules --sarif -o {sarif} .", []string{"semgrep"}, CodeNone, "frognano knows semgrep not to",
			[]string{".semgrepignore", ".semgrep/", ".semgrep.yml", ".gitignore"}, []string{"pyproject.toml"}},
		{"b=python3 -m bandit -r . -f sarif -o {sarif}", []string{"bandit"}, CodeNone, "bandit", []string{".bandit", "pyproject.toml", "setup.cfg"}, nil},
		{"b=python3 -I -mbandit -r .", []string{"bandit"}, CodeNone, "bandit", nil, nil},
		{"r=FOO=1 timeout 60 ruff check --output-format sarif -o $FROGNANO_SARIF .", []string{"ruff"}, CodeNone, "ruff", []string{"ruff.toml", ".ruff.toml", "pyproject.toml"}, nil},
		{"s=bash -c 'semgrep scan --sarif -o {sarif}'", []string{"semgrep"}, CodeNone, "semgrep", nil, nil},
		{"s=semgrep scan --config /opt/rules/make .", []string{"semgrep"}, CodeNone, "semgrep", nil, nil},
		{"s=semgrep scan . && gitleaks dir . -f sarif -r {sarif}", []string{"gitleaks", "semgrep"}, CodeNone, "gitleaks and semgrep",
			[]string{".gitleaks.toml", ".gitleaksignore", ".semgrepignore"}, nil},
		{"e=npx eslint -f @microsoft/eslint-formatter-sarif -o {sarif} .", []string{"eslint"}, CodeRuns, "eslint runs JavaScript configuration files",
			[]string{".eslintrc", ".eslintrc.*", "eslint.config.*", ".eslintignore", "package.json"}, nil},
		{"p=pylint --output-format=sarif src > {sarif}", []string{"pylint"}, CodeRuns, "pylint imports the plugins", []string{".pylintrc", "pylintrc", "tox.ini"}, nil},
		{"g=golangci-lint run --output.sarif.path={sarif}", []string{"golangci-lint"}, CodeRuns, "plugins", []string{".golangci.yml", ".golangci.toml"}, nil},
		{"s=semgrep scan . ; pylint src", []string{"pylint", "semgrep"}, CodeRuns, "pylint", nil, nil},
		{"m=make lint SARIF={sarif}", nil, CodeRuns, "make runs the repository's Makefile", nil, nil},
		{"m=cd src && make semgrep", []string{"semgrep"}, CodeRuns, "Makefile", nil, nil},
		{"x=./tools/scan.sh {sarif}", nil, CodeRuns, "a path relative to the repository", nil, nil},
		{"x=env A=1 tools/scan.sh {sarif}", nil, CodeRuns, "a path relative to the repository", nil, nil},
		{"x=python3 tools/scan.py {sarif}", nil, CodeRuns, "python runs a script", nil, nil},
		{"x=bash scripts/lint.sh", nil, CodeRuns, "bash runs a shell file", nil, nil},
		{"x=/opt/scanners/mytool --out {sarif}", nil, CodeUnknown, "", nil, []string{".gitignore"}},
		{"x[tool=semgrep]=/opt/wrap {sarif}", []string{"semgrep"}, CodeNone, "semgrep", []string{".semgrepignore"}, nil},
		{"x[config=tools/eslint/**,.myscan.toml]=/opt/wrap {sarif}", nil, CodeUnknown, "", []string{"tools/eslint/**", ".myscan.toml"}, nil},
		{"e[code=none]=eslint .", []string{"eslint"}, CodeNone, "the operator says so (code=none)", []string{"eslint.config.*"}, nil},
		{"s[code=runs config=extra.yml]=semgrep scan", []string{"semgrep"}, CodeRuns, "the operator says so (code=runs)", []string{".semgrepignore", "extra.yml"}, nil},
	} {
		list, err := Parse(c.entry)
		if err != nil || len(list) != 1 {
			t.Errorf("Parse(%q) = %v, %v", c.entry, list, err)
			continue
		}
		s := list[0]
		if !slices.Equal(s.Tools, c.tools) {
			t.Errorf("%q: tools %q, want %q", c.entry, s.Tools, c.tools)
		}
		if s.Code.Code != c.code || !strings.Contains(s.Code.Why, c.why) {
			t.Errorf("%q: code %+v, want %d with %q", c.entry, s.Code, c.code, c.why)
		}
		var got []string
		for _, p := range s.Config {
			got = append(got, p.String())
		}
		if !slices.IsSorted(got) {
			t.Errorf("%q: patterns not sorted: %q", c.entry, got)
		}
		for _, w := range c.config {
			if !slices.Contains(got, w) {
				t.Errorf("%q: patterns %q lack %q", c.entry, got, w)
			}
		}
		for _, w := range c.without {
			if slices.Contains(got, w) {
				t.Errorf("%q: patterns %q hold %q", c.entry, got, w)
			}
		}
		if strings.Contains(s.Code.Why, "tools/") || strings.Contains(s.Code.Why, "{sarif}") {
			t.Errorf("%q: the judgement quotes the command: %q", c.entry, s.Code.Why)
		}
	}
}

// TestToolsTable: every known tool has programs and configuration files, a unique name, and a
// reason whenever it runs the repository's code.
func TestToolsTable(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tool := range Tools {
		if seen[tool.Name] || len(tool.Programs) == 0 || len(tool.Config) == 0 || toolByName(tool.Name) == nil {
			t.Errorf("tool %+v", tool)
		}
		seen[tool.Name] = true
		if tool.RunsCode != "" && !strings.HasPrefix(tool.RunsCode, tool.Name+" ") {
			t.Errorf("%s: its reason should start with its name: %q", tool.Name, tool.RunsCode)
		}
	}
}

package scanner

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Tool is a scanner frognano knows: the command words that name it, the configuration files
// it reads from the tree it scans (a patch could rewrite or add them to silence it), and
// whether it runs code of the repository it scans.
type Tool struct {
	Name     string   // as the operator writes it in tool=
	Programs []string // command words (a path's last part) that name it
	Config   []string // Pattern texts
	// RunsCode says how the tool runs the repository's code ("" when it does not): such code
	// runs as the scanner, in its process, and can change what it reports.
	RunsCode string
}

// Tools is frognano's table of known scanners. Whole files are reset, so a shared file
// (pyproject.toml, setup.cfg, tox.ini, package.json) is scanned as the base has it in full:
// the scanner does not see what else the patch changed in it.
var Tools = []Tool{
	{Name: "semgrep", Programs: []string{"semgrep", "pysemgrep", "osemgrep", "semgrep-core"},
		Config: []string{".semgrepignore", ".semgrep.yml", ".semgrep.yaml", ".semgrep/", ".gitignore"}},
	{Name: "bandit", Programs: []string{"bandit"},
		Config: []string{".bandit", "bandit.yml", "bandit.yaml", ".bandit.yml", ".bandit.yaml", "pyproject.toml", "setup.cfg", "tox.ini"}},
	{Name: "ruff", Programs: []string{"ruff"},
		Config: []string{"ruff.toml", ".ruff.toml", "pyproject.toml", ".gitignore", ".ignore"}},
	{Name: "gitleaks", Programs: []string{"gitleaks"},
		Config: []string{".gitleaks.toml", ".gitleaksignore", ".gitleaks/"}},
	{Name: "gosec", Programs: []string{"gosec"},
		Config: []string{".gosec.json", ".gosec.yml", ".gosec.yaml"}},
	{Name: "staticcheck", Programs: []string{"staticcheck"},
		Config: []string{"staticcheck.conf"}},
	{Name: "shellcheck", Programs: []string{"shellcheck"},
		Config: []string{".shellcheckrc", "shellcheckrc"}},
	{Name: "hadolint", Programs: []string{"hadolint"},
		Config: []string{".hadolint.yaml", ".hadolint.yml", "hadolint.yaml", "hadolint.yml"}},
	{Name: "trivy", Programs: []string{"trivy"},
		Config: []string{"trivy.yaml", "trivy.yml", ".trivyignore", ".trivyignore.yaml"}},
	{Name: "pylint", Programs: []string{"pylint"},
		Config:   []string{".pylintrc", "pylintrc", ".pylintrc.toml", "pylintrc.toml", "pyproject.toml", "setup.cfg", "tox.ini"},
		RunsCode: "pylint imports the plugins and runs the init-hook its configuration names, found on the repository's path"},
	{Name: "flake8", Programs: []string{"flake8"},
		Config:   []string{".flake8", "setup.cfg", "tox.ini"},
		RunsCode: "flake8 imports the local plugins its configuration names from the repository"},
	{Name: "mypy", Programs: []string{"mypy", "dmypy"},
		Config:   []string{"mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg"},
		RunsCode: "mypy imports the plugins its configuration names, which may be files of the repository"},
	{Name: "eslint", Programs: []string{"eslint"},
		Config: []string{".eslintrc", ".eslintrc.*", "eslint.config.*", ".eslintignore", "package.json"},
		RunsCode: "eslint runs JavaScript configuration files and loads plugins, parsers and rules, " +
			"which may be files of the repository"},
	{Name: "golangci-lint", Programs: []string{"golangci-lint"},
		Config:   []string{".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"},
		RunsCode: "golangci-lint loads the plugins its configuration names, which may be files of the repository"},
	{Name: "checkov", Programs: []string{"checkov"},
		Config:   []string{".checkov.yaml", ".checkov.yml"},
		RunsCode: "checkov runs the Python checks of the external-checks folders its configuration names"},
}

// runners are programs that run code of the repository they are started in: a command that
// names one of them runs the repository's code whatever scanner it also names.
var runners = map[string]string{
	"make": "make runs the repository's Makefile", "npm": "npm runs the repository's package.json scripts",
	"yarn": "yarn runs the repository's package.json scripts", "pnpm": "pnpm runs the repository's package.json scripts",
	"node": "node runs JavaScript", "tox": "tox runs the repository's tox.ini", "nox": "nox runs the repository's noxfile.py",
	"pre-commit": "pre-commit runs the hooks of the repository's .pre-commit-config.yaml", "just": "just runs the repository's justfile",
	"task": "task runs the repository's Taskfile", "rake": "rake runs the repository's Rakefile", "gradle": "gradle runs the repository's build",
	"gradlew": "gradlew runs the repository's build", "mvn": "mvn runs the repository's build", "cargo": "cargo builds and runs the repository's build scripts",
	"source": "source runs a shell file", ".": "'.' runs a shell file", "sh": "sh runs a shell file", "bash": "bash runs a shell file",
	"perl": "perl runs a script", "ruby": "ruby runs a script", "php": "php runs a script",
}

func toolByName(name string) *Tool {
	for i := range Tools {
		if Tools[i].Name == name {
			return &Tools[i]
		}
	}
	return nil
}

func toolNames() string {
	names := make([]string, len(Tools))
	for i, t := range Tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// words splits a command line into its words the simple way: white space, quotes and the
// shell's operators end a word. It is not a shell parser: it looks for tool names, and errs
// on the side of finding one (a word in a comment or a string counts).
func words(command string) []string {
	return strings.FieldsFunc(command, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || strings.ContainsRune(";&|()<>`'\"$={}", r)
	})
}

// wrappers run the command that follows them; the program is the word after them (and after
// timeout's duration, and their options).
var wrappers = map[string]bool{"env": true, "exec": true, "command": true, "nice": true, "nohup": true,
	"timeout": true, "xargs": true, "time": true, "stdbuf": true, "ionice": true}

// programs returns, for each simple command of the line (split at ;, &, |, (, ), newlines and
// backquotes), its words from the program it starts on: leading NAME=value assignments,
// wrappers and their options are skipped.
func programs(command string) [][]string {
	var out [][]string
	for _, simple := range strings.FieldsFunc(command, func(r rune) bool { return strings.ContainsRune(";&|()\n`", r) }) {
		ws := strings.FieldsFunc(simple, func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\'' || r == '"' })
		for len(ws) > 0 {
			w := ws[0]
			switch {
			case strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
				ws = ws[1:] // an assignment, or a wrapper's option
			case wrappers[path.Base(w)] || strings.HasPrefix(w, "-") || (len(w) > 0 && w[0] >= '0' && w[0] <= '9'):
				ws = ws[1:] // a wrapper, its option or its duration
			case (path.Base(w) == "sh" || path.Base(w) == "bash") && len(ws) > 1 && strings.HasPrefix(ws[1], "-") && strings.Contains(ws[1], "c"):
				ws = ws[2:] // a shell given a command line: its words follow
			default:
				out = append(out, ws)
				ws = nil
			}
		}
	}
	return out
}

// Code is whether a scanner runs the repository's code.
type Code int

// The answers: not known, no, yes.
const (
	CodeUnknown Code = iota
	CodeNone
	CodeRuns
)

// CodeJudgement says whether a scanner runs the repository's code and who says so.
type CodeJudgement struct {
	Code Code
	// Why is frognano's own words, never a word of the command (which may hold anything):
	// "the operator says so (code=runs)", "frognano knows semgrep not to", "eslint runs
	// JavaScript configuration files ..."; "" for CodeUnknown. Tool names are from the table.
	Why string
}

// judgeCode decides from the operator's code= (which wins), the programs the command names
// (a runner, or a program started from a relative path, is the repository's code), and the
// known tools.
func judgeCode(operator Code, command string, tools []*Tool) CodeJudgement {
	switch operator {
	case CodeRuns:
		return CodeJudgement{CodeRuns, "the operator says so (code=runs)"}
	case CodeNone:
		return CodeJudgement{CodeNone, "the operator says so (code=none)"}
	}
	for _, ws := range programs(command) {
		prog := ws[0]
		switch b := path.Base(prog); {
		case runners[b] != "":
			return CodeJudgement{CodeRuns, runners[b]}
		case !strings.HasPrefix(prog, "/") && strings.Contains(prog, "/"):
			return CodeJudgement{CodeRuns, "the command starts a program by a path relative to the repository"}
		case (b == "python" || b == "python3" || strings.HasPrefix(b, "python3.")) && runsScript(ws[1:]):
			return CodeJudgement{CodeRuns, "python runs a script of the repository, not an installed module (-m)"}
		}
	}
	var known []string
	for _, t := range tools {
		if t.RunsCode != "" {
			return CodeJudgement{CodeRuns, t.RunsCode}
		}
		known = append(known, t.Name)
	}
	if len(known) == 0 {
		return CodeJudgement{}
	}
	return CodeJudgement{CodeNone, "frognano knows " + strings.Join(known, " and ") + " not to"}
}

// runsScript reports whether python's arguments make it run a file (or standard input) rather
// than an installed module (-m) or the command's own code (-c).
func runsScript(args []string) bool {
	for _, a := range args {
		switch {
		case a == "-m" || a == "-c" || strings.HasPrefix(a, "-m") || strings.HasPrefix(a, "-c"):
			return false
		case strings.HasPrefix(a, "-"):
			continue
		}
		return true
	}
	return true
}

// detectTools returns the known tools the command names, in the table's order.
func detectTools(command string) []*Tool {
	seen := map[string]bool{}
	for _, w := range words(command) {
		seen[path.Base(w)] = true
		if m, ok := strings.CutPrefix(w, "-m"); ok { // python -mbandit
			seen[m] = true
		}
	}
	var out []*Tool
	for i := range Tools {
		for _, p := range Tools[i].Programs {
			if seen[p] {
				out = append(out, &Tools[i])
				break
			}
		}
	}
	return out
}

// configPatterns joins the tools' patterns and the operator's, without duplicates, sorted.
func configPatterns(tools []*Tool, operator []Pattern) []Pattern {
	seen := map[string]bool{}
	var out []Pattern
	add := func(p Pattern) {
		if !seen[p.text] {
			seen[p.text] = true
			out = append(out, p)
		}
	}
	for _, t := range tools {
		for _, s := range t.Config {
			add(mustPattern(s))
		}
	}
	for _, p := range operator {
		add(p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].text < out[j].text })
	return out
}

func init() {
	// The table is data: every pattern must parse, every program name a plain word.
	for _, t := range Tools {
		for _, s := range t.Config {
			mustPattern(s)
		}
		for _, p := range t.Programs {
			if p == "" || strings.ContainsAny(p, "/ ") {
				panic(fmt.Sprintf("scanner: bad program name %q of %s", p, t.Name))
			}
		}
	}
}

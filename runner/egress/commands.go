package egress

import (
	"regexp"
	"strings"

	"github.com/frognano/frognano/runner/sandbox"
)

// commandName is what a command word must look like to be reported or looked up on the
// sandbox's PATH: a plain program name, never a path, an assignment or shell syntax.
var commandName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$`)

// prefixes run the command after them: the word after is the one that matters.
var prefixes = map[string]bool{"sudo": true, "env": true, "time": true, "exec": true, "command": true, "nohup": true, "nice": true, "timeout": true}

// maxWords bounds the command words read from one command.
const maxWords = 32

// commandWords returns the words in command position of a shell command, in order and without
// repeats: the first word of each simple command between newlines, ';', '&', '|' and
// parentheses, after variable assignments and prefixes such as env or sudo (and a number,
// timeout's). It is a reading for reporting, not a shell parser: it may miss a command or
// take a word of a string for one, and only words that look like program names are kept. What
// it returns is only ever checked against tables of program names and the sandbox's PATH.
func commandWords(command string) []string {
	var out []string
	seen := map[string]bool{}
	for _, seg := range segments(command) {
		for _, w := range strings.Fields(seg) {
			w = strings.Trim(w, `"'`)
			if strings.Contains(w, "=") && !strings.HasPrefix(w, "=") {
				continue // an assignment
			}
			if prefixes[w] || isNumber(w) || strings.HasPrefix(w, "-") || w == "!" || w == "then" || w == "do" || w == "else" {
				continue
			}
			if commandName.MatchString(w) && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
			break
		}
		if len(out) == maxWords {
			break
		}
	}
	return out
}

// segments splits a command at newlines, ';', '&', '|', parentheses, braces and backticks
// outside quotes: a separator in a quoted string ("echo 'a; b'") does not start a command.
// Quotes are shell quotes as far as this reading goes: single quotes end only at the next
// single quote, a backslash escapes the next character outside them.
func segments(command string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	escaped := false
	for _, r := range command {
		switch {
		case escaped:
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			}
		case r == '\\':
			escaped = true
		case quote == '"':
			if r == '"' {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case strings.ContainsRune("\n;&|(){}`", r):
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(out, cur.String())
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for _, c := range w {
		if (c < '0' || c > '9') && c != '.' && c != 's' {
			return false
		}
	}
	return true
}

// Ecosystems, as Advice names them.
const (
	Python = "Python"
	Go     = "Go"
	Node   = "Node"
	Rust   = "Rust"
	System = "system packages"
	Files  = "downloads"
)

// tools are the package managers and fetchers whose runs are named, with their ecosystem.
// Program names only: which hosts they reach is never assumed.
var tools = map[string]string{
	"pip": Python, "pip3": Python, "pipx": Python, "uv": Python, "poetry": Python, "pipenv": Python, "easy_install": Python,
	"go":  Go,
	"npm": Node, "npx": Node, "yarn": Node, "pnpm": Node,
	"cargo": Rust, "rustup": Rust,
	"apt-get": System, "apt": System,
	"curl": Files, "wget": Files, "git": Files,
}

// toolchains name the toolchain a missing command belongs to.
var toolchains = map[string]string{
	"go": Go, "gofmt": Go,
	"node": Node, "npm": Node, "npx": Node, "yarn": Node, "pnpm": Node,
	"cargo": Rust, "rustc": Rust, "rustup": Rust,
	"pip": Python, "pip3": Python, "python": Python, "poetry": Python, "uv": Python, "pipenv": Python,
	"java": "Java", "javac": "Java", "mvn": "Java", "gradle": "Java",
	"ruby": "Ruby", "gem": "Ruby", "bundle": "Ruby",
	"php": "PHP", "composer": "PHP",
	"dotnet": ".NET",
}

// toolOf is the first package manager or fetcher among a command's words ("python -m pip"
// counts as pip), "" when there is none.
func toolOf(words []string, command string) string {
	for _, w := range words {
		if _, ok := tools[w]; ok {
			return w
		}
		if strings.HasPrefix(w, "python") && strings.Contains(command, " -m pip") {
			return "pip"
		}
	}
	return ""
}

// NotFoundCandidates are the command words of the Bash calls that exited 127, the shell's
// "command not found": the runner checks which of them the sandbox's PATH lacks (Input.Missing).
func NotFoundCandidates(calls []sandbox.BashCall) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range calls {
		if c.ExitCode == nil || *c.ExitCode != 127 {
			continue
		}
		for _, w := range commandWords(c.Command) {
			if !seen[w] && len(out) < maxMissing*4 {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

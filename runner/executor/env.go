package executor

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The reference starts each Bash command from a Python process, which its pod runtime
// starts through a login shell: `bash -lc "cd / && (... python3 tool_runner.py ...)"` in
// the task's working directory. That chain leaves marks in the environment every command
// inherits, and bashEnv puts the same marks on the executor's own environment:
//   - SHLVL: the outer shell counted one level, so the command's bash counts two;
//   - OLDPWD: the outer shell's `cd /` exported the directory it started in (the workdir);
//   - PWD: "/" after that cd (the command's bash replaces it with its real directory);
//   - _: the outer shell's last command, the Python interpreter;
//   - LC_CTYPE=C.UTF-8 when the locale is the C locale: Python 3.7+ coerces it at start
//     (PEP 538) and exports the coerced value to its children.
//
// One thing is not reproduced: the outer shell also ran the login profile, so a profile
// that appends to a variable (PATH=$PATH:...) appends twice there and once here.

const pythonBin = "/usr/bin/python3"

// bashEnv is the environment of a Bash command run in cwd.
func bashEnv(cwd string) []string {
	env := os.Environ()
	out := make([]string, 0, len(env)+5)
	shlvl := 0
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		switch name {
		case "SHLVL":
			shlvl = bashShlvl(value)
			continue
		case "OLDPWD", "PWD", "_":
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "SHLVL="+strconv.Itoa(shlvl+1), "OLDPWD="+cwd, "PWD=/", "_="+pythonBin)
	if pythonCoercesLocale(os.Getenv) {
		out = setEnv(out, "LC_CTYPE", "C.UTF-8")
	}
	return out
}

// bashShlvl is the level bash reads from SHLVL: a decimal number, anything else 0.
func bashShlvl(v string) int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func setEnv(env []string, name, value string) []string {
	for i, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			env[i] = name + "=" + value
			return env
		}
	}
	return append(env, name+"="+value)
}

// pythonCoercesLocale is CPython 3.11's _Py_CoerceLegacyLocale decision: coerce unless
// PYTHONCOERCECLOCALE=0 or LC_ALL is set, when the LC_CTYPE locale glibc selects from the
// environment (LC_CTYPE, then LANG) is the C locale, which it also is when that name is
// not installed.
func pythonCoercesLocale(getenv func(string) string) bool {
	if getenv("PYTHONCOERCECLOCALE") == "0" || getenv("LC_ALL") != "" {
		return false
	}
	name := getenv("LC_CTYPE")
	if name == "" {
		name = getenv("LANG")
	}
	return !localeLoads(name)
}

// localeLoads reports whether glibc's setlocale(LC_CTYPE, name) selects a locale other
// than C: a C.UTF-8 spelling (built into glibc since 2.35), or a locale installed in
// /usr/lib/locale, as a folder or in the locale archive.
func localeLoads(name string) bool {
	switch name {
	case "", "C", "POSIX":
		return false
	}
	if strings.Contains(name, "/") {
		return false
	}
	norm := normalizeLocale(name)
	if lang, _, _ := strings.Cut(norm, "."); lang == "C" && strings.HasPrefix(norm, "C.utf8") {
		return true
	}
	for _, n := range []string{name, norm} {
		if fi, err := os.Stat("/usr/lib/locale/" + n + "/LC_CTYPE"); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	names := archiveNames()
	return bytes.Contains(names, []byte("\x00"+norm+"\x00")) || bytes.Contains(names, []byte("\x00"+name+"\x00"))
}

// normalizeLocale is glibc's _nl_normalize_codeset applied to name's codeset: letters and
// digits only, lower case ("en_US.UTF-8" is "en_US.utf8").
func normalizeLocale(name string) string {
	lang, rest, ok := strings.Cut(name, ".")
	if !ok {
		return name
	}
	codeset, modifier, hasMod := strings.Cut(rest, "@")
	var b strings.Builder
	digitsOnly := true
	for _, c := range codeset {
		switch {
		case c >= 'A' && c <= 'Z':
			b.WriteRune(c + 'a' - 'A')
			digitsOnly = false
		case c >= 'a' && c <= 'z':
			b.WriteRune(c)
			digitsOnly = false
		case c >= '0' && c <= '9':
			b.WriteRune(c)
		}
	}
	cs := b.String()
	if digitsOnly && cs != "" {
		cs = "iso" + cs
	}
	out := lang + "." + cs
	if hasMod {
		out += "@" + modifier
	}
	return out
}

var archive struct {
	once  sync.Once
	names []byte
}

// archiveNames is the locale archive's bytes (its name table holds every installed locale
// as a NUL-terminated string); nil when there is none.
func archiveNames() []byte {
	archive.once.Do(func() {
		b, err := os.ReadFile("/usr/lib/locale/locale-archive")
		if err == nil {
			archive.names = b
		}
	})
	return archive.names
}

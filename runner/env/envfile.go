package env

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// EnvFile is where the setup script may write NAME=value lines (its path is in $FROGNANO_ENV,
// like GitHub Actions' $GITHUB_ENV): they become the environment of every sandbox made from the
// environment image, for example GOMODCACHE or a PATH that includes what setup installed. It is
// on the setup container's /tmp, so it is not part of the image itself.
const EnvFile = "/tmp/frognano-env"

const (
	maxEnvFileBytes = 64 << 10
	maxEnvVars      = 64
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedEnv are names setup cannot set for later sandboxes: the sandbox sets them itself
// (HOME on the tmpfs, no bytecode in the workspace), and frognano's own variables.
func reservedEnv(name string) bool {
	switch strings.ToUpper(name) {
	case "HOME", "PYTHONDONTWRITEBYTECODE":
		return true
	}
	return strings.HasPrefix(strings.ToUpper(name), "FROGNANO_")
}

// parseEnvFile reads what setup wrote to $FROGNANO_ENV: NAME=value lines (a later line for a
// name wins), blank lines and # comments skipped. It is the repository's text, so it is
// checked strictly: names are shell identifiers, values are one line of UTF-8 without NUL,
// at most 64 variables in 64 KiB; HOME, PYTHONDONTWRITEBYTECODE and FROGNANO_* are refused.
// The result is sorted by first appearance.
func parseEnvFile(b []byte) ([]string, error) {
	if len(b) > maxEnvFileBytes {
		return nil, fmt.Errorf("$FROGNANO_ENV is over the %d-byte limit", maxEnvFileBytes)
	}
	if !utf8.Valid(b) || strings.ContainsRune(string(b), 0) {
		return nil, fmt.Errorf("$FROGNANO_ENV is not UTF-8 text")
	}
	var order []string
	vals := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		name, val, ok := strings.Cut(line, "=")
		if !ok || !envName.MatchString(name) {
			return nil, fmt.Errorf("$FROGNANO_ENV line %d: want NAME=value with NAME a shell identifier", i+1)
		}
		if reservedEnv(name) {
			return nil, fmt.Errorf("$FROGNANO_ENV line %d: %s is set by frognano", i+1, name)
		}
		if strings.ContainsRune(val, '\r') {
			return nil, fmt.Errorf("$FROGNANO_ENV line %d: the value holds a carriage return", i+1)
		}
		if _, seen := vals[name]; !seen {
			order = append(order, name)
			if len(order) > maxEnvVars {
				return nil, fmt.Errorf("$FROGNANO_ENV sets more than %d variables", maxEnvVars)
			}
		}
		vals[name] = val
	}
	out := make([]string, 0, len(order))
	for _, n := range order {
		out = append(out, n+"="+vals[n])
	}
	return out, nil
}

// mergeEnv returns base with each NAME=value of over replacing the entry of the same name or
// added at the end.
func mergeEnv(base, over []string) []string {
	out := append([]string(nil), base...)
	for _, kv := range over {
		name, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, b := range out {
			if n, _, _ := strings.Cut(b, "="); n == name {
				out[i], replaced = kv, true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}

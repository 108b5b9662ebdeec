package patch

import (
	"path"
	"sort"
	"strings"
	"unicode/utf8"
)

// maxPathLen bounds one path; longer names are not something an honest fix needs.
const maxPathLen = 4096

// checkPath returns why p may not be written by a patch, or "" when it may. The rules
// are git's own protections (verify_path with core.protectNTFS and core.protectHFS)
// plus the repository boundary: nothing absolute, no "." or ".." or empty component,
// no component that any filesystem could treat as ".git".
func checkPath(p string) string {
	switch {
	case p == "":
		return "empty path"
	case len(p) > maxPathLen:
		return "path too long"
	case strings.HasPrefix(p, "/"):
		return "absolute path"
	case strings.Contains(p, `\`):
		// Windows treats a backslash as a separator, so "..\x" would escape there.
		return "backslash in path"
	case hasControl(p):
		return "control character in path"
	case !utf8.ValidString(p):
		// GitHub's API takes paths as JSON strings: a name that is not UTF-8 would be published
		// under another name (each bad byte a U+FFFD), two such names under one, and what was
		// checked would not be what is published.
		return "path is not UTF-8"
	case len(p) >= 2 && p[1] == ':':
		return "drive letter in path"
	}
	for _, c := range strings.Split(p, "/") {
		switch {
		case c == "":
			return "empty path component"
		case c == "." || c == "..":
			return "path component " + c
		case isDotGit(c):
			return "path into .git"
		}
	}
	return ""
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// isDotGit reports whether a path component could name the .git directory on some
// filesystem: case-insensitively (".GIT"), with NTFS's ignored trailing dots and
// spaces (".git. "), NTFS alternate streams (".git::$INDEX_ALLOCATION"), the 8.3 short
// name ("GIT~1"), or with the code points HFS+ ignores (".g\u200cit").
func isDotGit(c string) bool {
	if i := strings.IndexByte(c, ':'); i >= 0 {
		c = c[:i]
	}
	var b strings.Builder
	for _, r := range c {
		if hfsIgnorable(r) {
			continue
		}
		b.WriteRune(r)
	}
	n := strings.ToLower(strings.TrimRight(b.String(), ". "))
	return n == ".git" || n == "git~1"
}

// hfsIgnorable lists the code points HFS+ drops when comparing names (as git's
// is_hfs_dotgit does).
func hfsIgnorable(r rune) bool {
	switch {
	case r == utf8.RuneError:
		return false
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// checkSymlink returns why a symlink at linkPath pointing to target is not allowed.
// Targets are resolved lexically from the link's directory; a target that reaches
// another symlink is checked by git apply on the host, which refuses to write beyond one.
func checkSymlink(linkPath, target string) string {
	switch {
	case target == "":
		return "symlink with an empty target"
	case len(target) > maxPathLen:
		return "symlink target too long"
	case strings.HasPrefix(target, "/"):
		return "symlink to an absolute path"
	case strings.Contains(target, `\`):
		return "backslash in symlink target"
	case hasControl(target):
		return "control character in symlink target"
	case len(target) >= 2 && target[1] == ':':
		return "drive letter in symlink target"
	}
	resolved := path.Join(path.Dir(linkPath), target)
	if resolved == ".." || strings.HasPrefix(resolved, "../") {
		return "symlink escapes the repository"
	}
	for _, c := range strings.Split(resolved, "/") {
		if isDotGit(c) {
			return "symlink into .git"
		}
	}
	for _, c := range strings.Split(target, "/") {
		if isDotGit(c) {
			return "symlink into .git"
		}
	}
	return ""
}

// litterDirs are directories that tools create while running tests or installing
// packages. A new file under one of them is litter.
var litterDirs = map[string]bool{
	"__pycache__": true, ".pytest_cache": true, ".mypy_cache": true, ".ruff_cache": true,
	".hypothesis": true, ".tox": true, ".nox": true, ".eggs": true, ".venv": true,
	"node_modules": true, ".gradle": true, "htmlcov": true, ".ipynb_checkpoints": true,
	".cache": true, ".gocache": true,
}

// litterRootDirs are litter only at the repository root, where the tool puts them
// (cargo's target/); deeper, the same name is often real source.
var litterRootDirs = map[string]bool{"target": true}

// litterFiles are file names (matched on the base name) that tools leave behind.
var litterFiles = map[string]bool{".coverage": true, ".DS_Store": true, "nohup.out": true}

// litterSuffixes are file-name endings of litter: compiled Python, editor swap files,
// the leftovers of `patch`.
var litterSuffixes = []string{".pyc", ".pyo", ".orig", ".rej", ".swp"}

// isLitter reports whether a path is something a command created as a side effect.
// It is only asked about files the repository did not track before.
func isLitter(p string) bool {
	parts := strings.Split(p, "/")
	for i, c := range parts[:len(parts)-1] {
		if litterDirs[c] || strings.HasSuffix(c, ".egg-info") || (i == 0 && litterRootDirs[c]) {
			return true
		}
	}
	base := parts[len(parts)-1]
	if litterFiles[base] || strings.HasPrefix(base, ".coverage.") || strings.HasSuffix(base, ".egg-info") {
		return true
	}
	for _, s := range litterSuffixes {
		if strings.HasSuffix(base, s) {
			return true
		}
	}
	return false
}

// ExcludePatterns returns the litter rules above as gitignore patterns, for the sandbox's
// .git/info/exclude: the same list decides what the diff leaves out and what Sanitize drops.
// An exclude rule only hides files git does not track, as isLitter only judges new files.
func ExcludePatterns() []string {
	var out []string
	for _, set := range []map[string]bool{litterDirs, litterRootDirs, litterFiles} {
		names := make([]string, 0, len(set))
		for n := range set {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			switch {
			case litterRootDirs[n]:
				out = append(out, "/"+n+"/")
			case litterDirs[n]:
				out = append(out, n+"/")
			default:
				out = append(out, n)
			}
		}
	}
	out = append(out, "*.egg-info", ".coverage.*")
	for _, s := range litterSuffixes {
		out = append(out, "*"+s)
	}
	return out
}

// isWorkflowPath reports whether p is under .github/workflows/ or .github/actions/
// (local actions run in CI with the workflow's permissions), or is one of those
// directories or .github itself (which a patch could replace with a symlink or file).
// The comparison ignores case so that no spelling slips past on a case-insensitive
// checkout.
func isWorkflowPath(p string) bool {
	l := strings.ToLower(p)
	switch l {
	case ".github", ".github/workflows", ".github/actions":
		return true
	}
	return strings.HasPrefix(l, ".github/workflows/") || strings.HasPrefix(l, ".github/actions/")
}

// testDirs are directory names whose files are tests or test data.
var testDirs = map[string]bool{
	"test": true, "tests": true, "__tests__": true, "spec": true, "specs": true, "testdata": true,
	"test_data": true, "testing": true, "e2e": true,
}

// IsTestPath reports whether a path looks like a test file in the usual conventions of
// Go, Python, JavaScript/TypeScript, Ruby, Java/Kotlin and Rust, or lives in a test
// directory. It is a heuristic for the report, not a security rule.
func IsTestPath(p string) bool {
	parts := strings.Split(p, "/")
	for _, c := range parts[:len(parts)-1] {
		if testDirs[strings.ToLower(c)] {
			return true
		}
	}
	base := parts[len(parts)-1]
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	switch ext {
	case ".go":
		return strings.HasSuffix(stem, "_test")
	case ".py":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || stem == "conftest"
	case ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts":
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") ||
			strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_spec")
	case ".rb":
		return strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "_test")
	case ".java", ".kt", ".scala", ".cs":
		return strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") ||
			strings.HasSuffix(stem, "IT") || strings.HasPrefix(stem, "Test")
	case ".rs", ".c", ".cc", ".cpp", ".php", ".ex", ".exs":
		return strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_") ||
			strings.HasSuffix(stem, "Test")
	}
	return false
}

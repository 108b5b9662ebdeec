package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	t.Parallel()
	dir := setup(t, map[string]string{
		"a.txt":              "",
		"b.md":               "",
		"-x.txt":             "",
		"[ab].txt":           "",
		"src/main.py":        "",
		"src/pkg/mod.py":     "",
		"src/pkg/.secret.py": "",
		".hidden/h.py":       "",
		".github/ci.yml":     "",
		"empty/":             "",
	})
	other := setup(t, map[string]string{"o.py": ""})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"Star", map[string]any{"pattern": "*.txt"}, "-x.txt\n[ab].txt\na.txt"},
		{"RecursiveSkipsHidden", map[string]any{"pattern": "**/*.py"}, "src/main.py\nsrc/pkg/mod.py"},
		{"DoubleStarAloneListsFiles", map[string]any{"pattern": "**"}, "-x.txt\n[ab].txt\na.txt\nb.md\nsrc/main.py\nsrc/pkg/mod.py"},
		{"DoubleStarTwiceKeepsDuplicates", map[string]any{"pattern": "**/**/*.py"}, "src/main.py\nsrc/main.py\nsrc/pkg/mod.py\nsrc/pkg/mod.py\nsrc/pkg/mod.py"},
		{"UnderDirectory", map[string]any{"pattern": "src/**"}, "src/main.py\nsrc/pkg/mod.py"},
		{"DotPatternMatchesHidden", map[string]any{"pattern": ".*/*"}, ".github/ci.yml\n.hidden/h.py"},
		{"HiddenDirNotEnteredByDoubleStar", map[string]any{"pattern": "**/*.yml"}, "No files matched."},
		{"HiddenFileByDotPattern", map[string]any{"pattern": "**/.*.py"}, "src/pkg/.secret.py"},
		{"PathArgument", map[string]any{"pattern": "*.py", "path": "src"}, "src/main.py"},
		{"AbsolutePathArgument", map[string]any{"pattern": "**/*.py", "path": dir + "/src"}, "src/main.py\nsrc/pkg/mod.py"},
		{"OutsideShownAbsolute", map[string]any{"pattern": "*.py", "path": other}, other + "/o.py"},
		{"AbsolutePattern", map[string]any{"pattern": dir + "/src/*.py"}, "src/main.py"},
		{"DotDotPattern", map[string]any{"pattern": "../" + filepath.Base(dir) + "/*.md"}, "b.md"},
		{"LiteralFile", map[string]any{"pattern": "a.txt"}, "a.txt"},
		{"DirectoriesNotListed", map[string]any{"pattern": "src/"}, "No files matched."},
		{"MagicInMiddle", map[string]any{"pattern": "*/main.py"}, "src/main.py"},
		{"Question", map[string]any{"pattern": "?.txt"}, "a.txt"},
		{"Class", map[string]any{"pattern": "[ab].*"}, "a.txt\nb.md"},
		{"EscapedBracket", map[string]any{"pattern": "[[]ab].txt"}, "[ab].txt"},
		{"NegatedRange", map[string]any{"pattern": "[!a-c]*.txt"}, "-x.txt\n[ab].txt"},
		{"ReversedRangeMatchesNothing", map[string]any{"pattern": "[z-a]*"}, "No files matched."},
		{"LeadingHyphen", map[string]any{"pattern": "[-]*"}, "-x.txt"},
		{"TrailingHyphen", map[string]any{"pattern": "[a-]*.txt"}, "-x.txt\na.txt"},
		{"UnclosedBracketIsLiteral", map[string]any{"pattern": "[*"}, "[ab].txt"},
		{"CaseSensitive", map[string]any{"pattern": "*.TXT"}, "No files matched."},
		{"None", map[string]any{"pattern": "*.nothing"}, "No files matched."},
		{"MissingRoot", map[string]any{"pattern": "*", "path": "nope"}, "No files matched."},
		{"EmptyPattern", map[string]any{"pattern": ""}, "ValueError: pattern is required"},
		{"NoPattern", map[string]any{"path": "src"}, "ValueError: pattern is required"},
		{"NulInDirectory", map[string]any{"pattern": "a\x00b/*"}, "ValueError: embedded null byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := run(t, dir, "Glob", tt.args); got != tt.want {
				t.Errorf("Glob(%v)\n got: %q\nwant: %q", tt.args, got, tt.want)
			}
		})
	}
}

func TestGlobSymlinks(t *testing.T) {
	t.Parallel()
	dir := setup(t, map[string]string{"src/main.py": "", "a.txt": ""})
	for name, target := range map[string]string{"link": "src", "loop": ".", "alias.txt": "a.txt", "dangling.txt": "nope"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, pattern, want string
	}{
		// Files are shown by their resolved path, so a linked file appears twice.
		{"FilesThroughLinks", "*.txt", "a.txt\na.txt"},
		{"LinkedDirectoryFollowed", "link/*.py", "src/main.py"},
		// "loop" points back at the root, which is already on the descent, so it is not
		// entered (Python would recurse until the kernel refuses); src/main.py is found
		// through "src" and through "link".
		{"LoopBounded", "**/*.py", "src/main.py\nsrc/main.py"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := run(t, dir, "Glob", map[string]any{"pattern": tt.pattern}); got != tt.want {
				t.Errorf("Glob(%q)\n got: %q\nwant: %q", tt.pattern, got, tt.want)
			}
		})
	}
}

func TestGlobLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files int
		more  string
	}{
		{"AtLimit", globLimit, ""},
		{"OneOver", globLimit + 1, "\n... 1 more files"},
		{"ManyOver", globLimit + 234, "\n... 234 more files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			for i := range tt.files {
				files[fmt.Sprintf("d%d/f%04d.go", i%7, i)] = ""
			}
			dir := setup(t, files)
			got := run(t, dir, "Glob", map[string]any{"pattern": "**/*.go"})
			body, more := got, ""
			if i := strings.Index(got, "\n... "); i >= 0 {
				body, more = got[:i], got[i:]
			}
			if more != tt.more {
				t.Errorf("suffix %q, want %q", more, tt.more)
			}
			lines := strings.Split(body, "\n")
			if len(lines) != globLimit {
				t.Fatalf("%d paths shown, want %d", len(lines), globLimit)
			}
			for i := 1; i < len(lines); i++ {
				if lines[i-1] > lines[i] {
					t.Fatalf("not sorted: %q before %q", lines[i-1], lines[i])
				}
			}
			if lines[0] != "d0/f0000.go" {
				t.Errorf("first path %q, want d0/f0000.go", lines[0])
			}
		})
	}
}

func TestFnmatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "anything", true},
		{"*", "", true},
		{"a*b*c", "aXbYbZc", true},
		{"a*b*c", "aXbYbZ", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*.py", "x.py\n", false},
		{"*", "new\nline", true},
		{"[abc]", "b", true},
		{"[!abc]", "b", false},
		{"[!abc]", "d", true},
		{"[^a]", "^", true}, // '^' is not negation in fnmatch
		{"[^a]", "b", false},
		{"[]]", "]", true},
		{"[!]]", "x", true},
		{"[!]]", "]", false},
		{"[a-c]", "b", true},
		{"[a-c]", "d", false},
		{"[a-]", "-", true},
		{"[-a]", "-", true},
		{"[a-c-e]", "-", true},
		{"[a-c-e]", "d", false},
		{"[z-a]", "m", false},
		{"[!b-a]", "q", true}, // a negated empty class matches any character
		{"[\\]", "\\", true},
		{"[", "[", true},
		{"[a", "[a", true},
		{"é*", "été", true},
		{"?", "é", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"_"+tt.name, func(t *testing.T) {
			t.Parallel()
			if got := compileGlob(tt.pattern).match(tt.name); got != tt.want {
				t.Errorf("match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
			}
		})
	}
}

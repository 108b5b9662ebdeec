package scanner

import (
	"path"
	"strings"
	"testing"
)

func TestPatternMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern string
		yes, no []string
	}{
		{".semgrepignore", []string{".semgrepignore", "lib/.semgrepignore", "a/b/c/.semgrepignore"}, []string{"semgrepignore", "x.semgrepignore", ".semgrepignore/x"}},
		{".eslintrc*", []string{".eslintrc", ".eslintrc.json", "web/src/.eslintrc.cjs"}, []string{"eslintrc", ".eslintrc/x.js", "web/eslint.config.js"}},
		{"eslint.config.*", []string{"eslint.config.js", "pkg/a/eslint.config.mjs"}, []string{"eslint.config", "eslint-config.js"}},
		{".semgrep/", []string{".semgrep/rules.yml", "sub/.semgrep/x/y.yml", ".semgrep"}, []string{".semgrepx/rules.yml", "semgrep/rules.yml"}},
		{"tools/eslint/*.js", []string{"tools/eslint/rule.js"}, []string{"tools/eslint/sub/rule.js", "x/tools/eslint/rule.js", "tools/eslint/rule.ts"}},
		{"tools/**/*.js", []string{"tools/a.js", "tools/a/b/c.js"}, []string{"tools.js", "x/tools/a.js"}},
		{"conf/", []string{"conf/a", "conf/b/c", "conf", "x/conf/a"}, []string{"confx/a", "con"}},
		{"a/conf/", []string{"a/conf/x", "a/conf"}, []string{"b/a/conf/x", "conf/x"}},
		{"a/**/**/b", []string{"a/b", "a/x/y/b"}, []string{"a/x/c"}},
	} {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatalf("ParsePattern(%q): %v", c.pattern, err)
		}
		if p.String() != c.pattern {
			t.Errorf("String() = %q", p.String())
		}
		for _, y := range c.yes {
			if !p.Match(y) {
				t.Errorf("%q does not match %q", c.pattern, y)
			}
		}
		for _, n := range c.no {
			if p.Match(n) {
				t.Errorf("%q matches %q", c.pattern, n)
			}
		}
	}
	for _, bad := range []string{"", "/abs", "a//b", "./a", "a/../b", "..", "a\\b", "x\x00", strings.Repeat("a", 201), "a**", "[a"} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("ParsePattern(%q) accepted", bad)
		}
	}
}

// BenchmarkPatternManyStars: a patch chooses its paths; a path of a thousand folders against a
// pattern of several "**" costs parts × segments, not an explosion.
func BenchmarkPatternManyStars(b *testing.B) {
	p, err := ParsePattern("**/a*/**/b*/**/c*/**/d*/**/e")
	if err != nil {
		b.Fatal(err)
	}
	path := strings.Repeat("ab/", 1000) + "x"
	for b.Loop() {
		if p.Match(path) {
			b.Fatal("matched")
		}
	}
}

// FuzzPatternMatch: a patch chooses its paths; matching one against any pattern never panics,
// and a pattern without '/' matches a path exactly when it matches the path's last part.
func FuzzPatternMatch(f *testing.F) {
	f.Add(".eslintrc*", "web/src/.eslintrc.json")
	f.Add(".semgrep/", "a/.semgrep/b/c.yml")
	f.Add("tools/**/*.js", "tools/a/b/c.js")
	f.Add("[a-", "x")
	f.Add("**/**/x", strings.Repeat("a/", 200)+"x")
	f.Fuzz(func(t *testing.T, pattern, file string) {
		p, err := ParsePattern(pattern)
		if err != nil {
			return
		}
		got := p.Match(file)
		if !strings.Contains(pattern, "/") && file != "" {
			base := file[strings.LastIndexByte(file, '/')+1:]
			if want, _ := path.Match(pattern, base); got != want {
				t.Fatalf("%q.Match(%q) = %v, want %v (its last part)", pattern, file, got, want)
			}
		}
	})
}

package deps

import (
	"context"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/deps/osvtest"
)

var fuzzPaths = []string{"requirements.txt", "pyproject.toml", "poetry.lock", "uv.lock", "Pipfile.lock", "go.mod",
	"package.json", "package-lock.json", "Cargo.toml", "Cargo.lock", "setup.py", "setup.cfg",
	"pdm.lock", "pylock.toml", "uv.toml", "pdm.toml", "poetry.toml", "hatch.toml", ".npmrc"}

// FuzzParse feeds every parser bytes a patch could write: Parse must return (an error is
// fine) without a panic escaping, the same answer twice, and only named, sorted packages.
func FuzzParse(f *testing.F) {
	seeds := map[int]string{
		0: "requests==2.31.0\nflask>=2.0 ; python_version > '3'\n-r other.txt\nx[extra]==1 --hash=sha256:00\n",
		1: "[project]\nname = \"a\"\ndependencies = [\"requests>=2\"]\n[project.optional-dependencies]\nt = [\"pytest\"]\n",
		2: "[[package]]\nname = \"idna\"\nversion = \"3.7\"\n",
		3: "version = 1\n[[package]]\nname = \"attrs\"\nversion = \"23.2.0\"\n",
		4: `{"default": {"requests": {"version": "==2.31.0"}}}`,
		5: "module m\n\ngo 1.16\n\nrequire golang.org/x/text v0.3.7\nreplace golang.org/x/text => ../text\n",
		6: `{"name": "a", "version": "1.0.0", "dependencies": {"lodash": "^4.17.21", "x": "git+ssh://h/x"}}`,
		7: `{"lockfileVersion": 1, "dependencies": {"a": {"version": "1.0.0", "dependencies": {"b": {"version": "2"}}}}}`,
		8: "[package]\nname = \"a\"\n[dependencies]\nserde = \"1.0\"\nr = { git = \"x\", rev = \"abc\" }\n",
		9: "version = 3\n[[package]]\nname = \"smallvec\"\nversion = \"1.6.1\"\n",
		10: "from setuptools import setup\nREQS = ['a>=1', \"b @ https://h/b.whl\"]\nsetup(name='x', install_requires=REQS,\n" +
			"  extras_require={'t': ['pytest'], 'd': 'c==1'}, setup_requires=['wheel'])\n",
		11: "[options]\ninstall_requires =\n    requests>=2\n    foo @ git+https://h/foo\nsetup_requires = file: build.txt\n" +
			"[options.extras_require]\ntest = pytest; mock\n",
		12: "--extra-index-url https://u:p@h/simple\n-i https://h2/simple\n-r more.txt\n--constraint=c.txt\n" +
			"-e git+https://h/x.git@v1#egg=x\nname @ https://h/n-1.0.tar.gz ; python_version > \"3\"\n./local[extra]\n" +
			"--find-links ../wheels\n--trusted-host h\nfoo==${VERSION}\n--extra-ind=https://h3/\n-r \"quoted file.txt\"\n",
		13: `{"name": "a", "dependencies": {"a": "npm:b@^1", "g": "github:u/r#v1", "u": "user/repo", "t": "https://h/t.tgz",
			"f": "file:../f", "l": "link:./l", "w": "workspace:*", "tag": "next", "p": "patch:x@1#./p.patch"},
			"devDependencies": {"d": "~2.0.0"}, "overrides": {"a": "1.0.0", "b": {".": "2", "c": "$a"}},
			"resolutions": {"**/q": "git+ssh://git@h:u/q.git"}, "pnpm": {"overrides": {"x@1>y": "3"}}}`,
		14: "module m\n\ngo 1.21\ntoolchain go1.22.1\nrequire golang.org/x/text v0.3.7\nreplace golang.org/x/text v0.3.7 => ./text\n" +
			"replace a.b/c => a.b/d v1.0.0\nretract [v1.0.0, v1.1.0]\nexclude a.b/e v1.0.0\n",
		15: "[dependencies]\na = { git = \"https://h/a\", tag = \"v1\" }\nb = { path = \"../b\" }\nc = { version = \"1\", package = \"d\" }\n" +
			"[target.'cfg(unix)'.dev-dependencies]\ne = \"2\"\n[patch.crates-io]\nf = { git = \"https://h/f\" }\n[replace]\n\"g:1.0.0\" = { path = \"g\" }\n",
		16: "[build-system]\nrequires = [\"setuptools>=61\"]\n[project]\nname = \"a\"\ndynamic = [\"dependencies\"]\n" +
			"[tool.setuptools.dynamic]\ndependencies = {file = [\"requirements.in\"]}\n[[tool.uv.index]]\nurl = \"https://h/simple\"\n" +
			"[tool.uv.sources]\nx = { git = \"https://h/x\" }\n[tool.poetry.dependencies]\npython = \"^3.9\"\ny = { git = \"https://h/y\" }\nz = \"1.2\"\n",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	// The readers of pysources.go, each at its path's index.
	for p, s := range map[string]string{
		"pdm.lock":    "[[package]]\nname = \"a\"\nversion = \"1\"\ngit = \"https://h/a\"\nrevision = \"abc\"\n[[package]]\nname = \"b\"\nurl = \"https://h/b.whl\"\n",
		"pylock.toml": "lock-version = \"1.0\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nindex = \"https://h/simple\"\n[[packages]]\nname = \"b\"\nvcs = { url = \"https://h/b\" }\n",
		"uv.toml":     "index-url = \"https://h/simple\"\noverride-dependencies = [\"a==1\"]\n[pip]\nextra-index-url = [\"https://h2\"]\n",
		"pdm.toml":    "[pypi]\nurl = \"https://h/simple\"\n[pypi.x]\nurl = \"https://h2\"\n",
		"poetry.toml": "[repositories.x]\nurl = \"https://h/simple\"\n",
		"hatch.toml":  "[envs.a]\ndependencies = [\"x==1\"]\n[envs.a.env-vars]\nPIP_INDEX_URL = \"https://h\"\n[build.hooks.c]\ndependencies = [\"y\"]\n",
		".npmrc":      "registry=https://h/\n@s:registry=${R}\n//h/:_authToken=x\nstrict-ssl=false\n",
	} {
		f.Add(uint8(slices.Index(fuzzPaths, p)), []byte(s))
	}
	// Line ends, whitespace and quoting as each tool reads them (lines.go, iniUnsafe).
	for _, s := range []struct{ p, s string }{
		{"requirements.txt", "a==1 # c\r--extra-index-url https://h/\f# x\x1cb==2\u2028-r c.txt\\\n\u0085d==1\x1f\u00a0# e\n"},
		{"setup.cfg", "[options] #c\r\x1cinstall_requires = a==1\f# x\n\u3000  b==2\r\n  setup_requires = c\n"},
		{"setup.py", "from setuptools import setup\nsetup(install_requires=['a'], # c\rsetup_requires=['b\\\r\nc'])\r"},
		{".npmrc", "\ufeff\"regi\\u0073try\" = \"https://h/\"\r'@s:registry'[]=x ;c\n${X}registry=https://h2/\n'[1]'=https://h3/\nk=\\;\\#\\x\\\n"},
	} {
		f.Add(uint8(slices.Index(fuzzPaths, s.p)), []byte(s.s))
	}
	f.Fuzz(func(t *testing.T, which uint8, content []byte) {
		p := fuzzPaths[int(which)%len(fuzzPaths)]
		ma, errA := Parse(context.Background(), p, content)
		mb, errB := Parse(context.Background(), p, content)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("two parses of one %s differ: %v / %v", p, errA, errB)
		}
		if errA != nil {
			return
		}
		if !reflect.DeepEqual(ma.Settings, mb.Settings) || !reflect.DeepEqual(ma.Includes, mb.Includes) || !reflect.DeepEqual(ma.Unread, mb.Unread) {
			t.Fatalf("two parses of one %s differ: %+v / %+v", p, ma, mb)
		}
		a, b := ma.Packages, mb.Packages
		if len(a) != len(b) {
			t.Fatalf("two parses of one %s differ: %d / %d packages", p, len(a), len(b))
		}
		for _, m := range []*Manifest{ma} {
			for _, u := range m.Unread {
				if u.File != p || u.Why == "" {
					t.Fatalf("an unread entry without its file or reason: %+v", u)
				}
			}
			for _, pk := range m.Packages {
				if pk.In != p || pk.Name == "" && pk.Source.Kind == Registry {
					t.Fatalf("a package without its file, or without a name and a source: %+v", pk)
				}
				if strings.Contains(pk.Source.Where, "://u:p@") {
					t.Fatalf("a source kept its credentials: %q", pk.Source.Where)
				}
			}
		}
		for i := range a {
			if a[i].Ecosystem != b[i].Ecosystem || a[i].Name != b[i].Name || a[i].Display() != b[i].Display() {
				t.Fatalf("two parses of one %s differ at %d: %+v / %+v", p, i, a[i], b[i])
			}
			if i > 0 && (a[i-1].Ecosystem > a[i].Ecosystem || a[i-1].Ecosystem == a[i].Ecosystem && a[i-1].Name > a[i].Name) {
				t.Fatalf("packages of %s not sorted: %+v before %+v", p, a[i-1], a[i])
			}
		}
		// compare is given what Parse returned on both sides: nothing is a change.
		if cs := compare(a, b, false); len(cs) != 0 {
			t.Fatalf("a manifest compared with itself changed: %+v", cs)
		}
	})
}

// FuzzLines feeds the line splitters any text: pySplitlines's lines hold no break of Python's
// str.splitlines() and universalLines's no \r or \n, each splitter's lines are in order, in
// the text, and numbered from 1 to at most one more than the text's "\n", and iniUnsafe
// returns the same answer twice without a panic.
func FuzzLines(f *testing.F) {
	for _, s := range []string{"a\r\nb\rc\n", "x\fy\vz\x1c\u0085\u2028\u2029", "\r\r\n\n", "'\"a\"'", "\"\\u0061\"", "a\\;b#c", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check := func(name string, ls []line, bad func(rune) bool) {
			max, at, n := strings.Count(s, "\n")+1, 0, 1
			for _, l := range ls {
				if strings.IndexFunc(l.text, bad) >= 0 {
					t.Fatalf("%s: a line holds a break: %q", name, l.text)
				}
				i := strings.Index(s[at:], l.text)
				if i < 0 || l.n < n || l.n > max {
					t.Fatalf("%s: line %d %q out of order or of range in %q", name, l.n, l.text, s)
				}
				at, n = at+i+len(l.text), l.n
			}
		}
		check("pySplitlines", pySplitlines(s), pyLineBreak)
		check("universalLines", universalLines(s), func(r rune) bool { return r == '\r' || r == '\n' })
		a, okA := iniUnsafe(s)
		b, okB := iniUnsafe(s)
		if a != b || okA != okB {
			t.Fatalf("iniUnsafe(%q) twice: %q %v / %q %v", s, a, okA, b, okB)
		}
	})
}

// FuzzRecord feeds the export reader and the matcher a record of the operator's export and a
// version from a patch: no panic escapes, and a found vulnerability names its record's id.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(exportVulns[0].JSON()), "2.31.0")
	f.Add([]byte(osvtest.Vuln{ID: "X", Ecosystem: "PyPI", Package: "requests", Introduced: "0", Fixed: "not.a.version!"}.JSON()), "1.0")
	f.Add([]byte(`{"id":"Y","affected":[{"package":{"ecosystem":"PyPI","name":"requests"},"versions":["2.31.0"],"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"last_affected":"3"}]}]}]}`), "2.31.0")
	f.Fuzz(func(t *testing.T, rec []byte, version string) {
		m, err := Parse(context.Background(), "requirements.txt", []byte("requests=="+strings.ReplaceAll(version, "\n", "")+"\n"))
		if err != nil || len(m.Packages) != 1 {
			return
		}
		ps := m.Packages
		hit, ok := names4(rec, "PyPI", map[string]bool{"requests": true})
		if !ok || len(hit) == 0 {
			return
		}
		dir := t.TempDir()
		osvtest.Write(t, dir, "PyPI", map[string]string{"r.json": string(rec)})
		rep := &Report{Changes: []Change{{Ecosystem: "PyPI", Name: "requests", Kind: Added, New: ps}}}
		OSV{Dir: dir}.Check(context.Background(), rep)
		for _, v := range rep.Changes[0].Vulns {
			if !strings.Contains(string(rec), v.ID) && !reflect.DeepEqual(v, Vuln{}) {
				t.Fatalf("found %q, which the record does not name", v.ID)
			}
		}
	})
}

// FuzzIncludeTarget: whatever path a manifest includes, what is followed is a clean path of
// the repository (never absolute, never out of it, never into .git), or nothing, with a reason.
func FuzzIncludeTarget(f *testing.F) {
	for _, s := range [][2]string{{"requirements.txt", "more.txt"}, {"a/b/requirements.txt", "../../c.txt"},
		{"requirements.txt", "../x"}, {"r.txt", "/etc/passwd"}, {"r.txt", "~/x"}, {"a/r.txt", "../.git/config"},
		{"r.txt", "./a/../../b"}, {"r.txt", "a//b/./c"}, {"r.txt", "."}, {"r.txt", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, from, p string) {
		got, why := includeTarget(from, Include{Path: p})
		if why != "" {
			if got != "" {
				t.Fatalf("a reason and a path: %q, %q", got, why)
			}
			return
		}
		if got == "" || strings.HasPrefix(got, "/") || got == ".." || strings.HasPrefix(got, "../") || path.Clean(got) != got {
			t.Fatalf("includeTarget(%q, %q) = %q: not a clean path of the repository", from, p, got)
		}
		for _, part := range strings.Split(got, "/") {
			if part == ".git" || part == ".." {
				t.Fatalf("includeTarget(%q, %q) = %q: into .git or out", from, p, got)
			}
		}
	})
}

// userInfo is what githubapp's redactor takes for credentials in a URL.
var userInfo = regexp.MustCompile(`://[^/\s:@]+:[^/\s]*@`)

// FuzzRedactURL: a URL with a user and a password keeps neither, whatever surrounds them.
func FuzzRedactURL(f *testing.F) {
	f.Add("https://", "user", "pass1234", "h.example/simple?token=x#frag")
	f.Add("git+ssh://", "git", "pw:pw", "h.example:u/r.git")
	f.Add("", "a", "b", "")
	f.Fuzz(func(t *testing.T, scheme, user, pass, rest string) {
		if len(pass) < 4 || strings.ContainsAny(user+pass, "/@?#") || strings.ContainsAny(scheme+user+pass+rest, " \t\n") {
			return
		}
		u := scheme + user + ":" + pass + "@" + rest
		got := RedactURL(u)
		if strings.Contains(scheme, "://") && strings.Contains(got, ":"+pass+"@") {
			t.Fatalf("RedactURL(%q) = %q keeps the password", u, got)
		}
		if strings.HasSuffix(scheme, "://") && !strings.ContainsAny(scheme[:len(scheme)-3], "/?#@") && userInfo.MatchString(got) {
			t.Fatalf("RedactURL(%q) = %q keeps user information", u, got)
		}
	})
}

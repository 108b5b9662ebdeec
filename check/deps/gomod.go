package deps

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/purl"
	"golang.org/x/mod/modfile"
)

// parseGoMod reads a go.mod with golang.org/x/mod/modfile, the parser SCALIBR's gomod
// extractor uses. The extractor itself is not used because it applies each replace to the
// module it replaces: a module replaced by a local folder becomes a package named by the
// folder, with no version, and the module it replaced looks removed. Here every require is
// listed as written, the go or toolchain line as the module "stdlib" (as SCALIBR lists it, so
// its known vulnerabilities are checked), and each replace as an entry of its own (RoleReplace)
// whose Source is the other module (checked for vulnerabilities at its version) or the local
// folder. retract and exclude are settings.
func parseGoMod(_ context.Context, file string, content []byte) (*Manifest, error) {
	f, err := modfile.Parse(file, content, nil)
	if err != nil {
		return nil, fmt.Errorf("go.mod could not parse it: %w", err)
	}
	m := &Manifest{}
	gopkg := func(name, version string) *extractor.Package {
		return &extractor.Package{Name: name, Version: version, PURLType: purl.TypeGolang}
	}
	for _, r := range f.Require {
		v := strings.TrimPrefix(r.Mod.Version, "v")
		m.Packages = append(m.Packages, Package{Ecosystem: "Go", Name: r.Mod.Path, Version: v, pkg: gopkg(r.Mod.Path, v)})
	}
	goVersion := ""
	if f.Go != nil {
		goVersion = f.Go.Version
	}
	if f.Toolchain != nil && f.Toolchain.Name != "" {
		v, _, _ := strings.Cut(f.Toolchain.Name, "-")
		goVersion = strings.TrimPrefix(v, "go")
	}
	if goVersion != "" {
		m.Packages = append(m.Packages, Package{Ecosystem: "Go", Name: "stdlib", Version: goVersion, pkg: gopkg("stdlib", goVersion)})
	}
	for _, r := range f.Replace {
		name := r.Old.Path
		p := Package{Ecosystem: "Go", Name: name, Role: RoleReplace}
		if r.Old.Version != "" {
			p.Name = name + "@" + r.Old.Version
		}
		if r.New.Version == "" {
			// A folder: a path that starts with ./ or ../ (or is absolute), as the go command
			// requires of a replacement without a version.
			p.Source = pathSource(file, r.New.Path)
		} else {
			v := strings.TrimPrefix(r.New.Version, "v")
			p.Version = v
			if r.New.Path != r.Old.Path {
				p.Source = Source{Kind: FromPackage, Where: r.New.Path}
			}
			p.pkg = gopkg(r.New.Path, v)
		}
		m.Packages = append(m.Packages, p)
	}
	for _, r := range f.Retract {
		v := r.Low
		if r.High != r.Low {
			v = "[" + r.Low + ", " + r.High + "]"
		}
		m.Settings = append(m.Settings, Setting{Name: "retract", Value: v, Line: r.Syntax.Start.Line})
	}
	for _, x := range f.Exclude {
		m.Settings = append(m.Settings, Setting{Name: "exclude", Value: x.Mod.Path + " " + x.Mod.Version, Line: x.Syntax.Start.Line})
	}
	return m, nil
}

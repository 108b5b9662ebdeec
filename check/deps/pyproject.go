package deps

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/extractor/filesystem/language/python/pyprojecttoml"
	"github.com/google/osv-scalibr/purl"
)

// parsePyproject reads a pyproject.toml. SCALIBR's pyprojecttoml extractor reads [project]'s
// dependencies and optional dependencies (when [project] has a name, as PEP 621 requires), and
// each is read here as pip reads a requirement (a version, a URL, a path). The rest SCALIBR
// does not read, and this does, with the TOML library SCALIBR uses: [build-system] requires
// (pip installs them to build the project), [dependency-groups], setuptools' file: includes
// ([tool.setuptools.dynamic]), uv's sources, indexes and dependency lists ([tool.uv]), PDM's
// sources, dev-dependencies and overrides ([tool.pdm], pysources.go), Poetry's tables
// (dependencies, groups, sources), and Hatch's environments and build hooks ([tool.hatch],
// readHatch). A value of a type the tool would refuse is unread.
func parsePyproject(ctx context.Context, file string, content []byte) (*Manifest, error) {
	pkgs, err := extract(ctx, pyprojectExtractor, file, content)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if _, err := toml.Decode(string(content), &doc); err != nil {
		return nil, fmt.Errorf("it is not TOML: %w", err)
	}
	m := &Manifest{}
	r := &pyReader{file: file, m: m}
	project, _ := doc["project"].(map[string]any)
	named := false
	for _, k := range pkgs {
		md, ok := k.Metadata.(*pyprojecttoml.Metadata)
		if !ok {
			continue
		}
		named = true
		for _, d := range md.Dependencies {
			r.requirement(reqLine{text: d})
		}
		groups := make([]string, 0, len(md.OptionalDependencies))
		for g := range md.OptionalDependencies {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			for _, d := range md.OptionalDependencies[g] {
				r.requirement(reqLine{text: d})
			}
		}
	}
	if project != nil && !named && (project["dependencies"] != nil || project["optional-dependencies"] != nil) {
		r.unread(0, "[project]", "it has no name, which the build tools refuse")
	}
	dynamic := false
	if project != nil {
		ds, _ := project["dynamic"].([]any)
		for _, d := range ds {
			if d == "dependencies" || d == "optional-dependencies" {
				dynamic = true
			}
		}
	}
	if bs, ok := doc["build-system"].(map[string]any); ok {
		r.role = RoleBuild
		r.strings(bs["requires"], "[build-system] requires")
		r.role = ""
	}
	if dg, ok := doc["dependency-groups"].(map[string]any); ok {
		for _, g := range sortedKeys(dg) {
			list, ok := dg[g].([]any)
			if !ok {
				r.unread(0, "[dependency-groups] "+g, "it is not a list")
				continue
			}
			for _, v := range list {
				if _, isTable := v.(map[string]any); isTable {
					continue // {include-group = "other"}: a group of this file, read anyway
				}
				r.strings([]any{v}, "[dependency-groups] "+g)
			}
		}
	}
	tool, _ := doc["tool"].(map[string]any)
	if st, ok := tool["setuptools"].(map[string]any); ok {
		if dyn, ok := st["dynamic"].(map[string]any); ok {
			if setuptoolsFiles(r, dyn["dependencies"], "[tool.setuptools.dynamic] dependencies") {
				dynamic = false
			}
			if od, ok := dyn["optional-dependencies"].(map[string]any); ok {
				for _, g := range sortedKeys(od) {
					setuptoolsFiles(r, od[g], "[tool.setuptools.dynamic] optional-dependencies."+g)
				}
			}
		}
	}
	if dynamic {
		r.unread(0, "[project] dynamic", "its dependencies are dynamic: the build backend computes them when it runs (setup.py and setup.cfg are read as files of their own)")
	}
	if uv, ok := tool["uv"].(map[string]any); ok {
		readUV(r, uv, "tool.uv")
		readUVMore(r, uv, "tool.uv")
	}
	if pdm, ok := tool["pdm"].(map[string]any); ok {
		readPDM(r, pdm)
	}
	if po, ok := tool["poetry"].(map[string]any); ok {
		readPoetry(r, po)
	}
	if hatch, ok := tool["hatch"].(map[string]any); ok {
		readHatch(r, hatch, "tool.hatch")
	}
	if tool["pixi"] != nil {
		r.unread(0, "[tool.pixi]", "it holds pixi's dependencies and channels, which frognano does not read")
	}
	if err := r.finish(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

var pyprojectExtractor, _ = pyprojecttoml.New(nil)

// strings reads v, which must be a list of requirement strings.
func (r *pyReader) strings(v any, where string) {
	if v == nil {
		return
	}
	list, ok := v.([]any)
	if !ok {
		r.unread(0, where, "it is not a list of requirements")
		return
	}
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			r.unread(0, where, "an entry of it is not a string")
			continue
		}
		r.requirement(reqLine{text: s})
	}
}

// setuptoolsFiles reads a {file = ...} table of [tool.setuptools.dynamic] as includes.
func setuptoolsFiles(r *pyReader, v any, where string) bool {
	t, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			r.unread(0, where, "it is not a table with file")
		}
		return false
	}
	var files []any
	switch f := t["file"].(type) {
	case string:
		files = []any{f}
	case []any:
		files = f
	default:
		r.unread(0, where, "it is not a table with file")
		return false
	}
	for _, f := range files {
		s, ok := f.(string)
		if !ok {
			r.unread(0, where, "a file of it is not a string")
			continue
		}
		r.m.Includes = append(r.m.Includes, Include{Path: s, What: where + " file " + clip(s, 200)})
	}
	return true
}

// readUV reads [tool.uv]: its indexes are settings, its sources say where a dependency comes
// from instead of the index (listed as overrides of that name).
// prefix names the table in what the report says: "tool.uv", or "uv.toml" for uv's own file.
func readUV(r *pyReader, uv map[string]any, prefix string) {
	for _, k := range []string{"index-url", "extra-index-url", "find-links"} {
		switch v := uv[k].(type) {
		case nil:
		case string:
			r.setting(prefix+"."+k, v, true)
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok {
					r.setting(prefix+"."+k, s, true)
				} else {
					r.unread(0, "["+prefix+"] "+k, "an entry of it is not a string")
				}
			}
		default:
			r.unread(0, "["+prefix+"] "+k, "it is not a string or a list")
		}
	}
	if idx, ok := tableArray(uv["index"]); ok {
		for _, t := range idx {
			u, ok := t["url"].(string)
			if !ok {
				if p, isPath := t["path"].(string); isPath {
					r.setting(prefix+".index", p, true)
					continue
				}
				r.unread(0, "[["+prefix+".index]]", "it has no url")
				continue
			}
			r.setting(prefix+".index", u, true)
		}
	} else if uv["index"] != nil {
		r.unread(0, "[["+prefix+".index]]", "it is not an array of tables")
	}
	sources, _ := uv["sources"].(map[string]any)
	for _, name := range sortedKeys(sources) {
		entries := []any{sources[name]}
		if list, ok := sources[name].([]any); ok {
			entries = list
		}
		for _, e := range entries {
			t, ok := e.(map[string]any)
			if !ok {
				r.unread(0, "["+prefix+".sources] "+name, "it is not a table")
				continue
			}
			src, ok := tableSource(r.file, t)
			if !ok {
				if ws, _ := t["workspace"].(bool); ws {
					src = Source{Kind: FromPath, Where: "(a member of the uv workspace)"}
				} else {
					r.unread(0, "["+prefix+".sources] "+name, "it names no git, path, url, index or workspace")
					continue
				}
			}
			r.m.Packages = append(r.m.Packages, Package{Ecosystem: "PyPI", Name: name, Source: src, Role: RoleOverride, In: r.file})
		}
	}
}

// tableSource reads where a dependency table of uv, Poetry or Cargo says it comes from: git
// (with its rev, tag or branch), path, url, or another index or registry.
func tableSource(file string, t map[string]any) (Source, bool) {
	str := func(k string) string { s, _ := t[k].(string); return s }
	if g := str("git"); g != "" {
		ref := ""
		for _, k := range []string{"rev", "tag", "branch"} {
			if v := str(k); v != "" {
				ref = " (" + k + " " + v + ")"
				break
			}
		}
		return Source{Kind: FromVCS, Where: RedactURL(g + ref)}, true
	}
	if p := str("path"); p != "" {
		return pathSource(file, p), true
	}
	if u := str("url"); u != "" {
		return urlSource(file, u), true
	}
	for _, k := range []string{"index", "source", "registry", "registry-index"} {
		if v := str(k); v != "" {
			return Source{Kind: FromRegistry, Where: RedactURL(v)}, true
		}
	}
	return Source{}, false
}

// setting records a setting of the file; index says it names where packages are fetched.
func (r *pyReader) setting(name, value string, index bool) {
	if index {
		value = RedactURL(value)
	}
	r.m.Settings = append(r.m.Settings, Setting{Name: name, Value: clip(value, maxWhere), Index: index})
}

// readPoetry reads Poetry's dependency tables and sources.
func readPoetry(r *pyReader, po map[string]any) {
	tables := map[string]any{"[tool.poetry.dependencies]": po["dependencies"], "[tool.poetry.dev-dependencies]": po["dev-dependencies"]}
	if groups, ok := po["group"].(map[string]any); ok {
		for g, v := range groups {
			t, _ := v.(map[string]any)
			tables["[tool.poetry.group."+g+".dependencies]"] = t["dependencies"]
		}
	}
	for _, where := range sortedKeys(tables) {
		if tables[where] == nil {
			continue
		}
		deps, ok := tables[where].(map[string]any)
		if !ok {
			r.unread(0, where, "it is not a table")
			continue
		}
		for _, name := range sortedKeys(deps) {
			if strings.EqualFold(name, "python") {
				continue // the Python version, not a package
			}
			entries := []any{deps[name]}
			if list, ok := deps[name].([]any); ok {
				entries = list // several constraints, each with its markers
			}
			for _, e := range entries {
				p, ok := poetryDep(r.file, name, e)
				if !ok {
					r.unread(0, where+" "+name, "it is neither a version nor a table Poetry reads")
					continue
				}
				r.m.Packages = append(r.m.Packages, p)
			}
		}
	}
	if srcs, ok := tableArray(po["source"]); ok {
		for _, t := range srcs {
			u, ok := t["url"].(string)
			if !ok {
				continue // a source without a url is a name for the default index
			}
			r.setting("tool.poetry.source", u, true)
		}
	}
}

// poetryDep reads one dependency of a Poetry table: a version constraint, or a table with
// version, git, path, url or source.
func poetryDep(file, name string, v any) (Package, bool) {
	p := Package{Ecosystem: "PyPI", Name: name, In: file}
	version := ""
	switch t := v.(type) {
	case string:
		version = t
	case map[string]any:
		if src, ok := tableSource(file, t); ok {
			p.Source = src
			if src.Kind != FromRegistry {
				return p, true
			}
		}
		s, ok := t["version"].(string)
		if !ok && p.Source.Kind == Registry {
			return p, false
		}
		version = s
	default:
		return p, false
	}
	version = strings.TrimSpace(version)
	exact := strings.TrimPrefix(version, "==")
	if exact != "" && !strings.ContainsAny(exact, "^~<>=!*, |") {
		p.Version = exact
		if p.Source.Kind == Registry {
			p.pkg = &extractor.Package{Name: name, Version: exact, PURLType: purl.TypePyPi}
		}
	} else {
		p.Req = version
	}
	return p, true
}

// tables reads an array of tables, as the TOML library decodes [[x]] or [{...}].
func tableArray(v any) ([]map[string]any, bool) {
	switch t := v.(type) {
	case []map[string]any:
		return t, true
	case []any:
		out := make([]map[string]any, 0, len(t))
		for _, x := range t {
			m, ok := x.(map[string]any)
			if !ok {
				return nil, false
			}
			out = append(out, m)
		}
		return out, true
	}
	return nil, false
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

package deps

import (
	"context"
	"fmt"
	"strings"

	"deps.dev/util/semver"
	"github.com/BurntSushi/toml"
	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/purl"
)

// parseCargoTOML reads a Cargo.toml with the TOML library SCALIBR uses. SCALIBR's cargotoml
// extractor is not used: it reads only [dependencies], drops a path dependency and a git one
// without a commit, and ignores renames, [patch] and [replace]. Here every dependency table is
// read ([dependencies], [dev-dependencies], [build-dependencies], their [target.*] forms and
// [workspace.dependencies]), each entry with its source (git with its rev, tag or branch, a
// path, another registry, package = "other"), and [patch.*] and [replace] entries are listed
// with RolePatch and RoleReplace. A requirement such as "1.2", "^1.2", "~1.2", "=1.2" or
// ">=1.2" allows 1.2 as its lowest version, which is the version checked (as OSV-Scanner
// checks a requirement's lowest), when it parses with deps.dev's Cargo semantics; other
// requirements (several bounds, a wildcard) are listed and not checked.
func parseCargoTOML(_ context.Context, file string, content []byte) (*Manifest, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(content), &doc); err != nil {
		return nil, fmt.Errorf("it is not TOML: %w", err)
	}
	m := &Manifest{}
	tables := map[string]any{}
	for _, k := range []string{"dependencies", "dev-dependencies", "build-dependencies", "dev_dependencies", "build_dependencies"} {
		if v, ok := doc[k]; ok {
			tables["["+k+"]"] = v
		}
		if targets, ok := doc["target"].(map[string]any); ok {
			for cfg, t := range targets {
				if tt, ok := t.(map[string]any); ok && tt[k] != nil {
					tables["[target."+cfg+"."+k+"]"] = tt[k]
				}
			}
		}
	}
	if ws, ok := doc["workspace"].(map[string]any); ok && ws["dependencies"] != nil {
		tables["[workspace.dependencies]"] = ws["dependencies"]
	}
	for _, where := range sortedKeys(tables) {
		readCargoTable(m, file, where, tables[where], "")
	}
	if patches, ok := doc["patch"].(map[string]any); ok {
		for _, src := range sortedKeys(patches) {
			readCargoTable(m, file, "[patch."+src+"]", patches[src], RolePatch)
		}
	} else if doc["patch"] != nil {
		m.Unread = append(m.Unread, Unread{What: "[patch]", Why: "it is not a table of sources"})
	}
	if doc["replace"] != nil {
		readCargoTable(m, file, "[replace]", doc["replace"], RoleReplace)
	}
	return m, nil
}

// readCargoTable reads one table of dependencies.
func readCargoTable(m *Manifest, file, where string, v any, role string) {
	t, ok := v.(map[string]any)
	if !ok {
		m.Unread = append(m.Unread, Unread{What: where, Why: "it is not a table"})
		return
	}
	for _, name := range sortedKeys(t) {
		p, why := cargoDep(file, name, t[name])
		if why != "" {
			m.Unread = append(m.Unread, Unread{What: where + " " + clip(name, 100), Why: why})
			continue
		}
		p.Role = role
		m.Packages = append(m.Packages, p)
	}
}

// cargoDep reads one dependency: a requirement, or a table.
func cargoDep(file, name string, v any) (Package, string) {
	p := Package{Ecosystem: "crates.io", Name: name, In: file}
	req := ""
	switch t := v.(type) {
	case string:
		req = t
	case map[string]any:
		if ws, _ := t["workspace"].(bool); ws {
			p.Req = "(the workspace's)"
			return p, ""
		}
		if src, ok := tableSource(file, t); ok {
			p.Source = src
		}
		if other, ok := t["package"].(string); ok && other != name {
			if p.Source.Kind == Registry {
				p.Source = Source{Kind: FromPackage, Where: RedactURL(other)}
			} else {
				p.Source.Where = RedactURL(p.Source.Where + " (package " + other + ")")
			}
		}
		r, hasVersion := t["version"].(string)
		if !hasVersion && t["version"] != nil {
			return p, "its version is not a string"
		}
		if !hasVersion && p.Source.Kind == Registry {
			return p, "it names no version, git, path or registry"
		}
		req = r
	default:
		return p, "it is neither a requirement nor a table"
	}
	req = strings.TrimSpace(req)
	if req == "" {
		return p, ""
	}
	low := req
	for _, op := range []string{">=", "=", "^", "~"} {
		if rest, ok := strings.CutPrefix(low, op); ok {
			low = strings.TrimSpace(rest)
			break
		}
	}
	if v, err := semver.Cargo.Parse(low); err == nil && !strings.ContainsAny(low, ",*<> ") {
		p.Version = v.Canon(false)
	}
	if req != p.Version {
		p.Req = req
	}
	if p.Version != "" && (p.Source.Kind == Registry || p.Source.Kind == FromPackage) {
		real := name
		if p.Source.Kind == FromPackage {
			real = p.Source.Where
		}
		p.pkg = &extractor.Package{Name: real, Version: p.Version, PURLType: purl.TypeCargo}
	}
	return p, ""
}

package deps

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"deps.dev/util/semver"
	"github.com/google/osv-scalibr/extractor"
	"github.com/google/osv-scalibr/purl"
)

// parsePackageJSON reads a package.json as npm (and yarn and pnpm) read its dependencies.
// SCALIBR's packagejson extractor is not used for them: it reads only "dependencies", only
// when the file has a name and a version, and drops every specifier that is not a version
// range (a git URL, a tarball, file:, an alias) without a word. Here dependencies,
// devDependencies, optionalDependencies and peerDependencies (which npm installs too) are
// listed, each specifier classified as npm-package-arg does (a range or tag of the registry,
// npm:other@range, git, a URL, a path, a workspace), with npm's overrides, yarn's resolutions
// and pnpm's overrides as RoleOverride entries, pnpm's patchedDependencies (RolePatch, the
// patch file as a path) and packageExtensions (RoleExtension), and the package manager
// Corepack fetches (packageManager, RolePackageManager). The lowest version a range allows is
// computed with deps.dev's npm semantics, as SCALIBR computes it.
func parsePackageJSON(_ context.Context, file string, content []byte) (*Manifest, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(content, &doc); err != nil {
		return nil, fmt.Errorf("it is not JSON: %w", err)
	}
	m := &Manifest{}
	for _, field := range []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"} {
		raw, ok := doc[field]
		if !ok || string(raw) == "null" {
			continue
		}
		var deps map[string]string
		if err := json.Unmarshal(raw, &deps); err != nil {
			m.Unread = append(m.Unread, Unread{What: field, Why: "it is not an object of names and strings"})
			continue
		}
		for _, name := range sortedKeys(deps) {
			p, why := npmSpec(file, name, deps[name])
			if name == "" {
				why = "it names no package" // npm refuses it; listed, never a nameless package
			}
			if why != "" {
				m.Unread = append(m.Unread, Unread{What: field + ": " + clip(name, 100) + " " + clip(deps[name], 200), Why: why})
				continue
			}
			m.Packages = append(m.Packages, p)
		}
	}
	overrides := map[string]string{"overrides": "overrides", "resolutions": "resolutions"}
	var pnpm map[string]json.RawMessage
	if raw, ok := doc["pnpm"]; ok {
		if json.Unmarshal(raw, &pnpm) == nil {
			if o, ok := pnpm["overrides"]; ok {
				doc["pnpm.overrides"] = o
				overrides["pnpm.overrides"] = "pnpm.overrides"
			}
		}
	}
	for _, field := range sortedKeys(overrides) {
		raw, ok := doc[field]
		if !ok || string(raw) == "null" {
			continue
		}
		readOverrides(m, file, field, "", raw, 0)
	}
	if raw, ok := doc["packageManager"]; ok && string(raw) != "null" {
		readPackageManager(m, file, raw)
	}
	if raw, ok := pnpm["patchedDependencies"]; ok && string(raw) != "null" {
		var patches map[string]string
		if err := json.Unmarshal(raw, &patches); err != nil {
			m.Unread = append(m.Unread, Unread{What: "pnpm.patchedDependencies", Why: "it is not an object of packages and paths"})
		}
		for _, k := range sortedKeys(patches) {
			m.Packages = append(m.Packages, Package{Ecosystem: "npm", Name: k, In: file, Role: RolePatch, Source: pathSource(file, patches[k])})
		}
	}
	if raw, ok := pnpm["packageExtensions"]; ok && string(raw) != "null" {
		readPackageExtensions(m, file, raw)
	}
	return m, nil
}

// readPackageManager reads packageManager as Corepack takes it: name@version, with an
// optional +hash, or name@URL. Corepack fetches that package manager and runs it in place of
// the one installed: it is listed, not checked for vulnerabilities.
func readPackageManager(m *Manifest, file string, raw json.RawMessage) {
	var s string
	err := json.Unmarshal(raw, &s)
	name, spec, ok := strings.Cut(s, "@")
	if err != nil || !ok || !npmName.MatchString(name) || spec == "" {
		m.Unread = append(m.Unread, Unread{What: "packageManager " + clip(string(raw), 200), Why: "it is not name@version or name@URL, as Corepack takes it"})
		return
	}
	p := Package{Ecosystem: "npm", Name: name, In: file, Role: RolePackageManager}
	if hasScheme(spec) {
		p.Source = urlSource(file, spec)
	} else {
		p.Version, _, _ = strings.Cut(spec, "+")
	}
	m.Packages = append(m.Packages, p)
}

// readPackageExtensions reads pnpm's packageExtensions: for each package (a selector such as
// "react-redux@1"), dependencies pnpm adds to it, each listed as "selector > name".
func readPackageExtensions(m *Manifest, file string, raw json.RawMessage) {
	var ext map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ext); err != nil {
		m.Unread = append(m.Unread, Unread{What: "pnpm.packageExtensions", Why: "it is not an object of packages and dependencies"})
		return
	}
	for _, sel := range sortedKeys(ext) {
		for _, field := range sortedKeys(ext[sel]) {
			if field == "peerDependenciesMeta" {
				continue // says whether a peer is optional: no package
			}
			var deps map[string]string
			if err := json.Unmarshal(ext[sel][field], &deps); err != nil {
				m.Unread = append(m.Unread, Unread{What: "pnpm.packageExtensions " + clip(sel, 100) + " " + clip(field, 100), Why: "it is not an object of names and strings"})
				continue
			}
			for _, name := range sortedKeys(deps) {
				p, why := npmSpec(file, name, deps[name])
				if why != "" {
					m.Unread = append(m.Unread, Unread{What: "pnpm.packageExtensions " + clip(sel, 100) + ": " + clip(name, 100) + " " + clip(deps[name], 200), Why: why})
					continue
				}
				p.Name = sel + " > " + name
				p.Role = RoleExtension
				m.Packages = append(m.Packages, p)
			}
		}
	}
}

// maxOverrideDepth bounds npm's nested overrides.
const maxOverrideDepth = 8

// readOverrides reads npm's overrides (nested objects, "." for the package itself), yarn's
// resolutions and pnpm's overrides, each entry named by its path ("a > b").
func readOverrides(m *Manifest, file, field, prefix string, raw json.RawMessage, depth int) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || depth > maxOverrideDepth {
		m.Unread = append(m.Unread, Unread{What: field + " " + clip(prefix, 200), Why: "it is not an object of names and strings frognano reads"})
		return
	}
	for _, k := range sortedKeys(obj) {
		name := k
		if prefix != "" {
			name = prefix + " > " + k
			if k == "." {
				name = prefix
			}
		}
		var spec string
		if err := json.Unmarshal(obj[k], &spec); err != nil {
			readOverrides(m, file, field, name, obj[k], depth+1)
			continue
		}
		p, why := npmSpec(file, npmTarget(name), spec)
		if why != "" {
			m.Unread = append(m.Unread, Unread{What: field + ": " + clip(name, 100) + " " + clip(spec, 200), Why: why})
			continue
		}
		p.Name = name
		p.Role = RoleOverride
		m.Packages = append(m.Packages, p)
	}
}

// npmTarget is the package an override's name ("a > b@1", "**/c") applies to.
func npmTarget(name string) string {
	if i := strings.LastIndex(name, " > "); i >= 0 {
		name = name[i+3:]
	}
	if i := strings.LastIndex(name, ">"); i >= 0 { // pnpm: "a@1>b"
		name = name[i+1:]
	}
	if i := strings.LastIndex(name, "**/"); i >= 0 {
		name = name[i+3:]
	}
	return npmBareName(name)
}

// npmBareName drops a version from "name@range" ("@scope/name@1" too).
func npmBareName(s string) string {
	at := strings.LastIndex(s, "@")
	if at > 0 {
		return s[:at]
	}
	return s
}

// npmName is a name npm takes for a package.
var npmName = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9._~-][a-z0-9._~-]*$`)

// npmShorthand is npm-package-arg's GitHub shorthand: user/repo, with an optional #ref.
var npmShorthand = regexp.MustCompile(`^[^@%/\s.-][^:@%/\s]*/[^@\s/%]+(?:#.*)?$`)

// npmPath is npm-package-arg's isFilespec and isFilename.
var npmPath = regexp.MustCompile(`(?i)^(?:[.]|~/|[/\\]|[a-z]:)|[.](?:tgz|tar\.gz|tar)$`)

// npmTag is a dist-tag: what npm takes for a tag when a specifier is no range.
var npmTag = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// npmSpec classifies the specifier of the dependency name as npm-package-arg does; why says
// what could not be read.
func npmSpec(file, name, spec string) (Package, string) {
	p := Package{Ecosystem: "npm", Name: name, In: file}
	s := strings.TrimSpace(spec)
	ls := strings.ToLower(s)
	switch {
	case strings.HasPrefix(ls, "npm:"):
		real, rng := s[4:], ""
		if at := strings.LastIndex(real, "@"); at > 0 {
			real, rng = real[:at], real[at+1:]
		}
		if !npmName.MatchString(real) {
			return p, "the alias names no package npm takes"
		}
		q, why := npmRange(file, real, rng)
		if why != "" {
			return p, why
		}
		p.Version, p.Req, p.pkg = q.Version, q.Req, q.pkg
		p.Source = Source{Kind: FromPackage, Where: real}
		if p.Req == "" && p.Version == "" {
			p.Req = "*"
		}
		return p, ""
	case strings.HasPrefix(ls, "workspace:"):
		p.Source = Source{Kind: FromPath, Where: RedactURL(s)}
	case strings.HasPrefix(ls, "file:"), strings.HasPrefix(ls, "link:"), strings.HasPrefix(ls, "portal:"):
		_, rest, _ := strings.Cut(s, ":")
		p.Source = pathSource(file, strings.TrimPrefix(rest, "//"))
		p.Source.Where = RedactURL(s)
	case strings.HasPrefix(s, "$"):
		p.Req = clip(s, 200) // an override that takes a direct dependency's specifier
	case strings.HasPrefix(ls, "patch:"):
		return p, "yarn's patch: protocol is not read"
	case strings.HasPrefix(ls, "catalog:"):
		return p, "the version is in pnpm's catalog (pnpm-workspace.yaml), which frognano does not read"
	case strings.HasPrefix(ls, "jsr:"):
		p.Source = Source{Kind: FromRegistry, Where: RedactURL(s)}
	case isVCS(s):
		p.Source = Source{Kind: FromVCS, Where: RedactURL(s)}
	case strings.HasPrefix(ls, "http://") || strings.HasPrefix(ls, "https://"):
		p.Source = Source{Kind: FromURL, Where: RedactURL(s)}
		if strings.HasSuffix(strings.SplitN(ls, "#", 2)[0], ".git") {
			p.Source.Kind = FromVCS
		}
	case hasScheme(s):
		return p, "npm does not take this protocol"
	case npmPath.MatchString(s):
		p.Source = pathSource(file, s)
	case npmShorthand.MatchString(s):
		p.Source = Source{Kind: FromVCS, Where: RedactURL("github:" + s)}
	default:
		return npmRange(file, name, s)
	}
	return p, ""
}

// npmRange reads a registry specifier: a range (its lowest version is what is checked) or a
// dist-tag.
func npmRange(file, name, s string) (Package, string) {
	p := Package{Ecosystem: "npm", Name: name, In: file}
	if s == "" || s == "*" || s == "latest" {
		p.Req = s
		if s == "" {
			p.Req = "*"
		}
		return p, ""
	}
	c, err := semver.NPM.ParseConstraint(s)
	if err != nil {
		if npmTag.MatchString(s) {
			p.Req = s // a dist-tag, such as "next"
			return p, ""
		}
		return p, "it is neither a version range nor a source npm takes"
	}
	if v, err := c.CalculateMinVersion(); err == nil {
		p.Version = v.Canon(false)
		p.pkg = &extractor.Package{Name: name, Version: p.Version, PURLType: purl.TypeNPM}
	}
	if s != p.Version {
		p.Req = s
	}
	return p, ""
}

package deps

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// The other places a Python project's tools read where packages come from: PDM's tables of
// pyproject.toml ([tool.pdm]) and its own pdm.toml, uv's settings in pyproject.toml and in its
// own uv.toml, Poetry's poetry.toml; and, in a lock file, the index, URL or path each locked
// package is fetched from (uv.lock, poetry.lock, pdm.lock, pylock.toml), which SCALIBR's
// readers drop unless it is a git commit. A patch can point any of them elsewhere, for the same
// name and version: what pip's --index-url is for requirements files, these are for their tools.

// defaultPyPI is the index a lock file names for a package of PyPI itself.
func defaultPyPI(u string) bool {
	u = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(u)), "/")
	return u == "https://pypi.org/simple" || u == "https://pypi.python.org/simple" || u == "https://pypi.org/pypi"
}

// readPDM reads [tool.pdm]: its sources are indexes (or pages of archives), its dev-dependencies
// are requirements, and its resolution overrides force a version or a source on the whole tree.
func readPDM(r *pyReader, pdm map[string]any) {
	if srcs, ok := tableArray(pdm["source"]); ok {
		for _, t := range srcs {
			u, ok := t["url"].(string)
			if !ok {
				r.unread(0, "[[tool.pdm.source]]", "it has no url")
				continue
			}
			r.setting("tool.pdm.source", u, true)
			if v, ok := t["verify_ssl"].(bool); ok && !v {
				r.setting("tool.pdm.source verify_ssl", "false", true)
			}
		}
	} else if pdm["source"] != nil {
		r.unread(0, "[[tool.pdm.source]]", "it is not an array of tables")
	}
	if dev, ok := pdm["dev-dependencies"].(map[string]any); ok {
		for _, g := range sortedKeys(dev) {
			r.strings(dev[g], "[tool.pdm.dev-dependencies] "+g)
		}
	} else if pdm["dev-dependencies"] != nil {
		r.unread(0, "[tool.pdm.dev-dependencies]", "it is not a table")
	}
	res, _ := pdm["resolution"].(map[string]any)
	if ov, ok := res["overrides"].(map[string]any); ok {
		r.role = RoleOverride
		for _, name := range sortedKeys(ov) {
			s, ok := ov[name].(string)
			if !ok {
				r.unread(0, "[tool.pdm.resolution.overrides] "+name, "it is not a string")
				continue
			}
			r.requirement(reqLine{text: overrideRequirement(name, s)})
		}
		r.role = ""
	} else if res["overrides"] != nil {
		r.unread(0, "[tool.pdm.resolution.overrides]", "it is not a table")
	}
}

// overrideRequirement writes an override's value (a version specifier, a URL, a path) as the
// requirement it stands for.
func overrideRequirement(name, v string) string {
	v = strings.TrimSpace(v)
	switch {
	case v == "" || v == "*":
		return name
	case strings.ContainsAny(v[:1], "<>=!~"):
		return name + v
	case strings.Contains(v, "://") || strings.HasPrefix(v, "file:") || isVCS(v):
		return name + " @ " + v
	}
	return name + "==" + v
}

// uvIndexKeys are uv's settings that name where packages (or Pythons) are fetched from, or
// that loosen how: each is a setting of the report, a new one a finding.
var uvIndexKeys = []string{"index-url", "extra-index-url", "find-links", "allow-insecure-host",
	"python-install-mirror", "pypy-install-mirror", "python-downloads-json-url"}

// readUVMore reads the rest of uv's settings that change what is installed: the dependency
// lists of [tool.uv] (overrides, constraints, dev-dependencies), how indexes are searched
// (index-strategy: unsafe-best-match lets any index win), no-index, and the same index settings
// under [tool.uv.pip] (uv pip's interface).
func readUVMore(r *pyReader, uv map[string]any, prefix string) {
	for _, k := range []struct{ key, role string }{
		{"override-dependencies", RoleOverride}, {"constraint-dependencies", RoleConstraint},
		{"build-constraint-dependencies", RoleConstraint}, {"dev-dependencies", ""},
	} {
		r.role = k.role
		r.strings(uv[k.key], "["+prefix+"] "+k.key)
	}
	r.role = ""
	for _, k := range []string{"index-strategy", "keyring-provider"} {
		if s, ok := uv[k].(string); ok {
			r.setting(prefix+"."+k, s, k == "index-strategy" && strings.HasPrefix(s, "unsafe"))
		}
	}
	if b, ok := uv["no-index"].(bool); ok && b {
		r.setting(prefix+".no-index", "true", false)
	}
	for _, k := range uvIndexKeys[3:] {
		indexStrings(r, uv[k], prefix, k)
	}
	if pip, ok := uv["pip"].(map[string]any); ok {
		for _, k := range append([]string{"index-url", "extra-index-url", "find-links", "allow-insecure-host", "trusted-host"}, "index-strategy") {
			if k == "index-strategy" {
				if s, ok := pip[k].(string); ok {
					r.setting(prefix+".pip."+k, s, strings.HasPrefix(s, "unsafe"))
				}
				continue
			}
			indexStrings(r, pip[k], prefix+".pip", k)
		}
	}
}

// indexStrings records v, a string or a list of strings, as index settings named prefix.key.
func indexStrings(r *pyReader, v any, prefix, key string) {
	switch v := v.(type) {
	case nil:
	case string:
		r.setting(prefix+"."+key, v, true)
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				r.setting(prefix+"."+key, s, true)
			} else {
				r.unread(0, "["+prefix+"] "+key, "an entry of it is not a string")
			}
		}
	default:
		r.unread(0, "["+prefix+"] "+key, "it is not a string or a list")
	}
}

// hatchIndexVars are the environment variables that, set in a Hatch environment's env-vars,
// tell pip or uv where to fetch its packages from.
var hatchIndexVars = map[string]bool{
	"PIP_INDEX_URL": true, "PIP_EXTRA_INDEX_URL": true, "PIP_FIND_LINKS": true, "PIP_TRUSTED_HOST": true,
	"PIP_CERT": true, "PIP_PROXY": true, "PIP_CONSTRAINT": true, "PIP_REQUIREMENT": true,
	"UV_INDEX_URL": true, "UV_EXTRA_INDEX_URL": true, "UV_INDEX": true, "UV_DEFAULT_INDEX": true,
	"UV_FIND_LINKS": true, "UV_INSECURE_HOST": true, "UV_INDEX_STRATEGY": true, "UV_CONSTRAINT": true,
	"UV_OVERRIDE": true,
}

// readHatch reads Hatch's settings ([tool.hatch] of pyproject.toml, or hatch.toml whole): the
// dependencies and extra-dependencies of each environment, with the pip and uv settings of
// its env-vars that say where packages come from (hatchIndexVars); env.requires (the
// environment plugins Hatch installs) and the dependencies of the build's hooks and targets,
// as RoleBuild. An environment's overrides, which can add dependencies by matrix, platform or
// variable, are unread.
func readHatch(r *pyReader, hatch map[string]any, prefix string) {
	if envs, ok := hatch["envs"].(map[string]any); ok {
		for _, name := range sortedKeys(envs) {
			env, ok := envs[name].(map[string]any)
			where := prefix + ".envs." + name
			if !ok {
				r.unread(0, "["+where+"]", "it is not a table")
				continue
			}
			r.strings(env["dependencies"], "["+where+"] dependencies")
			r.strings(env["extra-dependencies"], "["+where+"] extra-dependencies")
			if vars, ok := env["env-vars"].(map[string]any); ok {
				for _, k := range sortedKeys(vars) {
					if !hatchIndexVars[strings.ToUpper(k)] {
						continue
					}
					v, ok := vars[k].(string)
					if !ok {
						r.unread(0, "["+where+".env-vars] "+k, "it is not a string")
						continue
					}
					r.setting(where+".env-vars."+k, v, true)
				}
			} else if env["env-vars"] != nil {
				r.unread(0, "["+where+".env-vars]", "it is not a table")
			}
			if env["overrides"] != nil {
				r.unread(0, "["+where+".overrides]", "Hatch's overrides can add dependencies, which frognano does not read")
			}
		}
	} else if hatch["envs"] != nil {
		r.unread(0, "["+prefix+".envs]", "it is not a table")
	}
	r.role = RoleBuild
	defer func() { r.role = "" }()
	if env, ok := hatch["env"].(map[string]any); ok {
		r.strings(env["requires"], "["+prefix+".env] requires")
	}
	build, _ := hatch["build"].(map[string]any)
	hooks := func(v any, where string) {
		hs, _ := v.(map[string]any)
		for _, h := range sortedKeys(hs) {
			if ht, ok := hs[h].(map[string]any); ok {
				r.strings(ht["dependencies"], "["+where+".hooks."+h+"] dependencies")
			}
		}
	}
	hooks(build["hooks"], prefix+".build")
	targets, _ := build["targets"].(map[string]any)
	for _, tn := range sortedKeys(targets) {
		if tt, ok := targets[tn].(map[string]any); ok {
			r.strings(tt["dependencies"], "["+prefix+".build.targets."+tn+"] dependencies")
			hooks(tt["hooks"], prefix+".build.targets."+tn)
		}
	}
}

// settingsFile reads a tool's own TOML settings file with read, which takes the document as
// the pyReader of file.
func settingsFile(ctx context.Context, file string, content []byte, read func(r *pyReader, doc map[string]any)) (*Manifest, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(content), &doc); err != nil {
		return nil, fmt.Errorf("it is not TOML: %w", err)
	}
	m := &Manifest{}
	r := &pyReader{file: file, m: m}
	read(r, doc)
	if err := r.finish(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// parseHatchToml reads hatch.toml: [tool.hatch]'s settings at the top of their own file.
func parseHatchToml(ctx context.Context, file string, content []byte) (*Manifest, error) {
	return settingsFile(ctx, file, content, func(r *pyReader, doc map[string]any) { readHatch(r, doc, "hatch.toml") })
}

// parseUVToml reads uv.toml: [tool.uv]'s settings, at the top of their own file (uv reads it
// from the project's folder and every folder above).
func parseUVToml(ctx context.Context, file string, content []byte) (*Manifest, error) {
	return settingsFile(ctx, file, content, func(r *pyReader, doc map[string]any) {
		readUV(r, doc, "uv.toml")
		readUVMore(r, doc, "uv.toml")
	})
}

// parsePDMToml reads pdm.toml, PDM's project configuration: [pypi]'s url (the index PDM uses
// instead of PyPI), its named sources ([pypi.NAME] url) and verify_ssl.
func parsePDMToml(ctx context.Context, file string, content []byte) (*Manifest, error) {
	return settingsFile(ctx, file, content, func(r *pyReader, doc map[string]any) {
		pypi, _ := doc["pypi"].(map[string]any)
		for _, k := range sortedKeys(pypi) {
			switch v := pypi[k].(type) {
			case string:
				if k == "url" {
					r.setting("pypi.url", v, true)
				}
			case bool:
				if k == "verify_ssl" && !v {
					r.setting("pypi.verify_ssl", "false", true)
				}
			case map[string]any:
				if u, ok := v["url"].(string); ok {
					r.setting("pypi."+k+".url", u, true)
				}
				if b, ok := v["verify_ssl"].(bool); ok && !b {
					r.setting("pypi."+k+".verify_ssl", "false", true)
				}
			}
		}
	})
}

// parsePoetryToml reads poetry.toml, Poetry's project configuration: the repositories it names
// ([repositories.NAME] url) and the certificates it is told not to check.
func parsePoetryToml(ctx context.Context, file string, content []byte) (*Manifest, error) {
	return settingsFile(ctx, file, content, func(r *pyReader, doc map[string]any) {
		repos, _ := doc["repositories"].(map[string]any)
		for _, name := range sortedKeys(repos) {
			t, _ := repos[name].(map[string]any)
			if u, ok := t["url"].(string); ok {
				r.setting("repositories."+name+".url", u, true)
			}
		}
		certs, _ := doc["certificates"].(map[string]any)
		for _, name := range sortedKeys(certs) {
			t, _ := certs[name].(map[string]any)
			if v, ok := t["cert"].(bool); ok && !v {
				r.setting("certificates."+name+".cert", "false", true)
			}
		}
	})
}

// lockSource reads where one locked package of a Python lock file comes from, when that is not
// PyPI: uv.lock's source table, poetry.lock's [package.source], pdm.lock's git/url/path keys,
// pylock.toml's index, vcs, directory and archive. ok is false for PyPI itself.
func lockSource(file string, pkg map[string]any) (Source, bool) {
	str := func(t map[string]any, k string) string { s, _ := t[k].(string); return s }
	switch path.Base(file) {
	case "uv.lock":
		src, _ := pkg["source"].(map[string]any)
		switch {
		case str(src, "registry") != "":
			if defaultPyPI(str(src, "registry")) {
				return Source{}, false
			}
			return Source{Kind: FromRegistry, Where: clipWhere(RedactURL(str(src, "registry")))}, true
		case str(src, "git") != "":
			return Source{Kind: FromVCS, Where: clipWhere(RedactURL(str(src, "git")))}, true
		case str(src, "url") != "":
			return urlSource(file, str(src, "url")), true
		}
		for _, k := range []string{"path", "directory", "editable"} {
			if p := str(src, k); p != "" {
				return pathSource(file, p), true
			}
		}
	case "poetry.lock":
		src, _ := pkg["source"].(map[string]any)
		u := str(src, "url")
		switch str(src, "type") {
		case "legacy":
			return Source{Kind: FromRegistry, Where: clipWhere(RedactURL(u))}, true
		case "git":
			return Source{Kind: FromVCS, Where: clipWhere(RedactURL(u))}, true
		case "url":
			return urlSource(file, u), true
		case "file", "directory":
			return pathSource(file, u), true
		}
	case "pdm.lock":
		switch {
		case str(pkg, "git") != "":
			return Source{Kind: FromVCS, Where: clipWhere(RedactURL(str(pkg, "git")))}, true
		case str(pkg, "url") != "":
			return urlSource(file, str(pkg, "url")), true
		case str(pkg, "path") != "":
			return pathSource(file, str(pkg, "path")), true
		}
	default: // pylock.toml, pylock.NAME.toml
		if vcs, ok := pkg["vcs"].(map[string]any); ok {
			if u := str(vcs, "url"); u != "" {
				return Source{Kind: FromVCS, Where: clipWhere(RedactURL(u))}, true
			}
			return pathSource(file, str(vcs, "path")), true
		}
		if dir, ok := pkg["directory"].(map[string]any); ok {
			return pathSource(file, str(dir, "path")), true
		}
		if ar, ok := pkg["archive"].(map[string]any); ok {
			if u := str(ar, "url"); u != "" {
				return urlSource(file, u), true
			}
			return pathSource(file, str(ar, "path")), true
		}
		if idx := str(pkg, "index"); idx != "" && !defaultPyPI(idx) {
			return Source{Kind: FromRegistry, Where: clipWhere(RedactURL(idx))}, true
		}
	}
	return Source{}, false
}

// lockSources reads a Python lock file's packages' sources by name and version.
func lockSources(file string, content []byte) map[[2]string]Source {
	var doc map[string]any
	if _, err := toml.Decode(string(content), &doc); err != nil {
		return nil // SCALIBR's reader said why already, or read it
	}
	key := "package"
	if !strings.HasSuffix(file, ".lock") {
		key = "packages" // pylock.toml
	}
	pkgs, _ := tableArray(doc[key])
	out := map[[2]string]Source{}
	for _, p := range pkgs {
		name, _ := p["name"].(string)
		version, _ := p["version"].(string)
		if src, ok := lockSource(file, p); ok && name != "" {
			out[[2]string{name, version}] = src
		}
	}
	return out
}

// isPythonLock reports whether p is a Python lock file whose packages' sources lockSources reads.
func isPythonLock(p string) bool {
	b := path.Base(p)
	return b == "uv.lock" || b == "poetry.lock" || b == "pdm.lock" ||
		b == "pylock.toml" || strings.HasPrefix(b, "pylock.") && strings.HasSuffix(b, ".toml")
}

// unreadSettings are files that tell a package manager what to install or where packages come
// from (or run code that can change what it installs) and that frognano does not read: a patch
// that changes one has the whole file listed as unread, never passed over.
var unreadSettings = map[string]string{
	".yarnrc":             "yarn 1's settings (registry, scoped registries)",
	".yarnrc.yml":         "yarn's settings (npmRegistryServer, scoped registries, unsafeHttpWhitelist)",
	"bunfig.toml":         "bun's settings ([install] registry and scopes)",
	".pnpmfile.cjs":       "pnpm's hooks, code that can rewrite any package's dependencies",
	"pnpm-workspace.yaml": "pnpm's workspace settings (overrides, catalogs, registries)",
	"go.work":             "Go's workspace (use and replace directives)",
	"pip.conf":            "pip's settings (index-url, extra-index-url, trusted-host) when PIP_CONFIG_FILE names it",
	"pip.ini":             "pip's settings (index-url, extra-index-url, trusted-host) when PIP_CONFIG_FILE names it",
	// Files of dependencies that frognano does not parse: what they install, and from where,
	// is not listed, and the file is said to be unread rather than passed over.
	"Pipfile":        "Pipenv's packages and package indexes ([[source]])",
	"yarn.lock":      "yarn's locked versions and the URLs they are fetched from",
	"pnpm-lock.yaml": "pnpm's locked versions and the URLs they are fetched from",
	"bun.lock":       "bun's locked versions and the URLs they are fetched from",
	"bun.lockb":      "bun's locked versions and the URLs they are fetched from",
	"pixi.toml":      "pixi's dependencies and channels",
}

// unreadSettingsFile returns what the file at p is, when it is one of unreadSettings or Cargo's
// .cargo/config(.toml), "" otherwise.
func unreadSettingsFile(p string) string {
	b := path.Base(p)
	if (b == "config" || b == "config.toml") && path.Base(path.Dir(p)) == ".cargo" {
		return "Cargo's settings ([source] replacements, [registries], [patch])"
	}
	return unreadSettings[b]
}

// parseUnreadSettings reads nothing of the file: it is listed as unread, whole, with what it is.
func parseUnreadSettings(_ context.Context, file string, _ []byte) (*Manifest, error) {
	return &Manifest{Unread: []Unread{{File: file, Why: "it holds " + unreadSettingsFile(file) + ", which frognano does not read"}}}, nil
}

// parseNpmrc reads a project's .npmrc, which npm, pnpm and yarn 1 read: the registry
// (registry=, @scope:registry=) every package or a scope's packages come from, strict-ssl=false,
// and the proxy, certificate authority, git program and registry-host replacement
// (npmrcFetchKeys) npm fetches with.
// Credentials (//host/:_authToken=, _auth, _password) are never kept, not even as settings.
//
// It reads the file as their ini module decodes it (npmrcLines, iniUnsafe): lines end at any
// run of \r and \n, a line whose first character after whitespace is ";" or "#" is a comment,
// the key is the text before the first "=", and a key or value is trimmed by JavaScript's
// trim(), then unquoted ('...' loses its quotes and "..." is JSON-decoded, so \u escapes count)
// or else cut at its first unescaped ";" or "#"; a key ending in "[]" is the array form of the
// key without it. npm then expands ${VAR} in a key. A key that is not a plain string after this
// (JSON that decodes to another value, an environment variable) and whose value holds a URL is
// unread. Before, the key was compared as written: a quoted, escaped, commented ("registry#x")
// or array key, a key after a byte order mark, and a line after a lone \r set npm's registry
// without a setting being listed.
func parseNpmrc(_ context.Context, file string, content []byte) (*Manifest, error) {
	m := &Manifest{}
	for _, l := range npmrcLines(string(content)) {
		line := l.text
		if t := jsTrim(line); t == "" || t[0] == '#' || t[0] == ';' || npmrcSection.MatchString(line) {
			continue
		}
		rawKey, rawValue, hasValue := strings.Cut(line, "=")
		if rawKey == "" || hasValue && strings.ContainsAny(rawValue, "\u2028\u2029") {
			continue // ini's pattern does not match the line: ini skips it
		}
		k, kOK := iniUnsafe(rawKey)
		v := "true"
		if hasValue {
			v, _ = iniUnsafe(rawValue)
		}
		if kOK && len(k) > 2 && strings.HasSuffix(k, "[]") {
			k = k[:len(k)-2] // key[]=value: an array, read by npm as the key's value
		}
		if strings.Contains(k, "${") {
			kOK = false // npm expands it from the environment it runs in
		}
		switch lk := strings.ToLower(k); {
		case !kOK:
			if strings.Contains(v, "://") {
				m.Unread = append(m.Unread, Unread{Line: l.n, What: clip(jsTrim(rawKey), 200) + " = " + clip(RedactURL(v), maxWhere),
					Why: "npm reads a key frognano cannot (an environment variable, or JSON that is not a string); its value is a URL"})
			}
		case strings.HasPrefix(k, "//"):
			continue // a per-host setting: a credential, or how to reach the host
		case lk == "registry" || strings.HasSuffix(lk, ":registry"):
			m.Settings = append(m.Settings, Setting{Name: clip(k, 200), Value: clip(RedactURL(v), maxWhere), Line: l.n, Index: true})
		case lk == "strict-ssl" && strings.EqualFold(v, "false"):
			m.Settings = append(m.Settings, Setting{Name: k, Value: "false", Line: l.n, Index: true})
		case npmrcFetchKeys[lk]:
			m.Settings = append(m.Settings, Setting{Name: k, Value: clip(RedactURL(v), maxWhere), Line: l.n, Index: true})
		}
	}
	return m, nil
}

// npmrcFetchKeys are .npmrc's keys, besides the registries, that say how packages are fetched:
// a proxy every download goes through, a certificate authority npm trusts (which lets that
// proxy read and change them), the git program npm runs for a git dependency, and whether a
// lock file's registry host is replaced by the configured registry. npm reads each from a
// project's .npmrc.
var npmrcFetchKeys = map[string]bool{
	"proxy": true, "https-proxy": true, "ca": true, "cafile": true, "git": true, "replace-registry-host": true,
}

// npmrcSection is ini's section header, which holds no key.
var npmrcSection = regexp.MustCompile(`^\[[^\]]*\][\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}]*$`)

// npmrcLines splits .npmrc as ini does, at every run of \r and \n (str.split(/[\r\n]+/)),
// each line numbered as git shows the file.
func npmrcLines(s string) []line {
	var out []line
	for _, l := range universalLines(s) {
		if l.text != "" {
			out = append(out, l)
		}
	}
	return out
}

// iniUnsafe is the ini module's unsafe(): s trimmed (jsTrim); then, when it starts and ends
// with the same quote, '...' stripped of its quotes and the rest JSON-decoded when it decodes
// (text stays as it is when it does not); otherwise cut at the first ";" or "#" not escaped by
// a backslash (\\, \; and \# are unescaped, any other backslash is kept) and trimmed again.
// ok is false when the JSON decodes to something other than a string (ini then returns that
// value: a number, an array, an object), and s is then the text as written.
func iniUnsafe(s string) (string, bool) {
	s = jsTrim(s)
	if len(s) >= 1 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		if s[0] == '\'' {
			if len(s) < 2 {
				return "", true // "'".slice(1, -1)
			}
			s = s[1 : len(s)-1]
		}
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return s, true
		}
		str, ok := v.(string)
		if !ok {
			return s, false
		}
		return str, true
	}
	var b strings.Builder
	esc := false
	for _, c := range s {
		switch {
		case esc:
			if c != '\\' && c != ';' && c != '#' {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
			esc = false
		case c == ';' || c == '#':
			return jsTrim(b.String()), true
		case c == '\\':
			esc = true
		default:
			b.WriteRune(c)
		}
	}
	if esc {
		b.WriteByte('\\')
	}
	return jsTrim(b.String()), true
}

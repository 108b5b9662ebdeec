// Package deps owns what a patch does to the repository's dependencies and to where they come
// from. Every dependency manifest, lock file or file of source settings the patch adds, changes
// or removes (Python requirements and constraints files: a .txt or .in file whose name, or a
// folder's on its path, holds "requirements" or "constraints" in any case; pyproject.toml
// with its [tool.uv], [tool.pdm], [tool.poetry] and [tool.hatch] tables, setup.py, setup.cfg,
// uv.toml, pdm.toml, poetry.toml, hatch.toml, poetry.lock, uv.lock, pdm.lock, pylock.toml and
// Pipfile.lock; Go's go.mod; npm's package.json, package-lock.json and .npmrc; Cargo.toml and
// Cargo.lock), together with the files those manifests make their tool read (pip's -r and -c,
// setuptools' file:), is read at the base commit and in the patched tree, and List reports:
//
//   - the packages added, removed, changed or moved between files, with their versions and
//     where each comes from when that is not its registry (a URL, a version-control
//     repository, a path, another package under this name: Source), as overrides, replaces
//     and patches too (npm's overrides, yarn's resolutions, Go's replace, Cargo's [patch]);
//   - the settings that say where packages are fetched from (pip's --index-url,
//     --extra-index-url, --find-links, --trusted-host; uv's, PDM's and Poetry's indexes and
//     certificate settings; .npmrc's registries), and a go.mod's retract and exclude; and for a
//     Python lock file, the index, URL or path each locked package comes from when it is not
//     PyPI (pysources.go);
//   - what could not be read, each entry or file with the reason (Unread): never skipped in
//     silence, and a package that can no longer be found where something is unread is
//     "unlisted", never "removed". A file of source settings or of dependencies frognano does
//     not read (.yarnrc, .yarnrc.yml, bunfig.toml, .pnpmfile.cjs, pnpm-workspace.yaml, go.work,
//     pip.conf, pip.ini, .cargo/config.toml, Pipfile, yarn.lock, pnpm-lock.yaml, bun.lock,
//     bun.lockb, pixi.toml) is unread, whole, and so is pyproject.toml's [tool.pixi].
//
// Findings are the changes of source (a new index, a version that became a URL or a git
// repository), which a report shows first. With an offline copy of OSV's per-ecosystem exports
// (FROGNANO_OSV_DIR) the added and changed versions of registry packages are matched against
// the known vulnerabilities of their packages (OSV.Check).
//
// Why these libraries: where OSV-SCALIBR (github.com/google/osv-scalibr, the library under
// OSV-Scanner, maintained by Google's open source security team) parses a kind of file fully,
// its extractor is used, the same code OSV-Scanner runs: the lock files, a requirement's name
// and version (python/requirements), pyproject.toml's [project] table. Where it does not (its
// package.json reader reads only "dependencies" and drops any specifier that is not a range,
// its go.mod reader rewrites a replaced module into its replacement, its Cargo.toml reader
// reads only [dependencies], its setup.py reader is a regular expression over every string,
// and nothing of it reads includes, index options, URL requirements or setup.cfg), small
// strict readers of frognano's own do, each with a fuzz target, built on the parsers SCALIBR
// itself uses (golang.org/x/mod/modfile, BurntSushi/toml, encoding/json, deps.dev's version
// semantics). setup.py is Python code and is never run: only literal lists are read. The
// matching is SCALIBR's own offline matcher (enricher/vulnmatch/osvlocal), with its
// per-ecosystem version semantics, so a version is vulnerable here exactly when OSV-Scanner
// says so. OSV-Scanner v2.6.0 itself needs Go 1.27; SCALIBR v0.5.3 builds with the module's
// Go 1.26. SCALIBR's matcher package can download OSV's exports; frognano never calls that
// code (it reads the operator's directory itself, see OSV), and SCALIBR's process-wide logger
// is silenced.
//
// What is read is what git really builds, never a file of the sandbox: the patch is applied
// to the base commit of the host's own clone in a throwaway index and object directory, and
// every file is read from git's objects on both sides (a regular file within the size limits;
// a symbolic link, or a path under one, is never followed). An include is followed only
// inside the repository (no absolute path, no home folder, no .. past the root, nothing in
// .git), each file once per side, so a cycle ends. Credentials in a URL are never kept
// (RedactURL). A manifest that does not parse is unread, never a crash or an error of the run.
//
// It must never reach the network nor run anything of the repository: it reads git objects
// and the operator's export files only.
//
// It is one of the check packages (check/...): it must never hold a credential, start or reach a
// sandbox, or import runner, githubapp, queue, run, server or web (internal/layout's test checks
// the imports).
package deps

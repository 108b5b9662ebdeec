// Package deps owns what a patch does to the repository's dependencies: every dependency
// manifest or lock file the patch adds, changes or removes (Python requirements*.txt,
// pyproject.toml, poetry.lock, uv.lock and Pipfile.lock; Go's go.mod; npm's package.json and
// package-lock.json; Cargo.toml and Cargo.lock) is parsed at the base commit and in the
// patched tree, and the packages added, removed or changed are listed with their versions
// (List). With an offline copy of OSV's per-ecosystem exports (FROGNANO_OSV_DIR) the added
// and changed versions are matched against the known vulnerabilities of their packages
// (OSV.Check).
//
// Why these libraries: the parsers are OSV-SCALIBR's extractors (github.com/google/osv-scalibr,
// the library under OSV-Scanner, maintained by Google's open source security team), the same
// code OSV-Scanner runs on these files, and the matching is SCALIBR's own offline matcher
// (enricher/vulnmatch/osvlocal.VulnerabilitiesAffectingPackage, with SCALIBR's per-ecosystem
// version semantics), so a version is vulnerable here exactly when OSV-Scanner says so: no
// regular expression or version comparison of frognano's own. OSV-Scanner v2.6.0 itself needs
// Go 1.27; SCALIBR v0.5.3 builds with the module's Go 1.26. SCALIBR's matcher package can
// download OSV's exports; frognano never calls that code (it reads the operator's directory
// itself, see OSV), and SCALIBR's process-wide logger is silenced.
//
// What is parsed is what git really builds, never a file of the sandbox: the patch is applied
// to the base commit of the host's own clone in a throwaway index and object directory, and
// every manifest's blob is read from git's objects on both sides (a regular file of at most
// MaxManifestBytes; a symbolic link is never followed). The bytes are handed to the extractors
// in memory; a manifest that does not parse is a note, never a crash or an error of the run.
//
// It must never reach the network: it reads git objects and the operator's export files only.
package deps

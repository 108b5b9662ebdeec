package deps

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"
)

// Kinds of Change.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
	// Moved: the same entry, written in another file of the same set (a requirement moved
	// into a file pip includes).
	Moved = "moved"
	// Unlisted: no longer found, in a set of files where something could not be read (listed
	// in Report.Unread): it may be there, unread. Never called removed.
	Unlisted = "unlisted"
)

// Change is what the patch did to one package in one set of manifests (a manifest, with the
// files it includes): the entries of that name it removed (Old) and added (New). A lock file
// can hold several versions of one package; only the versions that differ are listed.
type Change struct {
	// File is the manifest the entry is written in: New's, else Old's.
	File      string
	Ecosystem string
	Name      string
	// Role is "" for a dependency, else one of the Role constants (an override, a replace).
	Role     string
	Kind     string // Added, Removed, Changed, Moved or Unlisted
	Old, New []Package

	// Vulns are the known vulnerabilities of New's versions (OSV.Check); empty when none
	// are known or no vulnerability data was configured.
	Vulns []Vuln
	// Install says whether New's version was found installed in the environment the tests
	// ran in (Installed, Missing) or could not be checked (Unchecked, the zero value);
	// Found is the version found there, "" when none.
	Install Install
	Found   string
}

// NewSource reports whether the change makes the package come from somewhere it did not come
// from before, other than its registry: a version that became a URL, a registry package that
// became a git repository or a path, another package under this name, a new dependency from
// any of them.
func (c Change) NewSource() bool {
	if c.Kind == Removed || c.Kind == Unlisted || c.Kind == Moved {
		return false
	}
	for _, n := range c.New {
		if n.Source.Kind == Registry {
			continue
		}
		seen := false
		for _, o := range c.Old {
			if o.Source == n.Source {
				seen = true
			}
		}
		if !seen {
			return true
		}
	}
	return false
}

// Toolchain reports whether c is the Go toolchain a go.mod names (its go or toolchain line,
// which SCALIBR lists as the module "stdlib", so its known vulnerabilities are checked): not a
// package anything installs.
func (c Change) Toolchain() bool { return c.Ecosystem == "Go" && c.Name == "stdlib" && c.Role == "" }

// SettingChange is a setting a manifest gained (Added) or lost (Removed).
type SettingChange struct {
	File string
	Kind string // Added or Removed
	Setting
}

// Install is what frognano found about a new version in the run's environment.
type Install string

const (
	// Unchecked: not checked. A version the patch adds was not there when the environment
	// was built (from the base), and the offline sandbox could not install it.
	Unchecked Install = ""
	// Installed: found at that version in the environment image the tests ran in.
	Installed Install = "installed"
	// Missing: not found at that version in the environment image the tests ran in.
	Missing Install = "missing"
)

// Report is what the patch did to the repository's dependencies.
type Report struct {
	// Files are the manifests and lock files the patch adds, changes or removes, and the
	// files they include that it changes.
	Files   []string
	Changes []Change
	// Settings are the settings of those files the patch adds or removes (pip's index
	// options, a go.mod's retract).
	Settings []SettingChange
	// Unread are the entries and files of those manifests that could not be read, each with
	// the reason: what they say is not in Changes.
	Unread []Unread
	// Notes say what else could not be read or checked (an export that could not be read, a
	// limit): facts for the reviewer, never errors of the run.
	Notes []string
	// VulnData is whether vulnerability data was configured (FROGNANO_OSV_DIR), and
	// VulnChecked the ecosystems whose new versions were checked against it.
	VulnData    bool
	VulnChecked []string

	parsed int64 // bytes of manifests read so far (maxParsedBytes)
}

// Finding is a change to where the dependencies come from, shown before everything else: a
// package from a source it did not come from before (Change), or a new place packages are
// fetched from (Setting: a package index, a page of archives, a host trusted without TLS, a
// requirements file pip downloads).
type Finding struct {
	Change  *Change
	Setting *SettingChange
}

// Findings returns the report's changes of source: new settings that name where packages
// are fetched from first, then the packages, in the report's order.
func (r *Report) Findings() []Finding {
	if r == nil {
		return nil
	}
	var out []Finding
	for i := range r.Settings {
		if s := &r.Settings[i]; s.Kind == Added && s.Index {
			out = append(out, Finding{Setting: s})
		}
	}
	for i := range r.Changes {
		if c := &r.Changes[i]; c.NewSource() {
			out = append(out, Finding{Change: c})
		}
	}
	return out
}

// isLockFile reports whether p names a lock file, which a tool writes and may be large.
func isLockFile(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(base, ".lock") || base == "package-lock.json"
}

// Vulnerable returns the changes with a known vulnerability.
func (r *Report) Vulnerable() []Change {
	if r == nil {
		return nil
	}
	var out []Change
	for _, c := range r.Changes {
		if len(c.Vulns) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// rawEntry is one line of `git diff-index --raw -z --no-renames`.
type rawEntry struct {
	oldMode, newMode, oldObj, newObj, path string
}

// parseRaw reads git's --raw -z output: ":OLDMODE NEWMODE OLDOBJ NEWOBJ STATUS\0PATH\0".
func parseRaw(out []byte) ([]rawEntry, error) {
	var es []rawEntry
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			return nil, errors.New("a truncated entry")
		}
		meta := string(out[:i])
		out = out[i+1:]
		j := bytes.IndexByte(out, 0)
		if j < 0 {
			return nil, errors.New("an entry without its path")
		}
		p := string(out[:j])
		out = out[j+1:]
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		if !strings.HasPrefix(meta, ":") || len(f) != 5 {
			return nil, fmt.Errorf("an entry git does not write: %q", meta)
		}
		es = append(es, rawEntry{oldMode: f[0], newMode: f[1], oldObj: f[2], newObj: f[3], path: p})
	}
	return es, nil
}

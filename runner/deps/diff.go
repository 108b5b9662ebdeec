package deps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/frognano/frognano/runner/patch"
)

// Kinds of Change.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Change is what the patch did to one package in one manifest: the entries of that name it
// removed (Old) and added (New). A lock file can hold several versions of one package; only
// the versions that differ are listed.
type Change struct {
	File      string // the manifest's path (slash-separated, in the repository)
	Ecosystem string
	Name      string
	Kind      string // Added, Removed or Changed
	Old, New  []Package

	// Vulns are the known vulnerabilities of New's versions (OSV.Check); empty when none
	// are known or no vulnerability data was configured.
	Vulns []Vuln
	// Install says whether New's version was found installed in the environment the tests
	// ran in (Installed, Missing) or could not be checked (Unchecked, the zero value);
	// Found is the version found there, "" when none.
	Install Install
	Found   string
}

// Toolchain reports whether c is the Go toolchain a go.mod names (its go or toolchain line,
// which SCALIBR lists as the module "stdlib", so its known vulnerabilities are checked): not a
// package anything installs.
func (c Change) Toolchain() bool { return c.Ecosystem == "Go" && c.Name == "stdlib" }

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
	// Files are the manifests and lock files the patch adds, changes or removes.
	Files   []string
	Changes []Change
	// Notes say what could not be read or checked (a manifest that does not parse, an
	// export that could not be read): facts for the reviewer, never errors of the run.
	Notes []string
	// VulnData is whether vulnerability data was configured (FROGNANO_OSV_DIR), and
	// VulnChecked the ecosystems whose new versions were checked against it.
	VulnData    bool
	VulnChecked []string

	parsed int64 // bytes of manifests read so far (maxParsedBytes)
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

// Limits of what List reads from one patch.
const (
	maxManifests = 100 // manifests compared; more are a note
	// A manifest a person writes (requirements, go.mod, Cargo.toml, package.json,
	// pyproject.toml) is read up to maxTextManifestBytes, a lock file up to MaxManifestBytes,
	// and all of them together up to maxParsedBytes: a patch of a few KiB can hold a file git
	// inflates to many MiB (a binary literal), and a parser keeps an object per line.
	maxTextManifestBytes = 1 << 20
	maxParsedBytes       = 32 << 20
	maxChanges           = 20000 // changes kept; more are a note
	maxNote              = 300   // characters of a parser's error kept in a note
)

// List applies diff to base in the host's clone (a throwaway index and object directory; the
// clone is not modified) and compares every manifest or lock file the patched tree adds,
// changes or removes with the base's, as git stores them. A manifest that cannot be read or
// parsed on either side is a note, and its packages are not compared. An error means git
// could not do its part (the patch does not apply, for one).
func List(ctx context.Context, git patch.Git, base string, diff []byte) (*Report, error) {
	rep := &Report{}
	if len(diff) == 0 {
		return rep, nil
	}
	if base == "" {
		return nil, errors.New("listing a patch's dependencies needs its base commit")
	}
	sc, err := patch.NewScratch(ctx, git, base)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	env := sc.Env
	if err := sc.Apply(ctx, git, diff); err != nil {
		var ae *patch.ApplyError
		if errors.As(err, &ae) {
			return nil, errors.New("git could not apply the patch to read its manifests")
		}
		return nil, err
	}
	out, err := git(ctx, env, nil, "diff-index", "--cached", "-z", "--raw", "--no-renames", "--no-abbrev", base)
	if err != nil {
		return nil, fmt.Errorf("reading the patched tree's changes: %w", err)
	}
	entries, err := parseRaw(out)
	if err != nil {
		return nil, fmt.Errorf("reading the patched tree's changes: %w", err)
	}
	for _, e := range entries {
		if !IsManifest(e.path) {
			continue
		}
		if len(rep.Files) == maxManifests {
			rep.Notes = append(rep.Notes, fmt.Sprintf("The patch changes more than %d dependency manifests; only the first %d were compared.", maxManifests, maxManifests))
			break
		}
		rep.Files = append(rep.Files, e.path)
		old, okOld := readSide(ctx, git, env, rep, e.path, e.oldMode, e.oldObj, "at the base commit")
		cur, okNew := readSide(ctx, git, env, rep, e.path, e.newMode, e.newObj, "in the patched tree")
		if !okOld || !okNew {
			continue
		}
		rep.Changes = append(rep.Changes, compare(e.path, old, cur)...)
	}
	if len(rep.Changes) > maxChanges {
		rep.Notes = append(rep.Notes, fmt.Sprintf("The patch changes %d dependency entries; only the first %d are listed.", len(rep.Changes), maxChanges))
		rep.Changes = rep.Changes[:maxChanges]
	}
	return rep, nil
}

// readSide reads and parses one side of a manifest: ok with no packages when the file is
// absent on that side, not ok (and a note) when it cannot be read or parsed.
func readSide(ctx context.Context, git patch.Git, env []string, rep *Report, p, mode, obj, where string) ([]Package, bool) {
	switch mode {
	case "000000":
		return nil, true
	case "100644", "100755":
	case "120000":
		rep.note(p, where, "it is a symbolic link, which frognano does not follow")
		return nil, false
	default:
		rep.note(p, where, "it is not a regular file")
		return nil, false
	}
	size, err := git(ctx, env, nil, "cat-file", "-s", obj)
	if err != nil {
		rep.note(p, where, "git could not read it")
		return nil, false
	}
	limit := int64(MaxManifestBytes)
	if !isLockFile(p) {
		limit = maxTextManifestBytes
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(size)), 10, 64)
	if err != nil || n > limit {
		rep.note(p, where, fmt.Sprintf("it is over %d MiB", limit>>20))
		return nil, false
	}
	if rep.parsed+n > maxParsedBytes {
		rep.note(p, where, fmt.Sprintf("the dependency files of the patch are over %d MiB together", maxParsedBytes>>20))
		return nil, false
	}
	rep.parsed += n
	content, err := git(ctx, env, nil, "cat-file", "blob", obj)
	if err != nil {
		rep.note(p, where, "git could not read it")
		return nil, false
	}
	pkgs, err := Parse(ctx, p, content)
	if err != nil {
		rep.note(p, where, "it does not parse: "+err.Error())
		return nil, false
	}
	return pkgs, true
}

func (r *Report) note(p, where, why string) {
	if len(why) > maxNote {
		why = strings.ToValidUTF8(why[:maxNote], "") + "…"
	}
	r.Notes = append(r.Notes, fmt.Sprintf("%q %s was not compared: %s.", p, where, why))
}

// compare lists, package by package, what changed between old and cur of the manifest p.
func compare(p string, old, cur []Package) []Change {
	type key struct{ eco, name string }
	type side struct{ old, cur []Package }
	by := map[key]*side{}
	var keys []key
	get := func(k key) *side {
		s, ok := by[k]
		if !ok {
			s = &side{}
			by[k] = s
			keys = append(keys, k)
		}
		return s
	}
	for _, o := range old {
		s := get(key{o.Ecosystem, o.Name})
		s.old = append(s.old, o)
	}
	for _, c := range cur {
		s := get(key{c.Ecosystem, c.Name})
		s.cur = append(s.cur, c)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].eco != keys[j].eco {
			return keys[i].eco < keys[j].eco
		}
		return keys[i].name < keys[j].name
	})
	var out []Change
	for _, k := range keys {
		s := by[k]
		gone, came := minus(s.old, s.cur), minus(s.cur, s.old)
		if len(gone) == 0 && len(came) == 0 {
			continue
		}
		c := Change{File: p, Ecosystem: k.eco, Name: k.name, Old: gone, New: came, Kind: Changed}
		switch {
		case len(s.old) == 0:
			c.Kind = Added
		case len(s.cur) == 0:
			c.Kind = Removed
		}
		out = append(out, c)
	}
	return out
}

// minus returns the entries of a whose version (as written) b does not hold, once each.
func minus(a, b []Package) []Package {
	in := map[string]bool{}
	for _, x := range b {
		in[x.Display()] = true
	}
	var out []Package
	for _, x := range a {
		if !in[x.Display()] {
			in[x.Display()] = true
			out = append(out, x)
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

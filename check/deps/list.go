package deps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/frognano/frognano/check/patch"
)

// Limits of what List reads from one patch.
const (
	// maxFiles bounds the files read on each side: the manifests the patch changes, every
	// file of the tree that can include others (requirements files, pyproject.toml,
	// setup.cfg) and what they include. More are a note.
	maxFiles = 200
	// A manifest a person writes (requirements, go.mod, Cargo.toml, package.json,
	// pyproject.toml) is read up to maxTextManifestBytes, a lock file up to MaxManifestBytes,
	// and all of them together up to maxParsedBytes: a patch of a few KiB can hold a file git
	// inflates to many MiB (a binary literal), and a parser keeps an object per line.
	maxTextManifestBytes = 1 << 20
	maxParsedBytes       = 32 << 20
	maxChanges           = 20000 // changes kept; more are a note
	maxLookups           = 200   // includes looked up in one tree (a git process each); more are unread
	maxUnread            = 2000  // unread entries kept; more are a note
	maxNote              = 300   // characters of a parser's error kept
)

// List applies diff to base in the host's clone (a throwaway index and object directory; the
// clone is not modified) and compares what the base commit's and the patched tree's
// manifests say, as git stores them, for every set of manifests the patch touches: a manifest
// with the files it includes (pip's -r and -c, setuptools' file:), followed in the same tree,
// cycle-safe, never out of the repository nor through a symbolic link. What cannot be read
// (a file, an include, an entry) is in Report.Unread with the reason. An error means git could
// not do its part (the patch does not apply, for one).
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
	if err := sc.Apply(ctx, git, diff); err != nil {
		var ae *patch.ApplyError
		if errors.As(err, &ae) {
			return nil, errors.New("git could not apply the patch to read its manifests")
		}
		return nil, err
	}
	tree, err := git(ctx, sc.Env, nil, "write-tree")
	if err != nil {
		return nil, fmt.Errorf("writing the patched tree: %w", err)
	}
	out, err := git(ctx, sc.Env, nil, "diff-index", "--cached", "-z", "--raw", "--no-renames", "--no-abbrev", base)
	if err != nil {
		return nil, fmt.Errorf("reading the patched tree's changes: %w", err)
	}
	entries, err := parseRaw(out)
	if err != nil {
		return nil, fmt.Errorf("reading the patched tree's changes: %w", err)
	}
	changed, added, deleted := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		changed[e.path] = true
		added[e.path] = strings.Trim(e.oldMode, "0") == ""
		deleted[e.path] = strings.Trim(e.newMode, "0") == ""
	}
	l := &lister{rep: rep, changed: changed, added: added, deleted: deleted,
		old: newSide(git, sc.Env, base, "at the base commit", true),
		cur: newSide(git, sc.Env, strings.TrimSpace(string(tree)), "in the patched tree", false)}
	if err := l.run(ctx); err != nil {
		return nil, err
	}
	return rep, nil
}

// Reads reports whether listing a patch that changes paths would read one of them: a
// manifest, or a file that a manifest of the base commit includes (directly or not, or
// names without its being there). It reads the base commit's objects only, so a patch that
// touches no dependency file costs no throwaway index. An error says it could not tell.
func Reads(ctx context.Context, git patch.Git, base string, paths []string) (bool, error) {
	changed := map[string]bool{}
	for _, p := range paths {
		if IsManifest(p) {
			return true, nil
		}
		changed[p] = true
	}
	l := &lister{rep: &Report{}, changed: changed, old: newSide(git, nil, base, "at the base commit", true)}
	g, err := l.read(ctx, l.old)
	if err != nil {
		return false, err
	}
	if len(l.rep.Notes) > 0 {
		return true, nil // a limit stopped the reading: List will say so
	}
	for p := range g.named {
		if changed[p] {
			return true, nil
		}
	}
	return false, nil
}

// lister compares the two sides of one patch.
type lister struct {
	rep     *Report
	changed map[string]bool
	// added and deleted: the paths the patch adds and removes (nil in Reads: unknown).
	added, deleted map[string]bool
	old, cur       *side
	parsed         map[string]*Manifest // by object id and path: an unchanged file is parsed once
	notes          map[string]bool
}

// node is one file read on one side.
type node struct {
	m          *Manifest // nil: the file could not be read (why, and what the parser said)
	why        string
	detail     string
	constraint bool // reached by pip's -c only
	required   bool // reached as requirements (or as a manifest of its own)
}

// graph is what one side says: the files read, and the edges of the include graph.
type graph struct {
	nodes map[string]*node
	edges [][2]string
	named map[string]bool // every path reached or named by an include
	// unread includes (an include that could not be followed), by the including file
	broken map[string][]Unread
}

func (l *lister) run(ctx context.Context) error {
	gOld, err := l.read(ctx, l.old)
	if err != nil {
		return err
	}
	gCur, err := l.read(ctx, l.cur)
	if err != nil {
		return err
	}
	// The sets: files joined by an include on either side.
	uf := unionFind{}
	for _, g := range []*graph{gOld, gCur} {
		for p := range g.nodes {
			uf.find(p)
		}
		for _, e := range g.edges {
			uf.union(e[0], e[1])
		}
	}
	sets := map[string][]string{}
	for p := range uf {
		r := uf.find(p)
		sets[r] = append(sets[r], p)
	}
	var roots []string
	for r, files := range sets {
		sort.Strings(files)
		touched := false
		for _, f := range files {
			touched = touched || l.changed[f]
		}
		if touched {
			roots = append(roots, r)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return sets[roots[i]][0] < sets[roots[j]][0] })
	for _, r := range roots {
		l.compareSet(sets[r], gOld, gCur)
	}
	sort.Strings(l.rep.Files)
	if len(l.rep.Changes) > maxChanges {
		l.rep.Notes = append(l.rep.Notes, fmt.Sprintf("The patch changes %d dependency entries; only the first %d are listed.", len(l.rep.Changes), maxChanges))
		l.rep.Changes = l.rep.Changes[:maxChanges]
	}
	if len(l.rep.Unread) > maxUnread {
		l.rep.Notes = append(l.rep.Notes, fmt.Sprintf("%d entries could not be read; only the first %d are listed.", len(l.rep.Unread), maxUnread))
		l.rep.Unread = l.rep.Unread[:maxUnread]
	}
	return nil
}

// read reads one side: the manifests the patch changes and every file of the tree that can
// include others, in the order of rank, each followed by what it includes, each file once per
// mode, at most maxFiles (the rest are unread, each with why).
func (l *lister) read(ctx context.Context, s *side) (*graph, error) {
	g := &graph{nodes: map[string]*node{}, named: map[string]bool{}, broken: map[string][]Unread{}}
	type visit struct {
		path       string
		constraint bool
	}
	var queue []visit
	incl, err := s.manifests(ctx, includer, maxFiles, l.rank)
	if errors.Is(err, errTooMany) {
		l.note(fmt.Sprintf("The tree %s holds over %d files that can include others; only %d were read.", s.where, maxFiles, maxFiles))
	} else if err != nil {
		return nil, err
	}
	for p := range incl {
		// A constraints file (by its name) that no manifest includes is read as pip reads
		// it through -c or PIP_CONSTRAINT: it installs nothing.
		queue = append(queue, visit{path: p, constraint: constraintsFile(p)})
	}
	for p := range l.changed {
		// Every manifest the patch changes is read, wherever the tree's scan stopped.
		if _, ok := incl[p]; !ok && IsManifest(p) && !(s.base && l.added[p]) && !(!s.base && l.deleted[p]) {
			queue = append(queue, visit{path: p, constraint: includer(p) && constraintsFile(p)})
		}
	}
	sort.Slice(queue, func(i, j int) bool {
		if ri, rj := l.rank(queue[i].path), l.rank(queue[j].path); ri != rj {
			return ri < rj
		}
		return queue[i].path < queue[j].path
	})
	seen := map[visit]bool{}
	read := 0
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if seen[v] {
			continue
		}
		seen[v] = true
		g.named[v.path] = true
		n := g.nodes[v.path]
		if n == nil {
			if read == maxFiles {
				// Past the limit a file is unread, with why: what it says is "unlisted", never
				// "removed".
				l.note(fmt.Sprintf("Over %d dependency files were read %s; the rest were not.", maxFiles, s.where))
				g.nodes[v.path] = &node{why: fmt.Sprintf("over %d dependency files were read %s; this one was not", maxFiles, s.where),
					constraint: v.constraint, required: !v.constraint}
				continue
			}
			read++
			n = &node{}
			g.nodes[v.path] = n
			e, err := s.lookup(ctx, v.path)
			if err != nil {
				return nil, err
			}
			if e.missing {
				// A manifest the patch adds or removes, absent on this side: nothing to read.
				delete(g.nodes, v.path)
				continue
			}
			n.m, n.why, n.detail = l.parse(ctx, s, v.path, e)
		}
		if v.constraint {
			n.constraint = true
		} else {
			n.required = true
		}
		if n.m == nil {
			continue
		}
		var next []visit
		for _, inc := range n.m.Includes {
			t, why := includeTarget(v.path, inc)
			if why == "" {
				g.named[t] = true
			}
			if why == "" && s.lookups >= maxLookups {
				// Each lookup is a git process: a file of 100,000 includes must not cost as many.
				why = fmt.Sprintf("over %d includes were looked up %s; the rest were not followed", maxLookups, s.where)
			}
			if why == "" {
				e, err := s.lookup(ctx, t)
				if err != nil {
					return nil, err
				}
				why = e.why
			}
			if why != "" {
				u := Unread{File: v.path, Line: inc.Line, What: inc.What, Why: why}
				if !slices.Contains(g.broken[v.path], u) { // a file read in both modes says it once
					g.broken[v.path] = append(g.broken[v.path], u)
				}
				continue
			}
			g.edges = append(g.edges, [2]string{v.path, t})
			next = append(next, visit{path: t, constraint: v.constraint || inc.Constraint})
		}
		// What a file includes is read before the files after it, so that it shares the
		// file's place in the order (rank).
		queue = append(next, queue...)
	}
	return g, nil
}

// parse reads and parses the file at p of side s: a manifest by its own kind, any other file
// (one that a manifest includes) as a requirements file, as pip and setuptools read it.
func (l *lister) parse(ctx context.Context, s *side, p string, e treeEntry) (*Manifest, string, string) {
	key := e.obj + "\x00" + p
	if m, ok := l.parsed[key]; ok && e.why == "" {
		return m, "", ""
	}
	content, why := s.read(ctx, l.rep, p, e)
	if why != "" {
		return nil, why, ""
	}
	ps := parserFor(p)
	if ps == nil {
		ps = requirementsParser
	}
	m, err := parseAs(ctx, ps, p, content)
	if err != nil {
		return nil, "it does not parse", clip(err.Error(), maxNote)
	}
	if l.parsed == nil {
		l.parsed = map[string]*Manifest{}
	}
	l.parsed[key] = m
	return m, "", ""
}

// rank orders the files a side reads, so that what a patch adds cannot push the repository's
// own files past maxFiles: first the manifests the patch changes that the base holds, then the
// files it does not change, then the files it adds.
func (l *lister) rank(p string) int {
	switch {
	case l.changed[p] && !l.added[p]:
		return 0
	case !l.changed[p]:
		return 1
	}
	return 2
}

func (l *lister) note(n string) {
	if l.notes == nil {
		l.notes = map[string]bool{}
	}
	if !l.notes[n] {
		l.notes[n] = true
		l.rep.Notes = append(l.rep.Notes, n)
	}
}

// sideOf gathers what one side's files of a set say.
func sideOf(files []string, g *graph) (pkgs []Package, settings []Setting, setFiles []string, unread []Unread) {
	for _, f := range files {
		unread = append(unread, g.broken[f]...)
		n := g.nodes[f]
		if n == nil {
			continue
		}
		if n.m == nil {
			unread = append(unread, Unread{File: f, Why: n.why, Detail: n.detail})
			continue
		}
		unread = append(unread, n.m.Unread...)
		for _, p := range n.m.Packages {
			if n.required {
				pkgs = append(pkgs, p)
			}
			if n.constraint && p.Role == "" {
				p.Role = RoleConstraint
				pkgs = append(pkgs, p)
			}
		}
		for _, s := range n.m.Settings {
			settings = append(settings, s)
			setFiles = append(setFiles, f)
		}
	}
	return pkgs, settings, setFiles, unread
}

// compareSet compares one set of files joined by includes.
func (l *lister) compareSet(files []string, gOld, gCur *graph) {
	for _, f := range files {
		if l.changed[f] {
			l.rep.Files = append(l.rep.Files, f)
		}
	}
	oldPkgs, oldSet, oldSetFiles, oldUnread := sideOf(files, gOld)
	curPkgs, curSet, curSetFiles, curUnread := sideOf(files, gCur)
	// What the patch wrote is kept as RedactURL leaves it: an entry pip refused can hold a URL
	// with its credentials.
	for _, us := range [][]Unread{oldUnread, curUnread} {
		for i := range us {
			us[i].What, us[i].Detail = RedactURL(us[i].What), RedactURL(us[i].Detail)
		}
	}
	for _, ss := range [][]Setting{oldSet, curSet} {
		for i := range ss {
			ss[i].Value = RedactURL(ss[i].Value)
		}
	}
	// Unread: the patched tree's, then what only the base had.
	inCur := map[string]bool{}
	for _, u := range curUnread {
		inCur[u.File+"\x00"+u.What+"\x00"+u.Why] = true
		l.rep.Unread = append(l.rep.Unread, u)
	}
	for _, u := range oldUnread {
		if !inCur[u.File+"\x00"+u.What+"\x00"+u.Why] {
			u.AtBase = true
			l.rep.Unread = append(l.rep.Unread, u)
		}
	}
	// A lone manifest that cannot be read on one side is not compared: all of it would read
	// as added or removed.
	if len(files) == 1 {
		if n := gOld.nodes[files[0]]; n != nil && n.m == nil {
			return
		}
		if n := gCur.nodes[files[0]]; n != nil && n.m == nil {
			return
		}
	}
	l.rep.Changes = append(l.rep.Changes, compare(oldPkgs, curPkgs, len(curUnread) > 0)...)
	l.rep.Settings = append(l.rep.Settings, compareSettings(oldSet, oldSetFiles, curSet, curSetFiles)...)
}

// compareSettings lists the settings one side has and the other has not (in any file of the
// set: a setting moved to an included file is the same setting).
func compareSettings(old []Setting, oldFiles []string, cur []Setting, curFiles []string) []SettingChange {
	key := func(s Setting) string { return s.Name + "\x00" + s.Value }
	has := func(ss []Setting) map[string]bool {
		m := map[string]bool{}
		for _, s := range ss {
			m[key(s)] = true
		}
		return m
	}
	inOld, inCur := has(old), has(cur)
	var out []SettingChange
	done := map[string]bool{}
	for i, s := range cur {
		if !inOld[key(s)] && !done["+"+key(s)] {
			done["+"+key(s)] = true
			out = append(out, SettingChange{File: curFiles[i], Kind: Added, Setting: s})
		}
	}
	for i, s := range old {
		if !inCur[key(s)] && !done["-"+key(s)] {
			done["-"+key(s)] = true
			out = append(out, SettingChange{File: oldFiles[i], Kind: Removed, Setting: s})
		}
	}
	return out
}

// unionFind joins the files of one set.
type unionFind map[string]string

func (u unionFind) find(p string) string {
	if _, ok := u[p]; !ok {
		u[p] = p
	}
	for u[p] != p {
		u[p] = u[u[p]]
		p = u[p]
	}
	return p
}

func (u unionFind) union(a, b string) {
	ra, rb := u.find(a), u.find(b)
	if ra != rb {
		if ra < rb {
			u[rb] = ra
		} else {
			u[ra] = rb
		}
	}
}

package layout

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// helper reports whether a package is left out of docs/architecture.md's package graph: the
// shared helpers under internal/, the test-only packages (fakes, harnesses) and what is not
// code of the service (testdata, deploy).
func helper(p string) bool {
	if under(p, "internal") || under(p, "testdata") || under(p, "deploy") {
		return true
	}
	base := filepath.Base(p)
	return strings.HasSuffix(base, "test") && base != "test"
}

// section returns the lines of docs/architecture.md from the heading to the next heading of
// the same or a higher level.
func section(t *testing.T, heading string) []string {
	t.Helper()
	f, err := os.Open("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "## ") {
			if in {
				break
			}
			in = l == heading
			continue
		}
		if in {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatalf("docs/architecture.md has no section %q", heading)
	}
	return lines
}

// node is one mermaid node: an id with an optional [label].
var node = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*)(?:\[([^\]]*)\])?$`)

// docGraph reads the mermaid flowchart of "## The packages of one run": the packages it names
// (a node's label, or its id when it has none) and its arrows, importer to imported.
func docGraph(t *testing.T) (nodes map[string]bool, edges map[[2]string]bool) {
	t.Helper()
	var chart []string
	inChart := false
	for _, l := range section(t, "## The packages of one run") {
		switch {
		case strings.HasPrefix(l, "```mermaid"):
			inChart = true
		case inChart && strings.HasPrefix(l, "```"):
			inChart = false
		case inChart:
			chart = append(chart, strings.TrimSpace(l))
		}
	}
	if len(chart) == 0 {
		t.Fatal(`"The packages of one run" in docs/architecture.md has no mermaid chart`)
	}
	label := map[string]string{}
	type raw struct{ from, to string }
	var arrows []raw
	var ids []string
	parse := func(s string) string {
		m := node.FindStringSubmatch(strings.TrimSpace(s))
		if m == nil {
			t.Fatalf("docs/architecture.md's package graph: cannot read node %q", s)
		}
		if m[2] != "" {
			if old, ok := label[m[1]]; ok && old != m[2] {
				t.Fatalf("docs/architecture.md's package graph: node %s is labelled both %q and %q", m[1], old, m[2])
			}
			label[m[1]] = m[2]
		}
		ids = append(ids, m[1])
		return m[1]
	}
	for _, l := range chart {
		if l == "" || strings.HasPrefix(l, "flowchart") || strings.HasPrefix(l, "%%") {
			continue
		}
		from, to, ok := strings.Cut(l, "-->")
		if !ok {
			parse(l)
			continue
		}
		f := parse(from)
		for _, n := range strings.Split(to, "&") {
			arrows = append(arrows, raw{f, parse(n)})
		}
	}
	path := func(id string) string {
		if l, ok := label[id]; ok {
			return l
		}
		return id
	}
	nodes, edges = map[string]bool{}, map[[2]string]bool{}
	for _, id := range ids {
		nodes[path(id)] = true
	}
	for _, a := range arrows {
		edges[[2]string{path(a.from), path(a.to)}] = true
	}
	return nodes, edges
}

// TestArchitectureGraphIsTheImportGraph checks docs/architecture.md's package graph against
// go list: every package of the module but the helpers is drawn, and the arrows are exactly
// the imports between drawn packages, so the picture a newcomer reads first is the code.
func TestArchitectureGraphIsTheImportGraph(t *testing.T) {
	pkgs := list(t)
	nodes, edges := docGraph(t)
	want := map[[2]string]bool{}
	for p, info := range pkgs {
		if helper(p) || p == "." {
			continue
		}
		if !nodes[p] {
			t.Errorf("docs/architecture.md's package graph does not draw %s", p)
		}
		for _, imp := range info.Imports {
			r := rel(imp)
			if r == "" || helper(r) {
				continue
			}
			want[[2]string{p, r}] = true
		}
	}
	for n := range nodes {
		if _, ok := pkgs[n]; !ok {
			t.Errorf("docs/architecture.md's package graph draws %s, which is no package of the module", n)
		} else if helper(n) {
			t.Errorf("docs/architecture.md's package graph draws the helper %s; the text says helpers are left out", n)
		}
	}
	var missing, extra []string
	for e := range want {
		if !edges[e] {
			missing = append(missing, e[0]+" --> "+e[1])
		}
	}
	for e := range edges {
		if !want[e] {
			extra = append(extra, e[0]+" --> "+e[1])
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, e := range missing {
		t.Errorf("docs/architecture.md's package graph lacks the import %s", e)
	}
	for _, e := range extra {
		t.Errorf("docs/architecture.md's package graph draws %s, which the code does not import", e)
	}
}

// folderCell is a table row's first cell: `name` or `name/`.
var folderCell = regexp.MustCompile("^\\| `([^`]+)` \\|")

// TestFolderTableNamesEveryFolder checks "The folders" table of docs/architecture.md: every
// folder of the repository that holds a package (at the top, and the packages of internal/ one
// by one) has a row, and every row names a folder that exists.
func TestFolderTableNamesEveryFolder(t *testing.T) {
	pkgs := list(t)
	rows := map[string]bool{}
	for _, l := range section(t, "## The folders") {
		if m := folderCell.FindStringSubmatch(l); m != nil {
			rows[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	if len(rows) < 10 {
		t.Fatalf("docs/architecture.md's folder table has %d rows; cannot read it", len(rows))
	}
	need := map[string]bool{}
	for p := range pkgs {
		if p == "." {
			continue
		}
		parts := strings.Split(p, "/")
		switch parts[0] {
		case "internal", "cmd":
			if len(parts) > 1 {
				need[parts[0]+"/"+parts[1]] = true
			}
		default:
			need[parts[0]] = true
		}
	}
	var names []string
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !rows[n] {
			t.Errorf("docs/architecture.md's folder table has no row for %s", n)
		}
	}
	for r := range rows {
		if _, err := os.Stat(filepath.Join("../..", r)); err != nil {
			t.Errorf("docs/architecture.md's folder table names %s, which does not exist", r)
		}
	}
	// Folders that hold no Go package (documents, CI) still have their rows.
	for _, r := range []string{"docs", ".ci"} {
		if !slices.Contains(keys(rows), r) {
			t.Errorf("docs/architecture.md's folder table has no row for %s", r)
		}
	}
}

func keys(m map[string]bool) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	return k
}

// pathCell is a code span in a table row that names a file or folder of the repository.
var pathCell = regexp.MustCompile("`([a-z][a-z0-9_./*-]*/[a-zA-Z0-9_./*-]*)`")

// TestWhereIsNamesRealFiles checks the "where is it" table of docs/architecture.md: every
// file or folder a row names (a glob such as run/text_*.go must match one) exists, so the
// table a newcomer follows never sends them to a room that moved.
func TestWhereIsNamesRealFiles(t *testing.T) {
	n := 0
	for _, l := range section(t, "## Where is it: a behaviour and the file that owns it") {
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| ---") || strings.HasPrefix(l, "| behaviour") {
			continue
		}
		cells := strings.Split(l, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range pathCell.FindAllStringSubmatch(cells[2], -1) {
			n++
			p := strings.TrimSuffix(m[1], "/")
			if strings.Contains(p, "NNNN") {
				p = strings.ReplaceAll(p, "NNNN", "*")
			}
			got, err := filepath.Glob(filepath.Join("../..", p))
			if err != nil || len(got) == 0 {
				t.Errorf("docs/architecture.md's where-is table names %s, which does not exist", m[1])
			}
		}
	}
	if n < 20 {
		t.Fatalf("read %d paths from the where-is table; cannot read it", n)
	}
}

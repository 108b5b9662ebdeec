package deps

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/frognano/frognano/runner/deps/osvtest"
)

var fuzzPaths = []string{"requirements.txt", "pyproject.toml", "poetry.lock", "uv.lock", "Pipfile.lock", "go.mod",
	"package.json", "package-lock.json", "Cargo.toml", "Cargo.lock"}

// FuzzParse feeds every parser bytes a patch could write: Parse must return (an error is
// fine) without a panic escaping, the same answer twice, and only named, sorted packages.
func FuzzParse(f *testing.F) {
	seeds := map[int]string{
		0: "requests==2.31.0\nflask>=2.0 ; python_version > '3'\n-r other.txt\nx[extra]==1 --hash=sha256:00\n",
		1: "[project]\nname = \"a\"\ndependencies = [\"requests>=2\"]\n[project.optional-dependencies]\nt = [\"pytest\"]\n",
		2: "[[package]]\nname = \"idna\"\nversion = \"3.7\"\n",
		3: "version = 1\n[[package]]\nname = \"attrs\"\nversion = \"23.2.0\"\n",
		4: `{"default": {"requests": {"version": "==2.31.0"}}}`,
		5: "module m\n\ngo 1.16\n\nrequire golang.org/x/text v0.3.7\nreplace golang.org/x/text => ../text\n",
		6: `{"name": "a", "version": "1.0.0", "dependencies": {"lodash": "^4.17.21", "x": "git+ssh://h/x"}}`,
		7: `{"lockfileVersion": 1, "dependencies": {"a": {"version": "1.0.0", "dependencies": {"b": {"version": "2"}}}}}`,
		8: "[package]\nname = \"a\"\n[dependencies]\nserde = \"1.0\"\nr = { git = \"x\", rev = \"abc\" }\n",
		9: "version = 3\n[[package]]\nname = \"smallvec\"\nversion = \"1.6.1\"\n",
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, content []byte) {
		p := fuzzPaths[int(which)%len(fuzzPaths)]
		a, errA := Parse(context.Background(), p, content)
		b, errB := Parse(context.Background(), p, content)
		if (errA == nil) != (errB == nil) || len(a) != len(b) {
			t.Fatalf("two parses of one %s differ: %v / %v", p, errA, errB)
		}
		for i := range a {
			if a[i].Ecosystem != b[i].Ecosystem || a[i].Name != b[i].Name || a[i].Display() != b[i].Display() {
				t.Fatalf("two parses of one %s differ at %d: %+v / %+v", p, i, a[i], b[i])
			}
			if i > 0 && (a[i-1].Ecosystem > a[i].Ecosystem || a[i-1].Ecosystem == a[i].Ecosystem && a[i-1].Name > a[i].Name) {
				t.Fatalf("packages of %s not sorted: %+v before %+v", p, a[i-1], a[i])
			}
		}
		// compare is given what Parse returned on both sides: nothing is a change.
		if cs := compare(p, a, b); len(cs) != 0 {
			t.Fatalf("a manifest compared with itself changed: %+v", cs)
		}
	})
}

// FuzzRecord feeds the export reader and the matcher a record of the operator's export and a
// version from a patch: no panic escapes, and a found vulnerability names its record's id.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(exportVulns[0].JSON()), "2.31.0")
	f.Add([]byte(osvtest.Vuln{ID: "X", Ecosystem: "PyPI", Package: "requests", Introduced: "0", Fixed: "not.a.version!"}.JSON()), "1.0")
	f.Add([]byte(`{"id":"Y","affected":[{"package":{"ecosystem":"PyPI","name":"requests"},"versions":["2.31.0"],"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"last_affected":"3"}]}]}]}`), "2.31.0")
	f.Fuzz(func(t *testing.T, rec []byte, version string) {
		ps, err := Parse(context.Background(), "requirements.txt", []byte("requests=="+strings.ReplaceAll(version, "\n", "")+"\n"))
		if err != nil || len(ps) != 1 {
			return
		}
		hit, ok := names4(rec, "PyPI", map[string]bool{"requests": true})
		if !ok || len(hit) == 0 {
			return
		}
		dir := t.TempDir()
		osvtest.Write(t, dir, "PyPI", map[string]string{"r.json": string(rec)})
		rep := &Report{Changes: []Change{{Ecosystem: "PyPI", Name: "requests", Kind: Added, New: ps}}}
		OSV{Dir: dir}.Check(context.Background(), rep)
		for _, v := range rep.Changes[0].Vulns {
			if !strings.Contains(string(rec), v.ID) && !reflect.DeepEqual(v, Vuln{}) {
				t.Fatalf("found %q, which the record does not name", v.ID)
			}
		}
	})
}

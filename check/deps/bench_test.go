package deps

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/deps/osvtest"
	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/gittest"
)

// benchExport writes a PyPI export of n invented records of about 2 KB each (OSV's real PyPI
// export held some 17,000 records in 2026), 3 of them about the packages the benchmark checks.
func benchExport(b *testing.B, n int) string {
	b.Helper()
	files := map[string]string{}
	details := strings.Repeat("A made-up description of a vulnerability, as long as a real one. ", 30)
	for i := range n {
		v := osvtest.Vuln{ID: fmt.Sprintf("FROG-%d", i), Ecosystem: "PyPI", Package: fmt.Sprintf("package-%d", i%5000),
			Introduced: "0", Fixed: "1.2.3", Summary: details, CVSS: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}
		switch i {
		case 10, 20:
			v.Package = "requests"
			v.Fixed = "2.32.0"
		case 30:
			v.Package, v.Fixed = "urllib3", "2.0.0"
		}
		files[v.ID+".json"] = v.JSON()
	}
	dir := b.TempDir()
	osvtest.Write(b, dir, "PyPI", files)
	return dir
}

// BenchmarkCheck is what FROGNANO_OSV_DIR adds to a run whose patch changes Python
// dependencies: one read of a PyPI export of 20,000 records, and the matching.
func BenchmarkCheck(b *testing.B) {
	dir := benchExport(b, 20000)
	st, err := os.Stat(dir + "/PyPI/all.zip")
	if err != nil {
		b.Fatal(err)
	}
	changes := changesOf(b, "requirements.txt", "requests==2.0.0\n", "requests==2.31.0\nurllib3==1.26.4\nflask==3.0.0\n")
	b.ResetTimer()
	for b.Loop() {
		rep := &Report{Changes: append([]Change(nil), changes...)}
		for i := range rep.Changes {
			rep.Changes[i].Vulns = nil
		}
		OSV{Dir: dir}.Check(context.Background(), rep)
		if len(rep.Vulnerable()) != 2 || len(rep.Notes) != 0 {
			b.Fatalf("vulnerable %d, notes %q", len(rep.Vulnerable()), rep.Notes)
		}
	}
	b.ReportMetric(float64(st.Size())/1e6, "export-MB") // after the loop: ResetTimer drops metrics
}

// BenchmarkList is what listing adds to a run whose patch changes go.mod and requirements.txt:
// git applies the patch in a throwaway index and the four sides are read and parsed.
func BenchmarkList(b *testing.B) {
	mod := "module example.com/m\n\ngo 1.22\n\nrequire (\n"
	for i := range 60 {
		mod += fmt.Sprintf("\texample.com/dep%d v1.%d.0\n", i, i)
	}
	dir, base := gittest.Repo(b, map[string]string{"go.mod": mod + ")\n", "requirements.txt": "requests==2.0.0\n"})
	gittest.Write(b, dir, map[string]string{"go.mod": mod + "\tgolang.org/x/text v0.3.8\n)\n", "requirements.txt": "requests==2.31.0\n"})
	gittest.Git(b, dir, "add", "-A")
	diff := []byte(gittest.Git(b, dir, "diff", "--cached", "--binary", base) + "\n")
	gittest.Git(b, dir, "reset", "-q", "--hard", base)
	git := patch.HostGit(dir)
	b.ResetTimer()
	for b.Loop() {
		rep, err := List(context.Background(), git, base, diff)
		if err != nil || len(rep.Changes) != 2 {
			b.Fatalf("changes %+v, error %v", rep, err)
		}
	}
}

// BenchmarkReads is what every run whose patch touches no manifest pays to learn that it
// touches no file a manifest includes: one listing of the base commit's tree of 20,000 files
// (ls-tree) and the reading of its three requirements files.
func BenchmarkReads(b *testing.B) {
	files := map[string]string{
		"requirements.txt": "-r deps/common.in\nrequests==2.31.0\n", "deps/common.in": "six==1.16.0\n",
		"docs/requirements.txt": "sphinx==7.0.0\n",
	}
	for i := range 20000 {
		files[fmt.Sprintf("src/pkg%d/mod%d.py", i%200, i)] = "x = 1\n"
	}
	dir, base := gittest.Repo(b, files)
	git := patch.HostGit(dir)
	b.ResetTimer()
	for b.Loop() {
		reads, err := Reads(context.Background(), git, base, []string{"src/pkg1/mod1.py"})
		if err != nil || reads {
			b.Fatalf("Reads = %v, %v", reads, err)
		}
	}
}

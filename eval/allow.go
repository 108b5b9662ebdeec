package eval

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A task file is written by whoever published the task set; the operator is the one who runs
// it. So what a task may make the host do is the operator's to allow: which image its
// sandboxes run, which folder of the host is read as its repository, and which address the
// host's git connects to. Everything else is refused, with the task's id and the field.

// Allow is what the operator lets a task file use beyond frognano's defaults (the flags of
// `frognano eval`, docs/eval.md).
type Allow struct {
	// Images are images a task's `image` may name besides the runner's own base images (the
	// sandbox image and those FROGNANO_SANDBOX_IMAGES maps: runner.Runner.BaseImages).
	// --allow-image.
	Images []string
	// PlainURLs lets `repo_url` use http:// and git://, which neither encrypt nor
	// authenticate the server. --allow-plain-urls.
	PlainURLs bool
	// LocalAddresses lets `repo_url` reach loopback, link-local, cloud metadata and
	// unspecified addresses. --allow-local-urls.
	LocalAddresses bool
}

// imageRe is the shape of an image reference: [registry[:port]/]path[:tag][@digest].
var imageRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$`)

// policy decides whether a task may run: the operator's Allow, the images the runner was
// configured with, and the folders a repo_path may resolve into.
type policy struct {
	images  map[string]bool // canonicalImage of each allowed image
	allow   Allow
	taskDir string // repo_path is read relative to it first
	repos   string // then relative to it (Options.Repos)
	// lookup resolves a host name (net.DefaultResolver's LookupNetIP; tests replace it).
	lookup lookupFunc
}

func newPolicy(base []string, opt Options) *policy {
	p := &policy{images: map[string]bool{}, allow: opt.Allow, taskDir: opt.TaskDir, repos: opt.Repos, lookup: defaultLookup}
	for _, img := range append(slices.Clone(base), opt.Allow.Images...) {
		if img != "" {
			p.images[canonicalImage(img)] = true
		}
	}
	return p
}

// canonicalImage is how two names of an image are compared: as written, with the tag
// `latest` that Docker implies when a name has neither tag nor digest.
func canonicalImage(s string) string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "@") {
		return s
	}
	last := s[strings.LastIndexByte(s, '/')+1:]
	if !strings.Contains(last, ":") {
		return s + ":latest"
	}
	return s
}

// check is everything decided before a task runs: its fields' shape (Task.check, for a
// task that was not read from a file) and the operator's policy on its image, repo_path and
// repo_url. A refusal names the field (*FieldError, but for a shape error that names none).
func (p *policy) check(ctx context.Context, t Task) error {
	if err := t.check(); err != nil {
		return err
	}
	if t.Image != "" && !p.images[canonicalImage(t.Image)] {
		return fieldErr("image", "%q is not a sandbox image this evaluation may use: a task may name the sandbox image (FROGNANO_SANDBOX_IMAGE or --image), "+
			"an image FROGNANO_SANDBOX_IMAGES maps, or one given with --allow-image", t.Image)
	}
	switch {
	case t.RepoPath != "":
		if _, err := p.repoPath(t.RepoPath); err != nil {
			return err
		}
	case t.RepoURL != "":
		if _, err := p.checkURL(ctx, t.RepoURL); err != nil {
			return err
		}
	}
	return nil
}

// checkRepoPathSyntax is what a repo_path must look like, whatever the host holds: relative,
// without `..`, printable.
func checkRepoPathSyntax(p string) error {
	switch {
	case !utf8.ValidString(p) || hasControl(p):
		return fieldErr("repo_path", "holds control characters or is not UTF-8")
	case filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		return fieldErr("repo_path", "%q is absolute: give a path relative to the task file's folder (or to --repos)", p)
	case slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".."):
		return fieldErr("repo_path", "%q holds a `..` part: a task's repository must lie inside the task file's folder or --repos", p)
	}
	return nil
}

// repoPath resolves a task's repo_path on the host, now: relative to the task file's folder,
// or else relative to --repos, with every symbolic link followed. The folder it names, its git
// directory (a `.git` folder, link or `gitdir:` file), that directory's objects and every
// object store they borrow from (objects/info/alternates, a worktree's commondir) must all
// lie inside the task file's folder or --repos. It returns the resolved folder: git is given
// that, never the path as written.
func (p *policy) repoPath(rel string) (string, error) {
	if err := checkRepoPathSyntax(rel); err != nil {
		return "", err
	}
	var roots []string
	for _, r := range []string{cmp.Or(p.taskDir, "."), p.repos} {
		if r == "" {
			continue
		}
		if real, err := realPath(r); err == nil { // a folder that is not there holds nothing
			roots = append(roots, real)
		}
	}
	for _, root := range roots {
		real, err := realPath(filepath.Join(root, filepath.FromSlash(rel)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fieldErr("repo_path", "resolving %q: %v", rel, err)
		}
		if !insideAny(real, roots) {
			return "", fieldErr("repo_path", "%q leads out of the task file's folder and --repos (through a symbolic link) to %s", rel, real)
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			return "", fieldErr("repo_path", "%q is not a folder", rel)
		}
		if err := checkGitDir(real, roots); err != nil {
			return "", fieldErr("repo_path", "%q: %v", rel, err)
		}
		return real, nil
	}
	return "", fieldErr("repo_path", "%q is neither under the task file's folder nor under --repos", rel)
}

// realPath is p absolute, with every symbolic link resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// inside reports whether path (resolved) is root or lies under it.
func inside(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func insideAny(path string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return inside(path, r) })
}

// maxAlternates bounds how deep checkGitDir follows object stores that borrow from others
// (git itself stops at 5).
const maxAlternates = 5

// checkGitDir checks that the repository in folder dir reads nothing outside roots: git
// follows a `.git` link or `gitdir:` file, a worktree's commondir and the object stores
// objects/info/alternates names, each of which could take a clone to another repository
// of the host.
func checkGitDir(dir string, roots []string) error {
	gitDir := dir // a bare repository
	if st, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		switch {
		case st.Mode().IsRegular():
			b, err := readSmall(filepath.Join(dir, ".git"))
			if err != nil {
				return err
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
			if !ok {
				return errors.New("its .git file is not a `gitdir:` file")
			}
			gitDir = strings.TrimSpace(target)
			if !filepath.IsAbs(gitDir) {
				gitDir = filepath.Join(dir, gitDir)
			}
		default:
			gitDir = filepath.Join(dir, ".git")
		}
	}
	real, err := realPath(gitDir)
	if err != nil {
		return fmt.Errorf("its git directory: %v", err)
	}
	if !insideAny(real, roots) {
		return fmt.Errorf("its git directory is %s, outside the task file's folder and --repos", real)
	}
	if b, err := readSmall(filepath.Join(real, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(real, common)
		}
		if real, err = realPath(common); err != nil || !insideAny(real, roots) {
			return fmt.Errorf("its common git directory %s is outside the task file's folder and --repos", common)
		}
	}
	return checkObjects(filepath.Join(real, "objects"), roots, 0)
}

// checkObjects checks an object store and those it borrows from (objects/info/alternates).
func checkObjects(objects string, roots []string, depth int) error {
	real, err := realPath(objects)
	if errors.Is(err, os.ErrNotExist) {
		return nil // not a repository: git will say so
	}
	if err != nil || !insideAny(real, roots) {
		return fmt.Errorf("its object store %s is outside the task file's folder and --repos", objects)
	}
	b, err := readSmall(filepath.Join(real, "info", "alternates"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if depth >= maxAlternates {
		return errors.New("its object stores borrow from each other too deeply")
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, `"`) {
			if u, err := strconv.Unquote(line); err == nil {
				line = u
			}
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(real, line)
		}
		if err := checkObjects(line, roots, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// readSmall reads a file of git's own (a gitdir, commondir or alternates file): at most 64 KiB.
func readSmall(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

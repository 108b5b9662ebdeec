package sandbox

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/frognano/frognano/internal/hostgit"
)

// CopyRepo copies hostDir, a git checkout, into the workspace as a tar whose every entry is
// owned by the sandbox user. The host directory is only read. It packs the checkout for this
// sandbox alone; a run that makes several sandboxes of one checkout packs it once (Pack,
// NewFrom, CopySnapshot), with the same result.
//
// Only what git tracks is copied: the paths `git ls-files` lists (run on the host with the
// system configuration ignored), with their working-tree content, so that an ignored or
// untracked file (a local .env, build output, a key) never reaches the model or the patch. A
// tracked path that is missing, lies under a symbolic link, or is a directory (a submodule: it
// is copied empty) brings nothing else. A directory that is not in a git work tree at all is
// copied whole (test fixtures).
//
// The .git copied is a fresh repository holding only the history reachable from HEAD (see
// freshGitDir): no stash, other branch, reflog or unreachable object of the host's. It carries
// no credential: .git/config is replaced by a fresh one (core settings only, no remote), and
// the parts of .git that are host state or can run code (hooks, logs,
// FETCH_HEAD, submodule repositories, alternates) are left out. Symbolic links are copied as
// links, never followed; sockets, devices and FIFOs are skipped.
func (s *Sandbox) CopyRepo(ctx context.Context, hostDir string) error {
	p, err := Pack(ctx, hostDir, s.cfg.User, "")
	if err != nil {
		return err
	}
	defer p.Close()
	return s.CopySnapshot(ctx, p)
}

// packRepo writes the tar CopyRepo describes of hostDir to w, its entries owned by uid:gid.
func packRepo(ctx context.Context, w io.Writer, hostDir string, uid, gid int) error {
	root, err := filepath.Abs(hostDir)
	if err != nil {
		return fmt.Errorf("resolving the repository path: %w", err)
	}
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err == nil && !fi.IsDir() {
		return fmt.Errorf("copying the repository: %s/.git is not a directory (worktrees and submodule checkouts are not supported)", root)
	}
	tracked, err := trackedFiles(ctx, root)
	if err != nil {
		return fmt.Errorf("copying the repository: %w", err)
	}
	// The .git copied is a fresh one holding only HEAD's history: a stash, another branch or an
	// unreachable object of the host's repository may hold what never was committed here.
	gitRoot := root
	if tracked != nil {
		if _, err := os.Lstat(filepath.Join(root, ".git")); err == nil {
			fresh, err := freshGitDir(ctx, root)
			if err != nil {
				return fmt.Errorf("copying the repository: %w", err)
			}
			defer os.RemoveAll(fresh)
			gitRoot = fresh
		}
	}
	return writeRepoTar(w, root, gitRoot, tracked, uid, gid)
}

// trackedFiles lists the paths (slash-separated, relative to root, sorted, each once) that git
// tracks under root, or nil when root is in no git work tree. Git runs under the rule of every
// host git (internal/hostgit), so that it reads root's own repository and listing runs no hook.
func trackedFiles(ctx context.Context, root string) ([]string, error) {
	out, err := hostgit.Run(ctx, root, nil, nil, "ls-files", "-z")
	if err != nil {
		var ge *hostgit.Error
		if !errors.As(err, &ge) {
			return nil, fmt.Errorf("listing the files git tracks in %s: %w", root, err)
		}
		// The rule's LC_ALL=C keeps git's messages in English, which this reads.
		var ee *exec.ExitError
		if errors.As(err, &ee) && strings.Contains(ge.Stderr, "not a git repository") {
			if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
				return nil, fmt.Errorf("git does not read %s/.git as a repository: %s", root, ge.Stderr)
			}
			return nil, nil
		}
		return nil, fmt.Errorf("listing the files git tracks in %s: %v: %s", root, ge.Err, ge.Stderr)
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		// An unmerged path is listed once per stage.
		if p != "" && (len(paths) == 0 || paths[len(paths)-1] != p) {
			paths = append(paths, p)
		}
	}
	if paths == nil {
		paths = []string{} // a repository that tracks nothing: copy nothing but .git
	}
	return paths, nil
}

// writeRepoTar writes the tar of root for CopyRepo: the tracked paths (everything when
// tracked is nil) and the sanitized .git of gitRoot (root's own, or a fresh one).
func writeRepoTar(w io.Writer, root, gitRoot string, tracked []string, uid, gid int) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	tw := tar.NewWriter(bw)
	// The workspace root itself: a volume for a path the image lacks starts out owned by root.
	if err := tw.WriteHeader(&tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755, Uid: uid, Gid: gid, Format: tar.FormatPAX}); err != nil {
		return err
	}
	var err error
	if tracked == nil {
		err = writeTree(tw, root, "", uid, gid)
	} else {
		err = writeTracked(tw, root, tracked, uid, gid)
		if err == nil {
			if _, statErr := os.Lstat(filepath.Join(gitRoot, ".git")); statErr == nil {
				err = writeTree(tw, gitRoot, ".git", uid, gid)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("packing the repository: %w", err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("packing the repository: %w", err)
	}
	return bw.Flush()
}

// writeTracked writes the tracked paths as they are in root's working tree, each preceded by
// its parent directories. A path whose parent is not a real directory (a symbolic link, a
// file, missing) is skipped: git would not write through a link either, and following one
// could read outside the checkout.
func writeTracked(tw *tar.Writer, root string, tracked []string, uid, gid int) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	dirs := map[string]bool{"": true} // written (true) or refused (false)
	var dirOK func(dir string) (bool, error)
	dirOK = func(dir string) (bool, error) {
		if ok, seen := dirs[dir]; seen {
			return ok, nil
		}
		parent := path.Dir(dir)
		if parent == "." {
			parent = ""
		}
		ok, err := dirOK(parent)
		if err != nil || !ok {
			dirs[dir] = false
			return false, err
		}
		info, err := r.Lstat(dir)
		if err != nil || !info.IsDir() {
			dirs[dir] = false
			return false, nil
		}
		dirs[dir] = true
		return true, writeEntry(tw, r, dir, info, uid, gid)
	}
	for _, rel := range tracked {
		if !safeTrackedPath(rel) {
			continue
		}
		parent := path.Dir(rel)
		if parent == "." {
			parent = ""
		}
		if ok, err := dirOK(parent); err != nil {
			return err
		} else if !ok {
			continue
		}
		info, err := r.Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return err
		}
		if info.IsDir() {
			// A submodule (gitlink): an empty directory, as git leaves one not initialised.
			if _, seen := dirs[rel]; seen {
				continue
			}
			dirs[rel] = false // its content is not tracked here: nothing goes under it
			if err := writeEntry(tw, r, rel, info, uid, gid); err != nil {
				return err
			}
			continue
		}
		if err := writeEntry(tw, r, rel, info, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// safeTrackedPath refuses what git itself never tracks (an empty, absolute or dot-dot
// component, or a .git component), should an index list it anyway.
func safeTrackedPath(rel string) bool {
	if rel == "" || strings.HasPrefix(rel, "/") {
		return false
	}
	for _, c := range strings.Split(rel, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}

// writeTree writes root/sub (root itself when sub is empty) and everything under it, with the
// rules of gitEntry for the checkout's own .git.
func writeTree(tw *tar.Writer, root, sub string, uid, gid int) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	start := filepath.Join(root, filepath.FromSlash(sub))
	return filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch gitEntry(rel) {
		case gitSkip:
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case gitConfig:
			cfg, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("reading .git/config: %w", err)
			}
			return writeFile(tw, rel, 0o644, uid, gid, SanitizedGitConfig(cfg))
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return writeEntry(tw, r, rel, info, uid, gid)
	})
}

// writeEntry writes one file, directory or symbolic link of r at rel; anything else is skipped.
func writeEntry(tw *tar.Writer, r *os.Root, rel string, info fs.FileInfo, uid, gid int) error {
	hdr := &tar.Header{
		Name:    rel,
		Mode:    int64(info.Mode().Perm()),
		ModTime: info.ModTime(),
		Uid:     uid,
		Gid:     gid,
		Format:  tar.FormatPAX,
	}
	var err error
	switch {
	case info.Mode().IsRegular():
		hdr.Typeflag = tar.TypeReg
		hdr.Size = info.Size()
	case info.IsDir():
		hdr.Typeflag = tar.TypeDir
		hdr.Name += "/"
	case info.Mode()&fs.ModeSymlink != 0:
		hdr.Typeflag = tar.TypeSymlink
		if hdr.Linkname, err = r.Readlink(rel); err != nil {
			return err
		}
	default:
		return nil // sockets, devices, FIFOs: nothing a repository needs
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	// Opened through the root, so that even a path changed meanwhile cannot lead outside it.
	f, err := r.Open(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	// CopyN keeps the entry exactly as long as its header said even if the file changed.
	_, err = io.CopyN(tw, f, hdr.Size)
	return err
}

func writeFile(tw *tar.Writer, name string, mode int64, uid, gid int, content []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(content)), Uid: uid, Gid: gid, Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(content)
	return err
}

type gitAction int

const (
	gitCopy gitAction = iota
	gitSkip
	gitConfig
)

// gitEntry decides what happens to one path (slash-separated, relative to the checkout) of the
// repository's own .git directory. Paths outside .git are copied.
func gitEntry(rel string) gitAction {
	in, ok := strings.CutPrefix(rel, ".git/")
	if !ok {
		return gitCopy
	}
	switch {
	case in == "config":
		return gitConfig
	case strings.HasPrefix(in, "hooks/"), // code that git would run
		in == "FETCH_HEAD", // names the remote URL
		in == "logs" || strings.HasPrefix(in, "logs/"),                        // reflogs: host history, may hold URLs
		in == "modules" || strings.HasPrefix(in, "modules/"),                  // submodule repositories with their own configs
		in == "objects/info/alternates", in == "objects/info/http-alternates", // host paths, URLs
		in == "config.worktree",                              // per-worktree config: could set hooksPath, fsmonitor...
		in == "remotes" || strings.HasPrefix(in, "remotes/"), // legacy remote definitions: URLs
		in == "branches" || strings.HasPrefix(in, "branches/"),
		in == "worktrees" || strings.HasPrefix(in, "worktrees/"), // host paths
		in == "credentials",
		strings.HasSuffix(in, ".lock"):
		return gitSkip
	}
	return gitCopy
}

// SanitizedGitConfig returns a fresh .git/config for the sandbox's copy of a repository whose
// host config is hostConfig. It keeps only what git needs to read the repository: the format
// version and, for a SHA-256 repository, the object format. Nothing else of hostConfig survives:
// no remote (and so no URL that could embed a token), credential helper, http.extraheader,
// url.insteadOf, include, hook path, fsmonitor or filter.
func SanitizedGitConfig(hostConfig []byte) []byte {
	version, objectFormat := "0", ""
	section := ""
	for _, raw := range bytes.Split(hostConfig, []byte("\n")) {
		line := strings.TrimSpace(string(raw))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				section = ""
				continue
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		key, val, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.ToLower(strings.TrimSpace(val))
		switch {
		case section == "core" && key == "repositoryformatversion" && (val == "0" || val == "1"):
			version = val
		case section == "extensions" && key == "objectformat" && (val == "sha1" || val == "sha256"):
			objectFormat = val
		}
	}
	var b strings.Builder
	b.WriteString("[core]\n\trepositoryformatversion = ")
	if objectFormat == "sha256" {
		version = "1" // required by the extension
	}
	b.WriteString(version)
	b.WriteString("\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n")
	if objectFormat != "" && version == "1" {
		b.WriteString("[extensions]\n\tobjectformat = " + objectFormat + "\n")
	}
	return []byte(b.String())
}

package sandbox

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/frognano/frognano/internal/hostgit"
)

// TreeEntry is one entry of a commit's tree as `git ls-tree -r -l` lists it.
type TreeEntry struct {
	Mode string // "100644", "100755", "120000" (symbolic link), "160000" (submodule)
	Type string // "blob" or "commit"
	OID  string
	Size int64  // the blob's size; -1 for a submodule
	Path string // slash-separated, relative to the repository root
}

// Regular reports whether e is a regular file.
func (e TreeEntry) Regular() bool { return e.Mode == "100644" || e.Mode == "100755" }

// maxTreeEntries bounds what CommitTree reads: a tree larger than this is refused.
const maxTreeEntries = 1 << 20

// CommitTree lists every entry of commit's tree in the host checkout dir, read from git's
// objects alone: the working tree, the index and anything written since the commit play no
// part. git runs with no system or global configuration, no hooks and no fsmonitor; listing
// a tree and reading blobs runs no filter of the repository's.
func CommitTree(ctx context.Context, dir, commit string) ([]TreeEntry, error) {
	out, err := gitIn(ctx, dir, "ls-tree", "-r", "-l", "-z", "--full-tree", commit+"^{tree}")
	if err != nil {
		return nil, fmt.Errorf("listing the tree of %.12s: %w", commit, err)
	}
	var entries []TreeEntry
	for _, rec := range strings.Split(out, "\x00") {
		if rec == "" {
			continue
		}
		if len(entries) == maxTreeEntries {
			return nil, fmt.Errorf("the tree of %.12s has more than %d entries", commit, maxTreeEntries)
		}
		// "<mode> <type> <oid> <size>\t<path>", the size right-aligned with spaces.
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || !safeTrackedPath(p) {
			return nil, fmt.Errorf("listing the tree of %.12s: unexpected entry %q", commit, rec)
		}
		e := TreeEntry{Mode: f[0], Type: f[1], OID: f[2], Size: -1, Path: p}
		if f[3] != "-" {
			if e.Size, err = strconv.ParseInt(f[3], 10, 64); err != nil || e.Size < 0 {
				return nil, fmt.Errorf("listing the tree of %.12s: unexpected size in %q", commit, rec)
			}
		}
		switch {
		case e.Regular() || e.Mode == "120000":
			if e.Type != "blob" {
				return nil, fmt.Errorf("listing the tree of %.12s: unexpected entry %q", commit, rec)
			}
		case e.Mode == "160000":
		default:
			return nil, fmt.Errorf("listing the tree of %.12s: unexpected mode %s of %s", commit, e.Mode, p)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// EachBlob calls fn with the content of each blob entry (regular files and symbolic links;
// submodules are skipped), in order, read from git's objects in dir by one `git cat-file
// --batch`. fn must read at most e.Size bytes; the rest is skipped for it.
func EachBlob(ctx context.Context, dir string, entries []TreeEntry, fn func(e TreeEntry, r io.Reader) error) error {
	var blobs []TreeEntry
	for _, e := range entries {
		if e.Type == "blob" {
			blobs = append(blobs, e)
		}
	}
	if len(blobs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := hostgit.Command(ctx, dir, "cat-file", "--batch")
	var stdin bytes.Buffer
	for _, e := range blobs {
		stdin.WriteString(e.OID + "\n")
	}
	cmd.Stdin = &stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("reading blobs: %w", err)
	}
	err = readBatch(bufio.NewReaderSize(out, 64<<10), blobs, fn)
	if err != nil {
		cancel()
		_ = cmd.Wait()
		return err
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("reading blobs: git cat-file: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func readBatch(r *bufio.Reader, blobs []TreeEntry, fn func(e TreeEntry, r io.Reader) error) error {
	for _, e := range blobs {
		head, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading blob %s: %w", e.Path, err)
		}
		// "<oid> blob <size>\n<content>\n"
		f := strings.Fields(head)
		if len(f) != 3 || f[0] != e.OID || f[1] != "blob" {
			return fmt.Errorf("reading blob %s: unexpected answer %q", e.Path, strings.TrimSpace(head))
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || size != e.Size {
			return fmt.Errorf("reading blob %s: size %q, the tree said %d", e.Path, f[2], e.Size)
		}
		body := io.LimitReader(r, size)
		if err := fn(e, body); err != nil {
			return err
		}
		if _, err := io.Copy(io.Discard, body); err != nil {
			return fmt.Errorf("reading blob %s: %w", e.Path, err)
		}
		if b, err := r.ReadByte(); err != nil || b != '\n' {
			return fmt.Errorf("reading blob %s: the answer does not end where its size says", e.Path)
		}
	}
	return nil
}

// PackCommit packs commit of the host checkout hostDir, for sandboxes whose user is user, the
// way Pack packs a checkout, but from git's objects alone: what a working tree holds (a
// pull request branch checked out for a follow-up, a local edit in `frognano run`'s checkout)
// never enters it. With only nil it holds commit's whole tree and a fresh .git with commit's
// history, HEAD detached at commit. Otherwise it holds just the regular files at the paths in
// only (each as commit has it; a path commit lacks, or that is not a regular file there, is
// left out), and no .git. Symbolic links are packed as links, submodules as empty folders.
//
// The setup container is filled this way: setup runs with network, so it must see exactly the
// bytes its environment's key covers (runner/env).
func PackCommit(ctx context.Context, hostDir, commit, user string, only []string) (*Snapshot, error) {
	return pack(ctx, user, "", func(ctx context.Context, w io.Writer, uid, gid int) error {
		return packCommit(ctx, w, hostDir, commit, only, uid, gid)
	})
}

func packCommit(ctx context.Context, w io.Writer, hostDir, commit string, only []string, uid, gid int) error {
	entries, err := CommitTree(ctx, hostDir, commit)
	if err != nil {
		return fmt.Errorf("packing commit %.12s: %w", commit, err)
	}
	var gitRoot string
	if only == nil {
		fresh, err := freshGitDirAt(ctx, hostDir, commit)
		if err != nil {
			return fmt.Errorf("packing commit %.12s: %w", commit, err)
		}
		defer os.RemoveAll(fresh)
		gitRoot = fresh
	} else {
		want := make(map[string]bool, len(only))
		for _, p := range only {
			want[p] = true
		}
		kept := entries[:0]
		for _, e := range entries {
			if want[e.Path] && e.Regular() {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	tw := tar.NewWriter(bw)
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Name: name + "/", Typeflag: tar.TypeDir, Mode: 0o755, Uid: uid, Gid: gid, Format: tar.FormatPAX})
	}
	if err := dir("."); err != nil {
		return err
	}
	// Parent folders first: git lists a tree depth first, so a folder's entries follow it.
	made := map[string]bool{}
	var parents func(p string) error
	parents = func(p string) error {
		d := path.Dir(p)
		if d == "." || made[d] {
			return nil
		}
		if err := parents(d); err != nil {
			return err
		}
		made[d] = true
		return dir(d)
	}
	for _, e := range entries {
		if err := parents(e.Path); err != nil {
			return err
		}
		if e.Mode == "160000" && !made[e.Path] {
			made[e.Path] = true
			if err := dir(e.Path); err != nil {
				return err
			}
		}
	}
	err = EachBlob(ctx, hostDir, entries, func(e TreeEntry, r io.Reader) error {
		hdr := &tar.Header{Name: e.Path, Uid: uid, Gid: gid, Format: tar.FormatPAX}
		switch e.Mode {
		case "120000":
			target, err := io.ReadAll(io.LimitReader(r, 4096))
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, string(target), 0o777
			return tw.WriteHeader(hdr)
		case "100755":
			hdr.Mode = 0o755
		default:
			hdr.Mode = 0o644
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, e.Size
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := io.CopyN(tw, r, e.Size)
		return err
	})
	if err == nil && gitRoot != "" {
		err = writeTree(tw, gitRoot, ".git", uid, gid)
	}
	if err != nil {
		return fmt.Errorf("packing commit %.12s: %w", commit, err)
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("packing commit %.12s: %w", commit, err)
	}
	return bw.Flush()
}

// errNoCommit is freshGitDirAt's error for a revision that names no commit.
var errNoCommit = errors.New("not a commit")

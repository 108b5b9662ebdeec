package patch

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// PublishedFile is one path whose content or mode the patch changes, as the published tree
// will hold it: what a check of "what will be published" looks at, whole, whatever its type
// or size.
type PublishedFile struct {
	// Path is the file's path in the published tree.
	Path string
	// From is the base path git pairs Path with as a rename (`git diff-tree -M`, git's own
	// similarity rule), "" when Path is not a rename. Base is From's content then.
	From string
	// Mode is Path's mode in the published tree: ModeFile, ModeExecutable or ModeSymlink (a
	// symlink's bytes are its target). BaseMode is the base's mode of From or Path, "" when the
	// base has neither.
	Mode, BaseMode string
	// Bytes is Path's exact content in the published tree, binary or not.
	Bytes []byte
	// Base is the content of From (or of Path when From is "") in the base commit, nil when the
	// base has no such file (a new file). When the patch changes only the mode, or renames
	// without a change, Base and Bytes are the same slice.
	Base []byte
}

// Renamed reports whether the file is a rename of another base path.
func (f PublishedFile) Renamed() bool { return f.From != "" }

// BasePath is the base path whose content Base holds: From for a rename, else Path.
func (f PublishedFile) BasePath() string {
	if f.From != "" {
		return f.From
	}
	return f.Path
}

// MaxFileBytes is the largest file Published reads: GitHub's own limit for one file (100 MB),
// past which the published tree could not be pushed anyway.
const MaxFileBytes = 100 << 20

// FileTooLargeError is a published file, or its base, over MaxFileBytes: Published reads
// neither, so a check that must see every byte refuses the patch instead of skipping the file.
type FileTooLargeError struct {
	Path string
	Size int64
}

func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d bytes (100 MB) a file may have", quote(e.Path), e.Size, MaxFileBytes)
}

// maxReadBatch bounds the blob bytes one `git cat-file --batch` returns at once, so that a
// patch touching many large files is read a few files at a time, never all together.
const maxReadBatch = 64 << 20

// Published applies diff to base in a Scratch (the host's clone is read, never modified, and
// no working tree is used) and calls each, in path order, for every file the published tree
// adds, changes (content or mode) or renames, with its bytes and its base's bytes. Deleted
// paths are not published and are not listed; gitlinks are not files and are skipped
// (CheckTree refuses any gitlink change before anything is published). It stops at the first
// error each returns, and returns it. An *ApplyError means git could not apply diff; a
// *FileTooLargeError that a file or its base is over MaxFileBytes (nothing is read then).
//
// At most one batch of files (about 64 MiB of blobs, or one larger file) is held at a time, so
// a caller that keeps nothing of a file after each returns holds little memory whatever the
// patch touches.
func Published(ctx context.Context, git Git, base string, diff []byte, each func(PublishedFile) error) error {
	sc, err := NewScratch(ctx, git, base)
	if err != nil {
		return err
	}
	defer sc.Close()
	if len(diff) > 0 {
		if err := sc.Apply(ctx, git, diff); err != nil {
			return err
		}
	}
	return sc.Published(ctx, git, base, each)
}

// Published is the package function Published on the tree the Scratch's index holds now (the
// base with whatever was applied to it).
func (s *Scratch) Published(ctx context.Context, git Git, base string, each func(PublishedFile) error) error {
	out, err := git(ctx, s.Env, nil, "write-tree")
	if err != nil {
		return fmt.Errorf("writing the patched tree: %w", err)
	}
	return publishedTree(ctx, git, s.Env, base, strings.TrimSpace(string(out)), each)
}

// publishedTree is the one reader of what a tree publishes: Published and the value check of
// CheckTree (values.go) both call it, so the files a check of the published content reads are
// exactly those the published tree adds, changes or renames, read the same way. env is the
// Scratch's (nil for a tree written into the clone itself).
func publishedTree(ctx context.Context, git Git, env []string, base, tree string, each func(PublishedFile) error) error {
	raw, err := git(ctx, env, nil, "diff-tree", "-r", "-z", "--raw", "-M", "--full-index", base, tree)
	if err != nil {
		return fmt.Errorf("comparing the patched tree with the base: %w", err)
	}
	entries, err := parseRenames(raw)
	if err != nil {
		return fmt.Errorf("comparing the patched tree with the base: %w", err)
	}
	var files []rawEntry
	for _, e := range entries {
		if e.status == 'D' || e.newMode == ModeGitlink || e.newMode == "000000" {
			continue
		}
		files = append(files, e)
	}
	sizes, err := blobSizes(ctx, git, env, files)
	if err != nil {
		return err
	}
	for _, e := range files {
		for _, side := range []struct{ path, oid string }{{e.path, e.newOID}, {cmp.Or(e.from, e.path), e.oldOID}} {
			if n := sizes[side.oid]; n > MaxFileBytes {
				return &FileTooLargeError{Path: side.path, Size: n}
			}
		}
	}
	for _, b := range batches(files, sizes, maxReadBatch) {
		start, end := b[0], b[1]
		var want []string
		for _, e := range files[start:end] {
			want = append(want, e.newOID)
			if e.oldOID != zeroOID(e.oldOID) && e.oldOID != e.newOID {
				want = append(want, e.oldOID)
			}
		}
		blobs, err := readBlobs(ctx, git, env, want)
		if err != nil {
			return err
		}
		for _, e := range files[start:end] {
			f := PublishedFile{Path: e.path, From: e.from, Mode: e.newMode, Bytes: blobs[e.newOID]}
			if e.oldMode != "000000" && e.oldMode != ModeGitlink {
				f.BaseMode, f.Base = e.oldMode, blobs[e.oldOID]
				if f.Base == nil {
					f.Base = []byte{}
				}
			}
			if f.Bytes == nil {
				f.Bytes = []byte{}
			}
			if err := each(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// batches cuts files into runs [start, end) whose blobs (new and base) add up to at most
// limit bytes; a file larger than limit is a batch of its own.
func batches(files []rawEntry, sizes map[string]int64, limit int64) [][2]int {
	var out [][2]int
	for start := 0; start < len(files); {
		end, total := start, int64(0)
		for end < len(files) {
			n := sizes[files[end].newOID]
			if files[end].oldOID != files[end].newOID {
				n += sizes[files[end].oldOID]
			}
			if end > start && total+n > limit {
				break
			}
			total += n
			end++
		}
		out = append(out, [2]int{start, end})
		start = end
	}
	return out
}

// rawEntry is one entry of `git diff-tree -r -z --raw -M`.
type rawEntry struct {
	oldMode, newMode string
	oldOID, newOID   string
	status           byte // A, M, T, D, R
	from, path       string
}

func zeroOID(like string) string { return strings.Repeat("0", len(like)) }

// parseRenames reads `git diff-tree -r -z --raw -M --full-index` output: per entry
// ":OLDMODE NEWMODE OLDOID NEWOID STATUS\0PATH\0", or for a rename or copy
// ":... R090\0SOURCE\0PATH\0".
func parseRenames(out []byte) ([]rawEntry, error) {
	var entries []rawEntry
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		meta := string(fields[i])
		if meta == "" && i == len(fields)-1 {
			break
		}
		parts := strings.Fields(strings.TrimPrefix(meta, ":"))
		if !strings.HasPrefix(meta, ":") || len(parts) != 5 || parts[4] == "" || i+1 >= len(fields) {
			return nil, fmt.Errorf("unexpected diff-tree entry %s", quote(meta))
		}
		e := rawEntry{oldMode: parts[0], newMode: parts[1], oldOID: parts[2], newOID: parts[3], status: parts[4][0]}
		i++
		switch e.status {
		case 'R', 'C':
			if i+1 >= len(fields) {
				return nil, fmt.Errorf("unexpected diff-tree entry %s: no destination", quote(meta))
			}
			e.from, e.path = string(fields[i]), string(fields[i+1])
			i++
			if e.status == 'C' { // -C is not asked for; a copy leaves its source in place
				e.from = ""
				e.oldMode, e.oldOID = "000000", zeroOID(e.oldOID)
				e.status = 'A'
			}
		case 'A', 'M', 'T', 'D':
			e.path = string(fields[i])
		default:
			return nil, fmt.Errorf("unexpected diff-tree status %s", quote(parts[4]))
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// blobSizes asks git for the size of every object the entries name (one cat-file call).
func blobSizes(ctx context.Context, git Git, env []string, files []rawEntry) (map[string]int64, error) {
	sizes := map[string]int64{}
	var ask []string
	for _, e := range files {
		for _, oid := range []string{e.newOID, e.oldOID} {
			if _, ok := sizes[oid]; !ok && oid != zeroOID(oid) {
				sizes[oid] = 0
				ask = append(ask, oid)
			}
		}
	}
	if len(ask) == 0 {
		return sizes, nil
	}
	out, err := git(ctx, env, []byte(strings.Join(ask, "\n")+"\n"), "cat-file", "--batch-check")
	if err != nil {
		return nil, fmt.Errorf("reading the published files' sizes: %w", err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		f := strings.Fields(line) // OID TYPE SIZE
		if len(f) != 3 || f[1] != "blob" {
			return nil, fmt.Errorf("reading the published files' sizes: unexpected answer %s", quote(line))
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("reading the published files' sizes: unexpected answer %s", quote(line))
		}
		sizes[f[0]] = n
	}
	return sizes, nil
}

// readBlobs reads the blobs named by oids with one `git cat-file --batch`.
func readBlobs(ctx context.Context, git Git, env []string, oids []string) (map[string][]byte, error) {
	blobs := make(map[string][]byte, len(oids))
	if len(oids) == 0 {
		return blobs, nil
	}
	data, err := git(ctx, env, []byte(strings.Join(oids, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("reading the published files: %w", err)
	}
	for _, oid := range oids {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return nil, errors.New("reading the published files: short cat-file output")
		}
		f := strings.Fields(string(data[:nl]))
		if len(f) != 3 || f[0] != oid || f[1] != "blob" {
			return nil, fmt.Errorf("reading the published files: unexpected cat-file header %s", quote(string(data[:nl])))
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 || nl+1+size+1 > len(data) {
			return nil, fmt.Errorf("reading the published files: unexpected cat-file header %s", quote(string(data[:nl])))
		}
		blobs[oid] = data[nl+1 : nl+1+size : nl+1+size]
		data = data[nl+1+size+1:]
	}
	return blobs, nil
}

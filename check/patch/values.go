package patch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/frognano/frognano/internal/secretform"
)

// The published-tree check for values frognano keeps secret (Options.Values): what it looks
// at is each file as it will be published, whole and as bytes, never the diff's text. The diff
// carries a binary file as a compressed, base85-encoded literal, in which no value can be
// found; the tree git builds holds the file's bytes, whatever the patch's text looked like.

// maxBatchBytes bounds the blobs read in one `git cat-file --batch`: one bigger file is read
// alone.
const maxBatchBytes = 64 << 20

// ValueError refuses a patch one of whose published files holds a value frognano keeps secret
// (a token, an operator's setup value) in one of the forms secretform knows. Its text names
// each file (with any value in its name masked) and the form, never the value.
type ValueError struct {
	Files []Rejected
}

// ErrHoldsValue is what every *ValueError is (errors.Is): the text frognano shows for it.
var ErrHoldsValue = errors.New("it holds a value frognano keeps secret (a token, or one of the operator's FROGNANO_SETUP_ENV values), and would publish it")

func (e *ValueError) Error() string { return ErrHoldsValue.Error() + ": " + e.List() }

// List names the files and what each holds, at most five: `"a.bin" (holds the value of
// MIRROR_TOKEN, as is); "b.txt" (...)`.
func (e *ValueError) List() string {
	var b strings.Builder
	for i, r := range e.Files {
		if i == 5 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Files)-5)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s)", quote(r.Path), r.Reason)
	}
	return b.String()
}

func (e *ValueError) Is(target error) bool { return target == ErrHoldsValue }

// publishedFiles are the changes that publish a file: added or changed paths with their new
// object, deletions and gitlinks (refused elsewhere) left out.
func publishedFiles(changes []TreeChange) []TreeChange {
	var out []TreeChange
	for _, c := range changes {
		if c.NewMode != "000000" && c.NewMode != ModeGitlink {
			out = append(out, c)
		}
	}
	return out
}

// checkValues reads every file the patched tree publishes (changes against base), whole, and
// returns a *ValueError naming those that hold a form of one of m's secrets, in their bytes
// or in their path. A form the base commit's file at the same path already holds is not the
// patch's doing and is not held against it.
func checkValues(ctx context.Context, git Git, env []string, base string, changes []TreeChange, m *secretform.Matcher) error {
	if m.Empty() {
		return nil
	}
	files := publishedFiles(changes)
	found := map[string]secretform.Match{} // path → what it holds
	err := eachBlob(ctx, git, env, files, func(c TreeChange, data []byte) {
		if f, ok := m.Find(data); ok {
			found[c.Path] = f
		}
	})
	if err != nil {
		return fmt.Errorf("reading the published files to check them for secret values: %w", err)
	}
	var rej []Rejected
	for _, c := range files {
		if f, ok := m.Find([]byte(c.Path)); ok {
			rej = append(rej, Rejected{Path: m.Mask(c.Path), Reason: "its name holds " + f.What()})
			continue
		}
		f, ok := found[c.Path]
		if !ok {
			continue
		}
		held, err := baseHolds(ctx, git, env, base, c.Path, m, f)
		if err != nil {
			return err
		}
		if !held {
			rej = append(rej, Rejected{Path: c.Path, Reason: "holds " + f.What()})
		}
	}
	if len(rej) > 0 {
		return &ValueError{Files: rej}
	}
	return nil
}

// baseHolds reports whether the base commit's file at path holds the form f of the same
// secret: a value the repository already published.
func baseHolds(ctx context.Context, git Git, env []string, base, path string, m *secretform.Matcher, f secretform.Match) (bool, error) {
	out, err := git(ctx, env, nil, "ls-tree", "-z", base, "--", path)
	if err != nil {
		return false, fmt.Errorf("reading %s in the base commit: %w", quote(path), err)
	}
	meta, _, ok := strings.Cut(string(out), "\t")
	fields := strings.Fields(meta)
	if !ok || len(fields) != 3 || fields[1] != "blob" {
		return false, nil
	}
	held := false
	err = eachBlob(ctx, git, env, []TreeChange{{NewObject: fields[2], Path: path}}, func(_ TreeChange, data []byte) {
		for _, g := range m.FindAll(data) {
			held = held || (g.Secret == f.Secret && g.Form == f.Form)
		}
	})
	return held, err
}

// eachBlob calls fn with the bytes of each file's object, read with `git cat-file --batch` in
// batches of at most maxBatchBytes (a bigger blob alone).
func eachBlob(ctx context.Context, git Git, env []string, files []TreeChange, fn func(TreeChange, []byte)) error {
	if len(files) == 0 {
		return nil
	}
	var ids bytes.Buffer
	for _, f := range files {
		ids.WriteString(f.NewObject + "\n")
	}
	out, err := git(ctx, env, ids.Bytes(), "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)")
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(files) {
		return fmt.Errorf("git cat-file listed %d objects for %d files", len(lines), len(files))
	}
	sizes := make([]int64, len(files))
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != files[i].NewObject || f[1] != "blob" {
			return fmt.Errorf("%s is not a blob (%s)", quote(files[i].Path), quote(l))
		}
		if sizes[i], err = strconv.ParseInt(f[2], 10, 64); err != nil {
			return fmt.Errorf("the size of %s: %w", quote(files[i].Path), err)
		}
	}
	for start := 0; start < len(files); {
		end, total := start, int64(0)
		for end < len(files) && (end == start || total+sizes[end] <= maxBatchBytes) {
			total += sizes[end]
			end++
		}
		if err := readBatch(ctx, git, env, files[start:end], sizes[start:end], fn); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// readBatch reads one batch: "<id> blob <size>\n<bytes>\n" per object.
func readBatch(ctx context.Context, git Git, env []string, files []TreeChange, sizes []int64, fn func(TreeChange, []byte)) error {
	var ids bytes.Buffer
	for _, f := range files {
		ids.WriteString(f.NewObject + "\n")
	}
	out, err := git(ctx, env, ids.Bytes(), "cat-file", "--batch")
	if err != nil {
		return err
	}
	for i, f := range files {
		header, rest, ok := bytes.Cut(out, []byte("\n"))
		want := fmt.Sprintf("%s blob %d", f.NewObject, sizes[i])
		if !ok || string(header) != want || int64(len(rest)) < sizes[i]+1 {
			return fmt.Errorf("git cat-file's answer for %s is not %q", quote(f.Path), want)
		}
		fn(f, rest[:sizes[i]])
		out = rest[sizes[i]+1:]
	}
	return nil
}

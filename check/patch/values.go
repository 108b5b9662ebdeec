package patch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/frognano/frognano/internal/secretform"
)

// The published-tree check for values frognano keeps secret (Options.Values): what it looks
// at is each file as it will be published, whole and as bytes, never the diff's text. The diff
// carries a binary file as a compressed, base85-encoded literal, in which no value can be
// found; the tree git builds holds the file's bytes, whatever the patch's text looked like.

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

// checkValues reads every file the patched tree publishes (tree against base), whole, through
// the reader Published uses (publishedTree: the same files, the same bytes), and returns a
// *ValueError naming those that hold a form of one of m's secrets, in their bytes or in their
// path. A form the base file already holds (the same path, or a rename's source) is not the
// patch's doing and is not held against it.
func checkValues(ctx context.Context, git Git, env []string, base, tree string, m *secretform.Matcher) error {
	if m.Empty() {
		return nil
	}
	var rej []Rejected
	err := publishedTree(ctx, git, env, base, tree, func(f PublishedFile) error {
		if found, ok := m.Find([]byte(f.Path)); ok {
			rej = append(rej, Rejected{Path: m.Mask(f.Path), Reason: "its name holds " + found.What()})
			return nil
		}
		if found, ok := notInBase(f.Bytes, f.Base, m); ok {
			rej = append(rej, Rejected{Path: f.Path, Reason: "holds " + found.What()})
		}
		return ctx.Err()
	})
	if err != nil {
		return fmt.Errorf("reading the published files to check them for secret values: %w", err)
	}
	if len(rej) > 0 {
		return &ValueError{Files: rej}
	}
	return nil
}

// notInBase returns the first form of a secret that published holds and base (the base
// commit's file, nil for a new file) does not: a value the repository already published is not
// the patch's doing, but every other form in the file is judged, not only the first one found
// (a form the base held must not hide another value, or another form of the same one, that the
// patch wrote beside it).
func notInBase(published, base []byte, m *secretform.Matcher) (secretform.Match, bool) {
	if base == nil {
		return m.Find(published)
	}
	type held struct {
		secret int
		form   string
	}
	var inBase map[held]bool
	for _, f := range m.FindAll(published) {
		if inBase == nil {
			inBase = map[held]bool{}
			for _, g := range m.FindAll(base) {
				inBase[held{g.Secret, g.Form}] = true
			}
		}
		if !inBase[held{f.Secret, f.Form}] {
			return f, true
		}
	}
	return secretform.Match{}, false
}

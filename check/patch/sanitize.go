package patch

import (
	"fmt"
	"strings"

	"github.com/frognano/frognano/internal/secretform"
)

// DefaultMaxBytes is the largest filtered patch Sanitize hands back (1 MiB) unless
// Options.MaxBytes says otherwise: the one patch size limit, which the runner applies and
// reports.
const DefaultMaxBytes = 1 << 20

// MaxInputBytes is the largest raw diff Sanitize will parse (64 MiB), and so the most the
// runner reads out of the sandbox when it takes the diff. Litter such as node_modules can
// make the raw diff much larger than what is kept.
const MaxInputBytes = 64 << 20

// Reasons a file is dropped from the patch; the rest of the patch is kept.
const (
	DropLitter    = "litter"    // a new file under __pycache__/, node_modules/, *.pyc, ...
	DropWorkflow  = "workflow"  // under .github/workflows/ or .github/actions/
	DropSubmodule = "submodule" // a gitlink (mode 160000): never taken from the sandbox
)

// Options tunes Sanitize. The zero value is the safe default.
type Options struct {
	// AllowWorkflowChanges keeps changes under .github/workflows/ and .github/actions/.
	AllowWorkflowChanges bool
	// MaxBytes caps the filtered patch; 0 means DefaultMaxBytes.
	MaxBytes int64
	// BaseSymlink reports whether path is a symlink in the base commit, and its
	// target. A pure rename or copy carries no mode in git's output, and moving a
	// relative symlink can make it escape, so Sanitize asks the caller (who reads the
	// host's clean clone, e.g. `git ls-tree BASE -- path`). When nil, such renames and
	// copies refuse the patch.
	//
	// The runner never sets it: it takes the diff with --no-renames, so a rename in a
	// run's diff can only be forged, and nil refuses it. It stays for a caller that
	// takes diffs with rename detection; the real-git tests do, to show that moving a
	// symlink cannot make it escape.
	BaseSymlink func(path string) (target string, isLink bool)
	// Values, when set, are the values frognano keeps secret (githubapp.SecretMatcher: the
	// tokens and the operator's setup values): ApplyToBase and CheckTree read every file the
	// patched tree publishes, whole and as bytes, and refuse the patch with a *ValueError
	// when one holds any form of one of them (or its path does), unless the base commit's file
	// at that path already held it. Sanitize does not use it.
	Values *secretform.Matcher
}

// Dropped is a file left out of the patch and why (one of the Drop* reasons).
type Dropped struct {
	Path   string
	Reason string
}

// Rejected is a file that made Sanitize refuse the whole patch, and why.
type Rejected struct {
	Path   string
	Reason string
}

// Checked is what Sanitize kept of a diff.
type Checked struct {
	// Diff is the filtered patch, byte for byte as git wrote those files; empty when
	// nothing is kept, when the patch is too large, or when it was refused.
	Diff []byte
	// Files are the kept files (listed with their line counts even when TooLarge).
	Files    []File
	Dropped  []Dropped
	Rejected []Rejected
	// TooLarge is set when the filtered patch is over MaxBytes; Size is its size.
	TooLarge bool
	Size     int64
}

// RefusedError is returned when a file of the patch could write outside the working
// tree. The whole patch is refused: such a path is never the by-product of an honest
// fix, so it signals tampering, and keeping the rest would hide that.
type RefusedError struct {
	Rejected []Rejected
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	b.WriteString("refusing the patch:")
	for i, r := range e.Rejected {
		if i == 5 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Rejected)-5)
			break
		}
		fmt.Fprintf(&b, " %s (%s);", quote(r.Path), r.Reason)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Sanitize parses an untrusted diff and keeps what may be applied on the host.
//
// It returns an error, and no patch, when the diff is malformed (*ParseError), larger
// than MaxInputBytes, or when any file, kept or not, names a path that is absolute,
// has a "." or ".." or empty component, a backslash, a control character, or a
// component that a filesystem could take for .git (*RefusedError; the same list is in
// Checked.Rejected, and the Checked is returned alongside the error). A kept symlink
// whose target is absolute, escapes the repository, points into .git or cannot be
// read from the diff also refuses the patch, as does any kept file below a symlink
// the patch creates.
//
// Otherwise it drops workflow changes (unless allowed), gitlinks, and new files that
// are build litter. A change to a file the repository already tracks is never litter.
// The guarantee, relied on by the fuzz tests: a non-empty Checked.Diff parses and
// contains no path that fails these rules.
func Sanitize(diff []byte, opt Options) (*Checked, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if len(diff) > MaxInputBytes {
		return nil, fmt.Errorf("sanitizing patch: raw diff is %d bytes, over the %d-byte limit", len(diff), MaxInputBytes)
	}
	p, err := Parse(diff)
	if err != nil {
		return nil, fmt.Errorf("sanitizing patch: %w", err)
	}
	res := &Checked{}
	for _, f := range p.Files {
		for _, name := range names(f) {
			if why := checkPath(name); why != "" {
				res.Rejected = append(res.Rejected, Rejected{Path: name, Reason: why})
			}
		}
	}
	if len(res.Rejected) > 0 {
		return res, &RefusedError{Rejected: res.Rejected}
	}
	var kept []File
	for _, f := range p.Files {
		if why := dropReason(f, opt); why != "" {
			res.Dropped = append(res.Dropped, Dropped{Path: f.Path(), Reason: why})
			continue
		}
		kept = append(kept, f)
	}
	res.Rejected = resolveModes(kept, opt)
	if len(res.Rejected) == 0 {
		res.Rejected = checkLinks(kept)
	}
	if len(res.Rejected) > 0 {
		return res, &RefusedError{Rejected: res.Rejected}
	}
	out := join(kept)
	res.Files = kept
	res.Size = int64(len(out))
	if res.Size > opt.MaxBytes {
		res.TooLarge = true
		return res, nil
	}
	if len(out) > 0 {
		res.Diff = out
	}
	return res, nil
}

func names(f File) []string {
	switch {
	case f.OldPath == "":
		return []string{f.NewPath}
	case f.NewPath == "" || f.NewPath == f.OldPath:
		return []string{f.OldPath}
	}
	return []string{f.OldPath, f.NewPath}
}

func dropReason(f File, opt Options) string {
	switch {
	case !opt.AllowWorkflowChanges && (isWorkflowPath(f.OldPath) || isWorkflowPath(f.NewPath)):
		return DropWorkflow
	case f.OldMode == ModeGitlink || f.NewMode == ModeGitlink:
		return DropSubmodule
	case (f.Status == StatusAdded || f.Status == StatusCopied) && isLitter(f.NewPath):
		return DropLitter
	}
	return ""
}

// resolveModes fills in the mode of pure renames and copies from the base commit.
func resolveModes(files []File, opt Options) []Rejected {
	var rej []Rejected
	for i := range files {
		f := &files[i]
		if (f.Status != StatusRenamed && f.Status != StatusCopied) || f.NewMode != "" {
			continue
		}
		if opt.BaseSymlink == nil {
			rej = append(rej, Rejected{Path: f.NewPath, Reason: "rename without a mode; cannot rule out a symlink"})
			continue
		}
		if target, ok := opt.BaseSymlink(f.OldPath); ok {
			f.OldMode, f.NewMode, f.IsSymlink, f.SymlinkTarget, f.symlinkLines = ModeSymlink, ModeSymlink, true, target, 1
		}
	}
	return rej
}

// checkLinks checks the symlinks among the kept files, and that no kept file lies
// below a path that the patch turns into a symlink (git apply would write through it).
func checkLinks(files []File) []Rejected {
	var rej []Rejected
	links := map[string]bool{}
	for _, f := range files {
		if f.NewPath == "" || f.NewMode != ModeSymlink {
			continue
		}
		links[f.NewPath] = true
		why := ""
		if f.Binary || f.symlinkLines != 1 {
			why = "symlink target not readable from the diff"
		} else {
			why = checkSymlink(f.NewPath, f.SymlinkTarget)
		}
		if why != "" {
			rej = append(rej, Rejected{Path: f.NewPath, Reason: why})
		}
	}
	if len(links) == 0 {
		return rej
	}
	for _, f := range files {
		for _, name := range names(f) {
			for dir := name; ; {
				i := strings.LastIndexByte(dir, '/')
				if i < 0 {
					break
				}
				dir = dir[:i]
				if links[dir] {
					rej = append(rej, Rejected{Path: name, Reason: "path below a symlink the patch creates"})
					break
				}
			}
		}
	}
	return rej
}

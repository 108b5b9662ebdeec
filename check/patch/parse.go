package patch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/frognano/frognano/internal/clip"
)

// File statuses, as git diff's extended headers describe them.
const (
	StatusAdded    = "added"
	StatusModified = "modified"
	StatusDeleted  = "deleted"
	StatusRenamed  = "renamed"
	StatusCopied   = "copied"
	// StatusMode is a change of file mode only, with no content change.
	StatusMode = "mode"
)

// Git file modes that may appear in a diff.
const (
	ModeFile       = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
	ModeGitlink    = "160000"
)

// File is one file's change in a patch. Paths are repository-relative, without git's
// "a/" and "b/" prefixes and unquoted. OldPath is empty for an added file and NewPath
// is empty for a deleted one.
type File struct {
	OldPath, NewPath string
	Status           string
	// OldMode and NewMode are git's six-digit octal modes; empty on the side that
	// does not exist.
	OldMode, NewMode string
	// Binary is true for a "GIT binary patch" change; Added and Deleted are then 0.
	Binary         bool
	Added, Deleted int
	// IsSymlink is true when the new (or, for a deletion, the old) side is a symlink.
	IsSymlink bool
	// SymlinkTarget is the new link target of an added or changed text symlink.
	SymlinkTarget string

	// raw is this file's chunk of the patch, from "diff --git" up to the next one.
	raw []byte
	// symlinkLines counts the lines of the new side of a symlink, which git writes
	// as exactly one line without a trailing newline.
	symlinkLines int
}

// Path returns the path that exists after the change (the old one for a deletion).
func (f File) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Patch is a parsed git diff. It keeps every file's raw bytes so that any subset of
// its files can be written back out unchanged.
type Patch struct {
	Files []File
}

// Bytes re-serializes the patch: the concatenation of every file's original bytes.
func (p *Patch) Bytes() []byte { return join(p.Files) }

func join(files []File) []byte {
	n := 0
	for _, f := range files {
		n += len(f.raw)
	}
	out := make([]byte, 0, n)
	for _, f := range files {
		out = append(out, f.raw...)
	}
	return out
}

// ParseError reports malformed patch input and the 1-based line where it was found.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("parsing patch line %d: %s", e.Line, e.Msg) }

// Parse reads the output of `git diff --binary` (with git's default "a/" and "b/"
// prefixes, no color, no external diff driver). It is strict: anything git would not
// have written, such as text before the first header, unknown extended headers,
// hunks whose line counts do not add up, or "Binary files differ" without data, is a
// *ParseError. An empty input is an empty patch. Parse never panics.
func Parse(diff []byte) (*Patch, error) {
	p := &parser{data: diff}
	patch := &Patch{}
	if len(diff) == 0 {
		return patch, nil
	}
	if diff[len(diff)-1] != '\n' {
		return nil, &ParseError{Line: bytes.Count(diff, []byte{'\n'}) + 1, Msg: "patch does not end with a newline"}
	}
	for !p.eof() {
		start := p.pos
		f, err := p.file()
		if err != nil {
			return nil, err
		}
		f.raw = diff[start:p.pos]
		patch.Files = append(patch.Files, f)
	}
	return patch, nil
}

type parser struct {
	data   []byte
	binary int64 // bytes git would inflate from the binary parts so far (MaxBinaryBytes)
	pos    int   // offset of the current line
	line   int   // 0-based index of the current line
}

func (p *parser) eof() bool { return p.pos >= len(p.data) }

// peek returns the current line without its newline, or "" at the end.
func (p *parser) peek() string {
	if p.eof() {
		return ""
	}
	rest := p.data[p.pos:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		return string(rest[:i])
	}
	return string(rest)
}

func (p *parser) next() {
	rest := p.data[p.pos:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		p.pos += i + 1
	} else {
		p.pos = len(p.data)
	}
	p.line++
}

func (p *parser) errorf(format string, args ...any) error {
	return &ParseError{Line: p.line + 1, Msg: fmt.Sprintf(format, args...)}
}

// header collects what a file's extended header lines said.
type header struct {
	hdrOld, hdrNew       string
	hdrOK                bool
	fromLine, toLine     string // rename/copy from, to
	renamed, copied      bool
	newFile, deletedFile bool
	oldMode, newMode     string // from "old mode"/"new mode"
	fileMode             string // from "new file mode" or "deleted file mode"
	indexMode            string
	minus, plus          string // from "---"/"+++" ("" for /dev/null)
	haveMinus, havePlus  bool
	minusNull, plusNull  bool
}

func (p *parser) file() (File, error) {
	line := p.peek()
	rest, ok := strings.CutPrefix(line, "diff --git ")
	if !ok {
		return File{}, p.errorf("expected a %q header, got %s", "diff --git", quote(line))
	}
	var h header
	var err error
	h.hdrOld, h.hdrNew, h.hdrOK, err = headerNames(rest)
	if err != nil {
		return File{}, p.errorf("reading header names: %v", err)
	}
	p.next()
	if err := p.extendedHeaders(&h); err != nil {
		return File{}, err
	}
	f, err := p.resolve(&h)
	if err != nil {
		return File{}, err
	}
	switch line := p.peek(); {
	case strings.HasPrefix(line, "--- "):
		if err := p.textChange(&h, &f); err != nil {
			return File{}, err
		}
		// The ---/+++ names must agree with everything the headers said.
		if _, err := p.resolve(&h); err != nil {
			return File{}, err
		}
	case line == "GIT binary patch":
		p.next()
		if err := p.binaryChange(); err != nil {
			return File{}, err
		}
		f.Binary = true
	case strings.HasPrefix(line, "Binary files "):
		return File{}, p.errorf("binary change without data (take the diff with --binary)")
	case p.eof() || strings.HasPrefix(line, "diff --git "):
		// A change with no content: mode change, pure rename, empty file.
	default:
		return File{}, p.errorf("unexpected line %s", quote(line))
	}
	if f.Status == StatusModified && !f.Binary && f.Added == 0 && f.Deleted == 0 && f.OldMode != f.NewMode {
		f.Status = StatusMode
	}
	return f, nil
}

func (p *parser) extendedHeaders(h *header) error {
	seen := map[string]bool{}
	for !p.eof() {
		line := p.peek()
		key, val, ok := cutHeader(line)
		if !ok {
			return nil
		}
		if seen[key] {
			return p.errorf("repeated %q header", key)
		}
		seen[key] = true
		var err error
		switch key {
		case "old mode":
			h.oldMode, err = parseMode(val)
		case "new mode":
			h.newMode, err = parseMode(val)
		case "new file mode":
			h.newFile = true
			h.fileMode, err = parseMode(val)
		case "deleted file mode":
			h.deletedFile = true
			h.fileMode, err = parseMode(val)
		case "rename from", "copy from":
			h.fromLine, err = parseName(val)
		case "rename to", "copy to":
			h.toLine, err = parseName(val)
		case "similarity index", "dissimilarity index":
			err = parsePercent(val)
		case "index":
			h.indexMode, err = parseIndex(val)
		}
		if err != nil {
			return p.errorf("reading %q header: %v", key, err)
		}
		switch key {
		case "rename from", "rename to":
			h.renamed = true
		case "copy from", "copy to":
			h.copied = true
		}
		p.next()
	}
	return nil
}

var headerKeys = []string{
	"old mode", "new mode", "deleted file mode", "new file mode", "rename from", "rename to",
	"copy from", "copy to", "similarity index", "dissimilarity index", "index",
}

func cutHeader(line string) (key, val string, ok bool) {
	for _, k := range headerKeys {
		if v, ok := strings.CutPrefix(line, k+" "); ok {
			return k, v, true
		}
	}
	return "", "", false
}

// resolve decides the file's names, status and modes from its headers, and fails when
// two sources of a name disagree: git apply reads names from several places, so every
// one of them must name the same, checked, path.
func (p *parser) resolve(h *header) (File, error) {
	var f File
	if h.newFile && h.deletedFile {
		return f, p.errorf("file is both new and deleted")
	}
	if h.renamed && h.copied {
		return f, p.errorf("file is both renamed and copied")
	}
	if (h.renamed || h.copied) && (h.fromLine == "" || h.toLine == "") {
		return f, p.errorf("rename or copy without both names")
	}
	if (h.renamed || h.copied) && (h.newFile || h.deletedFile) {
		return f, p.errorf("rename or copy of a new or deleted file")
	}
	if (h.oldMode == "") != (h.newMode == "") {
		return f, p.errorf("%q without %q", "old mode", "new mode")
	}
	if h.oldMode != "" && (h.newFile || h.deletedFile) {
		return f, p.errorf("mode change on a new or deleted file")
	}
	oldSrc := []string{}
	newSrc := []string{}
	if h.hdrOK {
		oldSrc = append(oldSrc, h.hdrOld)
		newSrc = append(newSrc, h.hdrNew)
	}
	if h.renamed || h.copied {
		oldSrc = append(oldSrc, h.fromLine)
		newSrc = append(newSrc, h.toLine)
	}
	if h.haveMinus && !h.minusNull {
		oldSrc = append(oldSrc, h.minus)
	}
	if h.havePlus && !h.plusNull {
		newSrc = append(newSrc, h.plus)
	}
	oldName, err := agree(oldSrc)
	if err != nil {
		return f, p.errorf("old file name: %v", err)
	}
	newName, err := agree(newSrc)
	if err != nil {
		return f, p.errorf("new file name: %v", err)
	}
	if !h.renamed && !h.copied && oldName != "" && newName != "" && oldName != newName {
		return f, p.errorf("old and new names differ without a rename or copy")
	}
	if oldName == "" {
		oldName = newName
	}
	if newName == "" {
		newName = oldName
	}
	if oldName == "" {
		return f, p.errorf("cannot tell the file name (ambiguous header and no other name)")
	}
	if h.haveMinus && h.minusNull != h.newFile {
		return f, p.errorf("%q does not match the file's new-file header", "--- /dev/null")
	}
	if h.havePlus && h.plusNull != h.deletedFile {
		return f, p.errorf("%q does not match the file's deleted-file header", "+++ /dev/null")
	}
	f.OldPath, f.NewPath = oldName, newName
	switch {
	case h.newFile:
		f.Status, f.OldPath, f.NewMode = StatusAdded, "", h.fileMode
	case h.deletedFile:
		f.Status, f.NewPath, f.OldMode = StatusDeleted, "", h.fileMode
	default:
		f.OldMode, f.NewMode = h.indexMode, h.indexMode
		if h.oldMode != "" {
			f.OldMode, f.NewMode = h.oldMode, h.newMode
		}
		switch {
		case h.renamed:
			f.Status = StatusRenamed
		case h.copied:
			f.Status = StatusCopied
		default:
			f.Status = StatusModified
		}
	}
	if h.indexMode != "" && (h.newFile || h.deletedFile || h.oldMode != "") {
		return f, p.errorf("index line carries a mode that other headers already give")
	}
	f.IsSymlink = f.NewMode == ModeSymlink || (f.Status == StatusDeleted && f.OldMode == ModeSymlink)
	return f, nil
}

func agree(names []string) (string, error) {
	if len(names) == 0 {
		return "", nil
	}
	for _, n := range names[1:] {
		if n != names[0] {
			return "", fmt.Errorf("%s and %s disagree", strconv.Quote(names[0]), strconv.Quote(n))
		}
	}
	if names[0] == "" {
		return "", fmt.Errorf("empty name")
	}
	return names[0], nil
}

func parseMode(s string) (string, error) {
	switch s {
	case ModeFile, ModeExecutable, ModeSymlink, ModeGitlink:
		return s, nil
	}
	return "", fmt.Errorf("unsupported mode %s", quote(s))
}

func parsePercent(s string) error {
	n, ok := strings.CutSuffix(s, "%")
	if !ok {
		return fmt.Errorf("no %% sign in %s", quote(s))
	}
	v, err := strconv.Atoi(n)
	if err != nil || v < 0 || v > 100 || n != strconv.Itoa(v) {
		return fmt.Errorf("bad percentage %s", quote(s))
	}
	return nil
}

// parseIndex checks "index OLD..NEW[ MODE]" and returns MODE.
func parseIndex(s string) (string, error) {
	ids, mode, hasMode := strings.Cut(s, " ")
	a, b, ok := strings.Cut(ids, "..")
	if !ok || !isHex(a) || !isHex(b) {
		return "", fmt.Errorf("bad object ids %s", quote(ids))
	}
	if !hasMode {
		return "", nil
	}
	return parseMode(mode)
}

func isHex(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// quote quotes at most 80 bytes of untrusted text for an error message, never half a
// character (clip.Bytes).
func quote(s string) string {
	return strconv.Quote(clip.Bytes(s, 80))
}

package eval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits on a task file, which is untrusted input.
const (
	// MaxLineBytes bounds one line of a task file (a task with a large test patch).
	MaxLineBytes = 8 << 20
	// MaxTests bounds FAIL_TO_PASS plus PASS_TO_PASS of one task.
	MaxTests = 10_000
	maxIDLen = 256
)

// Task is one line of a task file: SWE-bench's fields, and our optional ones.
type Task struct {
	InstanceID       string   `json:"instance_id"`
	Repo             string   `json:"repo"`
	BaseCommit       string   `json:"base_commit"`
	ProblemStatement string   `json:"problem_statement"`
	TestPatch        string   `json:"test_patch"`
	FailToPass       []string `json:"FAIL_TO_PASS"`
	PassToPass       []string `json:"PASS_TO_PASS"`

	// Ours, all optional. RepoPath is a local clone, a relative path without `..` that
	// resolves inside the task file's folder or Options.Repos; RepoURL a clone URL the host
	// can reach (https:// or ssh://; http://, git:// and local addresses only as Options.Allow
	// says); without either the repository is looked up under Options.Repos. TestCmd runs
	// the tests instead of the repository's own command; Image is the base sandbox image,
	// one of those Options.Allow lets a task name.
	RepoPath string `json:"repo_path,omitempty"`
	RepoURL  string `json:"repo_url,omitempty"`
	TestCmd  string `json:"test_cmd,omitempty"`
	Image    string `json:"image,omitempty"`
	// ReferencePatch is the fix a mined task came from (Mine): kept for the reader, never
	// shown to the model and never applied by Run.
	ReferencePatch string `json:"reference_patch,omitempty"`

	Line int `json:"-"` // the line of the task file it came from
}

// LineError is a task file's line that could not be used; the other lines still run.
type LineError struct {
	Line int
	// ID is the task's instance_id when the line names a usable one ("" otherwise): a task
	// refused for one of its fields (a *FieldError) is named by it.
	ID  string
	Err error
}

func (e *LineError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("line %d, task %q: %v", e.Line, e.ID, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// FieldError is a field of a task that frognano refuses to use: the whole task is refused,
// and nothing of it is used (no clone, no checkout, no sandbox).
type FieldError struct {
	Field string // the field's name in the task file: "image", "repo_path", "repo_url", ...
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// rawTask accepts FAIL_TO_PASS and PASS_TO_PASS as a list or, as SWE-bench's published files
// hold them, as a string holding a JSON list.
type rawTask struct {
	Task
	FailToPass stringList `json:"FAIL_TO_PASS"`
	PassToPass stringList `json:"PASS_TO_PASS"`
}

type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("not a list of test ids")
	}
	*l = list
	return nil
}

var (
	commitRe = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
	repoRe   = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	// urlRe is the clone URLs a task may give: no other transport (ext::, fd::, a local
	// path that git would read as options) reaches git. Which of these four schemes and
	// which hosts a task may use is the operator's (Allow, checkURL).
	urlRe = regexp.MustCompile(`^(https?|ssh|git)://[A-Za-z0-9._~%@:\[\]-]+(/[^\s]*)?$`)
)

// ParseTask reads one line of a task file. It returns an error saying what is wrong with a
// line that cannot be used; unknown fields are ignored.
func ParseTask(line []byte) (Task, error) {
	t, _, err := parseTask(line)
	return t, err
}

// parseTask is ParseTask that also returns, for a refused line, the instance_id it names
// when that id is one a task could have ("" otherwise), so that the refusal can name it.
func parseTask(line []byte) (Task, string, error) {
	var raw rawTask
	if err := json.Unmarshal(line, &raw); err != nil {
		return Task{}, "", fmt.Errorf("not a JSON object: %v", shortJSONError(err))
	}
	t := raw.Task
	t.FailToPass, t.PassToPass = raw.FailToPass, raw.PassToPass
	if err := t.check(); err != nil {
		id := ""
		if validID(t.InstanceID) {
			id = t.InstanceID
		}
		return Task{}, id, err
	}
	return t, "", nil
}

func validID(id string) bool {
	return strings.TrimSpace(id) != "" && len(id) <= maxIDLen && utf8.ValidString(id) && !hasControl(id)
}

func shortJSONError(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200]
	}
	return strings.ToValidUTF8(s, "?")
}

func (t *Task) check() error {
	var missing []string
	for name, v := range map[string]string{"instance_id": t.InstanceID, "base_commit": t.BaseCommit, "problem_statement": t.ProblemStatement, "test_patch": t.TestPatch} {
		if strings.TrimSpace(v) == "" {
			missing = append(missing, name)
		}
	}
	if len(t.FailToPass) == 0 {
		missing = append(missing, "FAIL_TO_PASS")
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	switch {
	case !validID(t.InstanceID):
		return fieldErr("instance_id", "too long or holds control characters")
	case !commitRe.MatchString(t.BaseCommit):
		return fieldErr("base_commit", "not a commit id (7 to 64 lowercase hex digits)")
	case t.Repo != "" && (!repoRe.MatchString(t.Repo) || slices.ContainsFunc(strings.Split(t.Repo, "/"), func(s string) bool { return strings.Trim(s, ".") == "" })):
		return fieldErr("repo", `not "owner/name"`)
	case len(t.FailToPass)+len(t.PassToPass) > MaxTests:
		return fmt.Errorf("more than %d test ids", MaxTests)
	case t.RepoURL != "" && strings.HasPrefix(t.RepoURL, "-"):
		return fieldErr("repo_url", "starts with '-'")
	case t.RepoPath != "" && strings.HasPrefix(t.RepoPath, "-"):
		return fieldErr("repo_path", "starts with '-'")
	case !utf8.ValidString(t.TestPatch):
		return fieldErr("test_patch", "not UTF-8 text")
	case t.Image != "" && (len(t.Image) > 255 || !imageRe.MatchString(t.Image)):
		return fieldErr("image", "not an image name")
	}
	if t.RepoPath != "" {
		if err := checkRepoPathSyntax(t.RepoPath); err != nil {
			return err
		}
	}
	if t.RepoURL != "" {
		if _, err := parseRepoURL(t.RepoURL); err != nil {
			return err
		}
	}
	for _, id := range append(append([]string{}, t.FailToPass...), t.PassToPass...) {
		if strings.TrimSpace(id) == "" || len(id) > 1024 || hasControl(id) {
			return errors.New("a test id is empty, too long or holds control characters")
		}
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// ParseTasks reads a task file: JSON Lines, blank lines skipped. Each unusable line is a
// *LineError in errs and the others are returned; a repeated instance_id is an error of its
// later line. err is set only when the file cannot be read at all.
func ParseTasks(r io.Reader) (tasks []Task, errs []*LineError, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes)
	seen := map[string]int{}
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		t, id, perr := parseTask(line)
		if perr == nil {
			if first, dup := seen[t.InstanceID]; dup {
				perr = fmt.Errorf("instance_id repeats line %d's", first)
			}
		}
		if perr != nil {
			errs = append(errs, &LineError{Line: n, ID: id, Err: perr})
			continue
		}
		t.Line = n
		seen[t.InstanceID] = n
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return tasks, append(errs, &LineError{Line: n + 1, Err: fmt.Errorf("longer than %d MiB; this line and the rest of the file were not read", MaxLineBytes>>20)}), nil
		}
		return tasks, errs, fmt.Errorf("reading the task file: %w", err)
	}
	return tasks, errs, nil
}

// Hash identifies what a task asks, so that a resumed evaluation reruns a task whose line
// changed under the same instance_id.
func (t Task) Hash() string {
	b, _ := json.Marshal(t)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// folderRe is what a task's folder name keeps of its instance_id.
var folderRe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Folder is the name of the task's folder under the output folder: the instance_id made safe
// as a file name, with a short hash of it when that changed anything, so two ids never share.
func Folder(instanceID string) string {
	safe := strings.Trim(folderRe.ReplaceAllString(instanceID, "_"), ".")
	if len(safe) > 80 {
		safe = safe[:80]
	}
	if safe == instanceID && safe != "" {
		return safe
	}
	sum := sha256.Sum256([]byte(instanceID))
	return safe + "-" + hex.EncodeToString(sum[:4])
}

// TaskLine is t as one line of a task file.
func TaskLine(t Task) (string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("encoding task %s: %w", t.InstanceID, err)
	}
	return string(b), nil
}

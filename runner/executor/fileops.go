package executor

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"
)

// argPath is the reference's _path: the named argument, or "path" when it is missing or
// falsy, resolved against the working directory.
func argPath(cwd string, args *pyDict, key string) (string, error) {
	v, _ := args.get(key)
	if !pyTruthy(v) {
		v, _ = args.get("path")
	}
	if !pyTruthy(v) {
		return "", pyError("ValueError", key+" is required")
	}
	return resolveArg(cwd, v)
}

// optionalInt is the reference's _optional_int: None and "" mean the default.
func optionalInt(args *pyDict, key string, def int64) (int64, error) {
	v, _ := args.get(key)
	if v == nil || v == "" {
		return def, nil
	}
	return pyIntValue(v)
}

// truthyArg is the reference's _truthy, which accepts true/"true"/"1"/"yes"/"on" (any case,
// surrounding space ignored), and the integer 1 through str(1) == "1".
func truthyArg(v any) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	s := ""
	if pyTruthy(v) {
		s = pyStr(v)
	}
	switch pyLower(pyStrip(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// readText is Path.read_text(encoding="utf-8", errors="replace"): invalid bytes become
// U+FFFD and universal newlines turn "\r\n" and "\r" into "\n".
func readText(path string) (string, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return "", nulError
	}
	data, err := os.ReadFile(path)
	if err != nil {
		// open() names the file, and so does the directory check right after it; a read
		// that fails later (EIO) does not.
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Op == "read" && !errors.Is(err, syscall.EISDIR) {
			return "", osErrorNoFile(err)
		}
		return "", osError(err, path)
	}
	return translateNewlines(decodeReplace(data)), nil
}

// writeText is Path.write_text(text, encoding="utf-8") on Linux: bytes as given, mode
// 0666 before umask, truncating an existing file. Only open() names the file in its error;
// the buffered write and the flush at close do not, and empty text writes nothing at all
// (so it succeeds even on a full device).
func writeText(path, text string) error {
	if strings.IndexByte(path, 0) >= 0 {
		return nulError
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return osError(err, path)
	}
	if text != "" {
		if _, err := f.Write([]byte(text)); err != nil {
			f.Close()
			return osErrorNoFile(err)
		}
	}
	if err := f.Close(); err != nil {
		return osErrorNoFile(err)
	}
	return nil
}

// mkdirParents is Path.mkdir(parents=True, exist_ok=True), including its quirk that an
// existing non-directory is reported by the first mkdir that meets it.
func mkdirParents(dir string) error {
	if strings.IndexByte(dir, 0) >= 0 {
		return nulError
	}
	err := syscall.Mkdir(dir, 0o777)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOENT) {
		parent := parentPath(dir)
		if parent == dir {
			return osError(err, dir)
		}
		if err := mkdirParents(parent); err != nil {
			return err
		}
		err = syscall.Mkdir(dir, 0o777)
		if err == nil {
			return nil
		}
	}
	if fi, statErr := os.Stat(dir); statErr == nil && fi.IsDir() {
		return nil
	}
	return osError(err, dir)
}

func toolRead(cwd string, args *pyDict) (string, error) {
	path, err := argPath(cwd, args, "file_path")
	if err != nil {
		return "", err
	}
	text, err := readText(path)
	if err != nil {
		return "", err
	}
	lines := splitLines(text)
	offset, err := optionalInt(args, "offset", 1)
	if err != nil {
		return "", err
	}
	offset = max(1, offset)
	limit, err := optionalInt(args, "limit", 0)
	if err != nil {
		return "", err
	}
	n := int64(len(lines))
	end := n
	if limit > 0 {
		end = min(n, offset-1+limit)
	}
	var b strings.Builder
	for i := offset - 1; i < end; i++ {
		if i > offset-1 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d. %s", i+1, lines[i])
	}
	shown, err := display(cwd, path)
	if err != nil {
		return "", err
	}
	return truncateChars(shown+"\n"+b.String(), readOutputChars), nil
}

func toolWrite(cwd string, args *pyDict) (string, error) {
	path, err := argPath(cwd, args, "file_path")
	if err != nil {
		return "", err
	}
	content := ""
	if v, ok := args.get("content"); ok {
		content = pyStr(v) // str(None) is "None", as in the reference
	}
	if err := mkdirParents(parentPath(path)); err != nil {
		return "", err
	}
	if err := writeText(path, content); err != nil {
		return "", err
	}
	shown, err := display(cwd, path)
	if err != nil {
		return "", err
	}
	// The reference says "bytes" but counts characters: len() of a Python str.
	return fmt.Sprintf("Wrote %s (%d bytes).", shown, utf8.RuneCountInString(content)), nil
}

func toolEdit(cwd string, args *pyDict) (string, error) {
	path, err := argPath(cwd, args, "file_path")
	if err != nil {
		return "", err
	}
	oldString, newString := falsyEmptyStr(args, "old_string"), falsyEmptyStr(args, "new_string")
	if oldString == "" {
		return "", pyError("ValueError", "old_string must be non-empty")
	}
	// Mirrored on purpose: the reference decodes with errors="replace" and universal
	// newlines, so an edited file is written back with U+FFFD for invalid bytes and "\n"
	// line endings (a CRLF file becomes LF).
	text, err := readText(path)
	if err != nil {
		return "", err
	}
	count := strings.Count(text, oldString)
	v, _ := args.get("replace_all")
	replaceAll := truthyArg(v)
	switch {
	case count == 0:
		return "", pyError("ValueError", "old_string was not found")
	case count != 1 && !replaceAll:
		return "", pyError("ValueError", fmt.Sprintf("old_string matched %d times; set replace_all=true or use a more specific old_string", count))
	}
	changed := 1
	if replaceAll {
		text = strings.ReplaceAll(text, oldString, newString)
		changed = count
	} else {
		text = strings.Replace(text, oldString, newString, 1)
	}
	if err := writeText(path, text); err != nil {
		return "", err
	}
	shown, err := display(cwd, path)
	if err != nil {
		return "", err
	}
	suffix := "s"
	if changed == 1 {
		suffix = ""
	}
	return fmt.Sprintf("Edited %s (%d replacement%s).", shown, changed, suffix), nil
}

// falsyEmptyStr is str(arguments.get(key) or "").
func falsyEmptyStr(args *pyDict, key string) string {
	v, _ := args.get(key)
	if !pyTruthy(v) {
		return ""
	}
	return pyStr(v)
}

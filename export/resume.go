package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ResumeError says why an existing records file cannot be continued; nothing was written.
type ResumeError struct{ msg string }

func (e *ResumeError) Error() string { return e.msg }

// resumeAt is where an export continues: the whole pairs of lines already written.
type resumeAt struct {
	pairs          int   // whole pairs of lines kept
	lastID         int64 // the run id of the last pair; 0 for none
	recEnd, labEnd int64 // the files' lengths that keep them
}

// resumePoint reads the records file out and its labels file labels, as an earlier export
// left them (maybe killed in the middle of a line), and says what to keep: the first pairs
// lines of each, where a line is whole when it ends in a newline and, for the last kept one,
// parses. A torn last line is dropped (and written again); a records file of another format is
// refused.
func resumePoint(out, labels, format string) (resumeAt, error) {
	labEnds, labIDs, err := labelLines(labels)
	if err != nil {
		return resumeAt{}, err
	}
	recEnds, err := lineEnds(out, len(labEnds))
	if err != nil {
		return resumeAt{}, err
	}
	k := min(len(labEnds), len(recEnds))
	for ; k > 0; k-- {
		start := int64(0)
		if k > 1 {
			start = recEnds[k-2]
		}
		line, err := readAt(out, start, recEnds[k-1]-start)
		if err != nil {
			return resumeAt{}, err
		}
		got, ok := formatOf(line)
		if !ok {
			continue // a line that ends in a newline but is not a whole record
		}
		if got != format {
			return resumeAt{}, &ResumeError{fmt.Sprintf("%s holds %s records: continue it with --format %s, or export to another file", out, got, got)}
		}
		break
	}
	if k == 0 {
		return resumeAt{}, nil
	}
	return resumeAt{pairs: k, lastID: labIDs[k-1], recEnd: recEnds[k-1], labEnd: labEnds[k-1]}, nil
}

// formatOf says which format a record line is in; ok is false when it is not a record.
func formatOf(line []byte) (string, bool) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(line, &keys) != nil {
		return "", false
	}
	if _, ok := keys["trajectory_format"]; ok {
		return FormatLeaf, true
	}
	if _, ok := keys["messages"]; ok && len(keys) == 2 {
		if _, ok := keys["tools"]; ok {
			return FormatChat, true
		}
	}
	return "", false
}

// labelLines returns the end of each whole line of the labels file and its run id, up to the
// first line that is torn or not labels. A missing file has none.
func labelLines(path string) (ends []int64, ids []int64, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	off := int64(0)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		var l struct {
			RunID *int64 `json:"run_id"`
		}
		if json.Unmarshal(b[:i], &l) != nil || l.RunID == nil {
			break
		}
		off += int64(i + 1)
		ends, ids = append(ends, off), append(ids, *l.RunID)
		b = b[i+1:]
	}
	return ends, ids, nil
}

// lineEnds returns the end of each of the first max whole lines of path (fewer when it has
// fewer). A missing file has none.
func lineEnds(path string, max int) ([]int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	var ends []int64
	r := bufio.NewReaderSize(f, 1<<20)
	off := int64(0)
	for len(ends) < max {
		chunk, err := r.ReadSlice('\n')
		off += int64(len(chunk))
		if err == nil {
			ends = append(ends, off)
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return ends, nil
}

func readAt(path string, off, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

// openAt opens path for appending after cutting it to size bytes (creating it when missing).
func openAt(path string, size int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := f.Chmod(0o600); err != nil { // an export holds what the runs saw: its owner's alone
		f.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("cutting %s to its last whole record: %w", path, err)
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return f, nil
}

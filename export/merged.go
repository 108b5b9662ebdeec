package export

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Merged is a pull request an export labels as merged, as `frognano eval tasks --from-export`
// makes a task of it: its merge commit (whose first parent is the base it merged into) and the
// issue as the model was given it.
type Merged struct {
	Repository  string
	PullRequest int
	RunID       int64  // the run whose record gave the statement
	MergeCommit string // the merge commit
	// Statement is the task of that run's record: the issue's title and text as frognano gave
	// them to the model (hidden text removed, redacted), without the repository's instructions
	// that the runner appends (an evaluation's runner appends them again).
	Statement string
}

// instructionsMark starts what runner.withInstructions appends to a task: a blank line, then
// "Repository instructions (AGENTS.md):" or "(.frognano/instructions.md):".
const instructionsMark = "\n\nRepository instructions ("

// MergedPullRequests reads the export whose records file is records (either format) and its
// labels, and returns each merged pull request with a merge commit once, in the order of the
// first record of it: an issue run's record when there is one (its task is the issue; a
// follow-up's is the request), else the first.
func MergedPullRequests(records string) ([]Merged, error) {
	rf, err := os.Open(records)
	if err != nil {
		return nil, fmt.Errorf("reading the export: %w", err)
	}
	defer rf.Close()
	lf, err := os.Open(records + LabelsSuffix)
	if err != nil {
		return nil, fmt.Errorf("reading the export's labels: %w", err)
	}
	defer lf.Close()
	rr, lr := bufio.NewReaderSize(rf, 1<<20), bufio.NewReaderSize(lf, 64<<10)
	var out []Merged
	index := map[string]int{}      // repository#number → its place in out
	fromIssue := map[string]bool{} // its statement is an issue run's
	for n := 1; ; n++ {
		rec, rerr := rr.ReadBytes('\n')
		lab, lerr := lr.ReadBytes('\n')
		if errors.Is(rerr, io.EOF) || errors.Is(lerr, io.EOF) {
			break // a torn last line is not a record
		}
		if rerr != nil || lerr != nil {
			return nil, fmt.Errorf("reading the export: %w", errors.Join(rerr, lerr))
		}
		var l Labels
		if err := json.Unmarshal(lab, &l); err != nil {
			return nil, fmt.Errorf("%s, line %d: %w", records+LabelsSuffix, n, err)
		}
		o := l.Outcome
		if o == nil || o.State != "merged" || o.MergeCommit == "" || l.PullRequest == nil {
			continue
		}
		key := fmt.Sprintf("%s#%d", l.Repository, *l.PullRequest)
		i, seen := index[key]
		if seen && (fromIssue[key] || l.Kind != "issue") {
			continue
		}
		var r struct {
			Messages []struct {
				Role    string  `json:"role"`
				Content *string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(rec, &r); err != nil {
			return nil, fmt.Errorf("%s, line %d: %w", records, n, err)
		}
		statement := ""
		for _, m := range r.Messages {
			if m.Role == "user" && m.Content != nil {
				statement, _, _ = strings.Cut(*m.Content, instructionsMark)
				statement = strings.TrimSpace(statement)
				break
			}
		}
		m := Merged{Repository: l.Repository, PullRequest: *l.PullRequest, RunID: l.RunID, MergeCommit: o.MergeCommit, Statement: statement}
		if seen {
			out[i] = m
		} else {
			index[key] = len(out)
			out = append(out, m)
		}
		fromIssue[key] = l.Kind == "issue"
	}
	return out, nil
}

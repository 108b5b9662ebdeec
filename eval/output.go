package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/runner"
)

// Record is one task's result: a line of results.jsonl, and result.json in its folder.
type Record struct {
	InstanceID string `json:"instance_id"`
	Status     string `json:"status"` // StatusResolved, StatusUnresolved or StatusError
	Resolved   bool   `json:"resolved"`
	// Tests is each FAIL_TO_PASS and PASS_TO_PASS id's outcome; nil when they did not run.
	Tests            *Score  `json:"tests,omitempty"`
	TestCommand      string  `json:"test_command,omitempty"`
	Steps            int     `json:"steps"` // the chosen attempt's; tokens and seconds are every attempt's
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	ModelSeconds     float64 `json:"model_seconds"`
	ToolsSeconds     float64 `json:"tools_seconds"`
	TestsSeconds     float64 `json:"tests_seconds"` // the run's own before/after and the task's tests
	WallSeconds      float64 `json:"wall_seconds"`
	ExitReason       string  `json:"exit_reason,omitempty"`
	PatchBytes       int     `json:"patch_bytes"`
	Error            string  `json:"error,omitempty"`
	Model            string  `json:"model,omitempty"`
	// Final is false for an error a resumed evaluation retries (Docker failed, the repository
	// could not be found); a final record is kept.
	Final    bool   `json:"final"`
	TaskHash string `json:"task_hash"`

	ModelPatch string `json:"model_patch,omitempty"` // result.json only
	Line       int    `json:"-"`
}

func (r *Record) fromRun(res *runner.Result) {
	r.ExitReason = res.ExitReason()
	r.TestsSeconds = res.TestTime().Seconds()
	if l := res.Leaf; l != nil {
		r.Steps = len(l.Steps)
	}
	// Tokens and time are every attempt's: what the task cost, not only the chosen attempt.
	runs := []*runner.Result{res}
	if res.Attempts != nil {
		runs = runs[:0]
		for _, a := range res.Attempts.Attempts {
			if a.Result != nil {
				runs = append(runs, a.Result)
			}
		}
	}
	for _, x := range runs {
		if l := x.Leaf; l != nil {
			r.PromptTokens += l.PromptTokens
			r.CompletionTokens += l.CompletionTokens
			r.ModelSeconds += l.ModelTime.Seconds()
			r.ToolsSeconds += l.ToolTime.Seconds()
		}
	}
	r.PatchBytes = len(res.PatchBytes())
}

// line is the task's progress line.
func (r *Record) line() string {
	s := fmt.Sprintf("%s: %s", visible(r.InstanceID), r.Status)
	if r.Tests != nil {
		f, p := passCount(r.Tests.FailToPass), passCount(r.Tests.PassToPass)
		s += fmt.Sprintf(" (FAIL_TO_PASS %d/%d, PASS_TO_PASS %d/%d)", f, len(r.Tests.FailToPass), p, len(r.Tests.PassToPass))
	}
	s += fmt.Sprintf(", %d steps, %.0fs", r.Steps, r.WallSeconds)
	if r.Error != "" {
		s += ": " + visible(clipText(r.Error, 300))
	}
	return s
}

func passCount(m map[string]string) int {
	n := 0
	for _, o := range m {
		if o == OutcomePass {
			n++
		}
	}
	return n
}

func visible(s string) string { return report.Visible(s) }

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// writer keeps Out's files up to date as tasks finish.
type writer struct {
	opt     Options
	tasks   []Task
	bad     []*LineError
	mu      sync.Mutex
	records []*Record
}

func (w *writer) progress(line string) {
	if w.opt.Progress != nil {
		w.opt.Progress(line)
	}
}

// finish saves task i's record in its folder and rewrites the summary files.
func (w *writer) finish(i int, rec *Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	folder := filepath.Join(w.opt.Out, Folder(rec.InstanceID))
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(folder, "result.json"), append(b, '\n')); err != nil {
		return err
	}
	w.mu.Lock()
	w.records[i] = rec
	w.mu.Unlock()
	return w.flush()
}

// flush rewrites predictions.jsonl, results.jsonl and report.md from the records so far.
func (w *writer) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var preds, results bytes.Buffer
	var done []*Record
	for _, r := range w.records {
		if r == nil {
			continue
		}
		done = append(done, r)
		p, _ := json.Marshal(map[string]string{"instance_id": r.InstanceID, "model_name_or_path": r.Model, "model_patch": r.ModelPatch})
		preds.Write(append(p, '\n'))
		c := *r
		c.ModelPatch = ""
		line, _ := json.Marshal(c)
		results.Write(append(line, '\n'))
	}
	files := map[string][]byte{
		"predictions.jsonl": preds.Bytes(),
		"results.jsonl":     results.Bytes(),
		"report.md":         []byte(Report(done, len(w.tasks), w.bad)),
	}
	for name, data := range files {
		if err := writeAtomic(filepath.Join(w.opt.Out, name), data); err != nil {
			return err
		}
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// Rate is an evaluation's resolve rate: resolved of scored (errors are counted apart) with its
// 95% Wilson interval.
type Rate struct {
	Resolved, Scored, Errors int
	Lo, Hi                   float64
}

// RateOf counts records.
func RateOf(records []*Record) Rate {
	var r Rate
	for _, rec := range records {
		switch rec.Status {
		case StatusResolved:
			r.Resolved++
			r.Scored++
		case StatusUnresolved:
			r.Scored++
		default:
			r.Errors++
		}
	}
	r.Lo, r.Hi = Wilson(r.Resolved, r.Scored)
	return r
}

func (r Rate) String() string {
	if r.Scored == 0 {
		return "no task was scored"
	}
	return fmt.Sprintf("%d of %d resolved: %.1f%% (95%% interval %.1f%% to %.1f%%)",
		r.Resolved, r.Scored, 100*float64(r.Resolved)/float64(r.Scored), 100*r.Lo, 100*r.Hi)
}

// Report renders report.md: the resolve rate with its interval, errors apart, and a row per
// task. Every text from a task file, the model or the sandbox is an inert code span.
func Report(records []*Record, total int, bad []*LineError) string {
	var b strings.Builder
	rate := RateOf(records)
	b.WriteString("# frognano eval\n\n")
	fmt.Fprintf(&b, "**Resolve rate: %s.**\n\n", rate)
	fmt.Fprintf(&b, "- Tasks in the file: %d (%d finished, %d not run or not finished)\n", total, len(records), total-len(records))
	fmt.Fprintf(&b, "- Errors, counted apart (not in the rate): %d\n", rate.Errors)
	if len(bad) > 0 {
		fmt.Fprintf(&b, "- Lines of the task file that were not used: %d\n", len(bad))
	}
	b.WriteString("\nThe interval is the 95% Wilson score interval: with this many tasks, the model's true rate on tasks like these lies in it with 95% confidence. Compare two evaluations with `frognano eval compare`.\n\n")
	b.WriteString("| Task | Status | FAIL_TO_PASS | PASS_TO_PASS | Steps | Tokens | Exit | Error |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range records {
		f2p, p2p := "–", "–"
		if r.Tests != nil {
			f2p = fmt.Sprintf("%d/%d", passCount(r.Tests.FailToPass), len(r.Tests.FailToPass))
			p2p = fmt.Sprintf("%d/%d", passCount(r.Tests.PassToPass), len(r.Tests.PassToPass))
		}
		errText := ""
		if r.Error != "" {
			errText = cell(r.Error, 200)
		}
		exit := "–"
		if r.ExitReason != "" {
			exit = cell(r.ExitReason, 40)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %d | %s | %s |\n", cell(r.InstanceID, 80), r.Status, f2p, p2p, r.Steps,
			r.PromptTokens+r.CompletionTokens, exit, errText)
	}
	if len(bad) > 0 {
		b.WriteString("\n## Lines not used\n\n")
		for _, e := range bad {
			if e.ID != "" {
				fmt.Fprintf(&b, "- line %d, task %s: %s\n", e.Line, report.CodeSpan(e.ID, 80), report.CodeSpan(e.Err.Error(), 300))
				continue
			}
			fmt.Fprintf(&b, "- line %d: %s\n", e.Line, report.CodeSpan(e.Err.Error(), 300))
		}
	}
	return b.String()
}

// cell is an inert code span for a table cell (a pipe would end the cell).
func cell(s string, max int) string {
	return report.CodeSpan(strings.ReplaceAll(s, "|", `\|`), max)
}

// bar is the evaluation's overall progress: every task of the file, finished or kept.
func (w *writer) bar() string {
	w.mu.Lock()
	var done []*Record
	for _, r := range w.records {
		if r != nil {
			done = append(done, r)
		}
	}
	w.mu.Unlock()
	return Bar(len(done), len(w.tasks), RateOf(done))
}

// Bar draws done of total tasks as a bar of 30 cells, with the rate so far.
func Bar(done, total int, r Rate) string {
	const width = 30
	filled := 0
	if total > 0 {
		filled = min(width, done*width/total)
	}
	return fmt.Sprintf("[%s%s] %d/%d tasks, %d resolved, %d unresolved, %d errors",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total, r.Resolved, r.Scored-r.Resolved, r.Errors)
}

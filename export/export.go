package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/runner/leaf"
)

// Summary is what an export did.
type Summary struct {
	Kept    int     // whole pairs of lines an earlier export had written, kept
	Written int     // records (and label lines) this export wrote
	Skipped []int64 // runs left out: a chat-jsonl record with no whole assistant turn, or an unreadable trajectory
	Bytes   int64   // bytes this export wrote, both files
	LastID  int64   // the run id of the last record in the files; 0: none
	// Repos counts the records this export wrote per repository.
	Repos map[string]int
	// Missing are the repositories named that no run has.
	Missing []string
}

// Run writes the records of the runs opt selects to opt.Out and their labels to
// opt.Out+LabelsSuffix, in the order of the runs' ids. When the files exist (an earlier export,
// perhaps killed), it keeps their whole pairs of lines, drops a torn end, and appends the runs
// after the last one kept: the files end as one export would have written them. Lines are
// written a pair at a time (record, then labels) and the files are synced at the end; a
// cancelled export keeps the pairs written so far. The files are made readable by their owner
// only.
func Run(ctx context.Context, pool *pgxpool.Pool, opt Options) (Summary, error) {
	var sum Summary
	if err := opt.check(); err != nil {
		return sum, err
	}
	ids, names, missing, err := repoIDs(ctx, pool, opt.Repos)
	if err != nil {
		return sum, err
	}
	sum.Missing, sum.Repos = missing, map[string]int{}
	labelsPath := opt.Out + LabelsSuffix
	at, err := resumePoint(opt.Out, labelsPath, opt.Format)
	if err != nil {
		return sum, err
	}
	sum.Kept, sum.LastID = at.pairs, at.lastID
	var todo []int64 // the runs to go through, in order
	var fus map[pullKey][]FollowUp
	if len(ids) > 0 {
		if todo, err = runIDs(ctx, pool, ids, at.lastID, opt.Since, opt.Outcome); err != nil {
			return sum, err
		}
		if fus, err = followUps(ctx, pool, ids); err != nil {
			return sum, err
		}
	}
	rf, err := openAt(opt.Out, at.recEnd)
	if err != nil {
		return sum, err
	}
	defer rf.Close()
	lf, err := openAt(labelsPath, at.labEnd)
	if err != nil {
		return sum, err
	}
	defer lf.Close()
	rw, lw := bufio.NewWriterSize(rf, 1<<20), bufio.NewWriterSize(lf, 256<<10)
	red := NewRedactor(opt.Secrets)
	n := opt.BatchSize
	if n <= 0 {
		n = 100
	}
	for start := 0; start < len(todo); start += n {
		if err := ctx.Err(); err != nil {
			return sum, finish(rw, lw, rf, lf, err)
		}
		part := todo[start:min(start+n, len(todo))]
		runs, err := batch(ctx, pool, part)
		if err != nil {
			return sum, finish(rw, lw, rf, lf, err)
		}
		rendered := renderAll(runs, names, fus, opt.Format, red)
		for i, s := range runs {
			r := rendered[i]
			if r.err != nil {
				return sum, finish(rw, lw, rf, lf, r.err)
			}
			rec, lab := &r.rec, &r.lab
			if !r.ok {
				sum.Skipped = append(sum.Skipped, s.id)
			} else {
				if _, err := rw.Write(rec.Bytes()); err != nil {
					return sum, finish(rw, lw, rf, lf, fmt.Errorf("writing %s: %w", opt.Out, err))
				}
				if _, err := lw.Write(lab.Bytes()); err != nil {
					return sum, finish(rw, lw, rf, lf, fmt.Errorf("writing %s: %w", labelsPath, err))
				}
				sum.Written++
				sum.Bytes += int64(rec.Len() + lab.Len())
				sum.LastID = s.id
				sum.Repos[names[s.repoID]]++
			}
			if opt.Progress != nil {
				opt.Progress(Progress{Done: start + slices.Index(part, s.id) + 1, Total: len(todo), Bytes: sum.Bytes})
			}
		}
		if opt.Progress != nil { // the runs of the batch that had no model turn
			opt.Progress(Progress{Done: start + len(part), Total: len(todo), Bytes: sum.Bytes})
		}
	}
	return sum, finish(rw, lw, rf, lf, nil)
}

// finish flushes and syncs both files, records before labels, and returns err or the first
// error of doing so.
func finish(rw, lw *bufio.Writer, rf, lf *os.File, err error) error {
	errs := []error{err, rw.Flush(), rf.Sync(), lw.Flush(), lf.Sync()}
	return errors.Join(errs...)
}

// rendered is one run's lines, or why it has none.
type rendered struct {
	rec, lab bytes.Buffer
	ok       bool
	err      error
}

// renderAll renders runs on every processor at once (redaction is most of an export's work);
// the results are in the runs' order.
func renderAll(runs []source, names map[int64]string, fus map[pullKey][]FollowUp, format string, red *Redactor) []rendered {
	out := make([]rendered, len(runs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(runs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &out[i]
				r.ok, r.err = render(&r.rec, &r.lab, runs[i], names[runs[i].repoID], fus, format, red)
			}
		}()
	}
	for i := range runs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// render writes s's record and its labels line (each ending in a newline) to rec and lab.
// ok is false when s is left out (its trajectory is unreadable, or a chat-jsonl record would
// hold no whole assistant turn).
func render(rec, lab *bytes.Buffer, s source, repo string, fus map[pullKey][]FollowUp, format string, red *Redactor) (ok bool, err error) {
	var t leaf.Trajectory
	if json.Unmarshal(s.trajectory, &t) != nil {
		return false, nil
	}
	red = red.forRecord()
	if format == FormatChat {
		for i, m := range t.Messages { // a chat record holds the messages alone
			t.Messages[i] = red.Message(m)
		}
	} else {
		red.Trajectory(&t)
	}
	l, err := labelsOf(s, repo, fus, red)
	if err != nil {
		return false, err
	}
	enc := json.NewEncoder(rec)
	enc.SetEscapeHTML(false)
	switch format {
	case FormatChat:
		c, cut, ok := chatOf(&t)
		if !ok {
			return false, nil
		}
		l.CutMessages = cut
		err = enc.Encode(c)
	default:
		t.Tools = toolsOf(&t)
		err = enc.Encode(t)
	}
	if err != nil {
		return false, fmt.Errorf("encoding run %d's record: %w", s.id, err)
	}
	le := json.NewEncoder(lab)
	le.SetEscapeHTML(false)
	if err := le.Encode(l); err != nil {
		return false, fmt.Errorf("encoding run %d's labels: %w", s.id, err)
	}
	return true, nil
}

// DryRun is what an export would write, and where it would start.
type DryRun struct {
	Kept    int   // whole pairs already in the files, which the export keeps
	After   int64 // the run id it would continue after; 0: from the start
	Repos   []RepoCount
	Runs    int   // runs it would go through (a chat-jsonl export may leave a few out)
	Bytes   int64 // estimated size of what it would write, both files
	Missing []string
}

// RepoCount is one named repository's share of a DryRun.
type RepoCount struct {
	Repo  string
	Runs  int
	Bytes int64 // estimated
}

// labelBytes is the estimated size of a labels line besides its tests (measured on seeded runs).
const labelBytes = 700

// Plan says what Run would write with opt, reading the files an earlier export left but
// writing nothing. Sizes are estimates from the stored trajectories (PostgreSQL's text of them
// is a little larger than the records; a chat-jsonl record holds the messages alone).
func Plan(ctx context.Context, pool *pgxpool.Pool, opt Options) (DryRun, error) {
	var d DryRun
	if err := opt.check(); err != nil {
		return d, err
	}
	ids, names, missing, err := repoIDs(ctx, pool, opt.Repos)
	if err != nil {
		return d, err
	}
	d.Missing = missing
	at, err := resumePoint(opt.Out, opt.Out+LabelsSuffix, opt.Format)
	if err != nil {
		return d, err
	}
	d.Kept, d.After = at.pairs, at.lastID
	if len(ids) == 0 {
		return d, nil
	}
	counts, err := countRuns(ctx, pool, ids, at.lastID, opt.Since, opt.Outcome)
	if err != nil {
		return d, err
	}
	tools, _ := json.Marshal(leaf.ToolSchemas())
	byID := map[int64]planRow{}
	for _, c := range counts {
		byID[c.repoID] = c
	}
	for _, id := range ids {
		c := byID[id]
		size := c.leafBytes
		if opt.Format == FormatChat {
			size = c.chatBytes + int64(c.runs)*int64(len(tools)+len(`{"messages":,"tools":}`)+1)
		}
		size += int64(c.runs) * labelBytes
		d.Repos = append(d.Repos, RepoCount{Repo: names[id], Runs: c.runs, Bytes: size})
		d.Runs += c.runs
		d.Bytes += size
	}
	return d, nil
}

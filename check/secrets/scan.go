package secrets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	gllog "github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/frognano/frognano/check/patch"
)

func init() {
	// gitleaks logs through a process-wide zerolog logger to stderr, and some of its lines
	// could quote what it read; frognano's logs carry no secret, so it says nothing.
	gllog.Logger = zerolog.Nop()
}

// AllowListPath is the file of the base branch whose allow-lists a repository uses to let
// known fixtures through (gitleaks' own format).
const AllowListPath = ".gitleaks.toml"

// maxAllowList bounds each of .gitleaks.toml and .gitleaksignore read from git's objects.
const maxAllowList = 1 << 20

// Input is one patch to scan.
type Input struct {
	// Base is the commit Diff applies to; the published files are compared with it.
	Base string
	Diff []byte
	// AllowListAt is the commit whose .gitleaks.toml and .gitleaksignore let fixtures through:
	// the base branch's head, which the repository's maintainers wrote. For a follow-up on
	// frognano's own branch it is not Base: an earlier run's patch could have written Base's.
	// Empty: no repository allow rule, only the placeholders gitleaks' rules know.
	AllowListAt string

	maxTime time.Duration // MaxScanTime when 0; tests set it
}

// MaxScanTime bounds one Scan. gitleaks' rules read a file at about 1 MB/s when it is full of
// what they look for (a random binary file matches many rules' keywords, and each decoded pass
// reads it all again), so a patch could make the host work for long by touching a large file;
// past this time the scan fails, and under Block the patch is refused as not scanned, never
// published unread.
const MaxScanTime = 5 * time.Minute

// Result is what Scan found, each list sorted by file, line and rule.
type Result struct {
	// Findings are the patch's: values the base did not hold that no allow rule lets through.
	// Under Block each one refuses the patch.
	Findings []Finding
	// Allowed are what the scan found and does not blame on the patch, each with its reason
	// (Finding.Allowed): already in the base's file, or let through by the base's
	// .gitleaksignore or .gitleaks.toml, or a placeholder by gitleaks' rules.
	Allowed []Finding
}

// Scan checks what the patch will publish: it applies in.Diff to in.Base in the host's clone
// (patch.Published: a throwaway index and object directory, no working tree) and runs gitleaks'
// default rules over every file the patch adds, changes or renames, whole, as the published
// tree holds it (binary or not, whatever its name; a file over patch.MaxFileBytes, or a scan
// past MaxScanTime, is an error, never a skip), with the text it spells in UTF-16 (wideText),
// and over the same path (or the rename's source)
// in the base. A value found by a rule is the patch's when the base file does
// not hold it by the same rule: so a key the patch assembles from lines it did not change is
// the patch's, and one the base already held is listed as such and not blamed.
//
// A value the patch brought is then judged by the allow rules that may judge patch content,
// and only by them: a fingerprint of the .gitleaksignore at in.AllowListAt, an allow-list of the
// .gitleaks.toml there (its global ones and those that target a rule), and gitleaks' own
// allow-lists reduced to what judges the secret's own text (a placeholder). No path allow-list
// of gitleaks' rules, no allow regex on the rest of the line or match, and no `gitleaks:allow`
// comment counts: the patch writes those itself. What an allow rule let through is in
// Result.Allowed with its reason.
//
// An error (git, a base allow-list that does not parse) means the patch was not scanned: a
// caller that blocks must then refuse it. No value leaves this function.
func Scan(ctx context.Context, git patch.Git, in Input) (Result, error) {
	if in.Base == "" {
		return Result{}, errors.New("scanning a patch needs its base commit")
	}
	set, err := rules()
	if err != nil {
		return Result{}, fmt.Errorf("reading gitleaks' rules: %w", err)
	}
	s := &scan{rules: set}
	if in.AllowListAt != "" {
		toml, err := readBaseFile(ctx, git, in.AllowListAt, AllowListPath)
		if err != nil {
			return Result{}, err
		}
		if s.baseGlobal, s.baseByRule, err = baseAllowLists(toml); err != nil {
			return Result{}, fmt.Errorf("reading %s of the base branch: %w", AllowListPath, err)
		}
		ignore, err := readBaseFile(ctx, git, in.AllowListAt, IgnorePath)
		if err != nil {
			return Result{}, err
		}
		s.ignore = parseIgnore(ignore)
	}
	if len(in.Diff) == 0 {
		return Result{}, nil
	}
	limit := in.maxTime
	if limit == 0 {
		limit = MaxScanTime
	}
	scanCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var read int64
	err = patch.Published(scanCtx, git, in.Base, in.Diff, func(f patch.PublishedFile) error {
		read += int64(len(f.Bytes))
		if err := s.file(scanCtx, f); errors.Is(err, errTooDeep) {
			return fmt.Errorf("the patch's files could not be scanned: %w", err)
		}
		// A detector stopped by the context returns what it found so far: never a result.
		return scanCtx.Err()
	})
	var ae *patch.ApplyError
	var tl *patch.FileTooLargeError
	switch {
	case errors.As(err, &ae):
		return Result{}, errors.New("git could not apply the patch to scan it")
	case errors.As(err, &tl):
		return Result{}, fmt.Errorf("the patch's files could not be scanned: %w", err)
	case err != nil && scanCtx.Err() != nil && ctx.Err() == nil:
		return Result{}, fmt.Errorf("the patch's files could not be scanned within %s (%d MiB read so far)", limit, read>>20)
	case err != nil:
		return Result{}, err
	}
	sortFindings(s.res.Findings)
	sortFindings(s.res.Allowed)
	return s.res, nil
}

// scan is one Scan's state: the rules, the base's allow rules, what was found so far.
type scan struct {
	rules      *ruleSet
	baseGlobal []*config.Allowlist
	baseByRule map[string][]*config.Allowlist
	ignore     map[string]bool
	res        Result
}

// valueKey identifies a value found by a rule without keeping it: the scan compares the
// published file's values with the base's by this hash, in memory.
type valueKey [sha256.Size]byte

func keyOf(rule, secret string) valueKey {
	return sha256.Sum256([]byte(rule + "\x00" + secret))
}

// file scans one published file's path and content and, when they hold anything, the base's.
// Values hidden behind other values are read too (detectThrough), in the base's file as in the
// published one; an error means the file was not read whole.
func (s *scan) file(ctx context.Context, f patch.PublishedFile) error {
	shown := s.path(ctx, f)
	if f.Base != nil && bytes.Equal(f.Bytes, f.Base) {
		return nil // a mode change or a plain rename: nothing the patch wrote
	}
	found, err := s.rules.detectThrough(ctx, f.Path, f.Bytes)
	if err != nil || len(found) == 0 {
		return err
	}
	inBase := map[valueKey]bool{}
	if f.Base != nil {
		held, err := s.rules.detectThrough(ctx, f.BasePath(), f.Base)
		if err != nil {
			return err
		}
		for _, b := range held {
			inBase[keyOf(b.RuleID, b.Secret)] = true
		}
	}
	var all []judged
	for _, h := range found {
		m := h.Finding
		j := judge{rule: m.RuleID, path: f.Path, line: h.line, secret: m.Secret, match: m.Match, text: m.Line}
		all = append(all, judged{judge: j, allowed: s.allowance(j), inBase: inBase[keyOf(m.RuleID, m.Secret)]})
	}
	s.record(all, shown)
	return nil
}

// record lists one file's judged matches as findings named by shown (the path as findings
// name it): gitleaks' preference for specific rules first, then what the base held, then a
// .gitleaksignore fingerprint (which names a line: never a match in the path, line 0).
func (s *scan) record(all []judged, shown string) {
	seen := map[Finding]bool{}
	for _, a := range all {
		if a.shadowed(all) {
			continue
		}
		why := a.allowed
		switch {
		case a.inBase:
			why = InBase
		case why == Refuses && a.line > 0 && s.ignore[fingerprint(a.path, a.rule, a.line)]:
			// A .gitleaksignore fingerprint, as gitleaks applies it: to what its allow-lists
			// and its preference for specific rules left.
			why = ByIgnore
		}
		k := Finding{Rule: a.rule, File: shown, Line: a.line, Allowed: why}
		if seen[k] {
			continue
		}
		seen[k] = true
		if why == Refuses {
			s.res.Findings = append(s.res.Findings, k)
		} else {
			s.res.Allowed = append(s.res.Allowed, k)
		}
	}
}

// path scans the published path as text (a file or folder name is published as it is: in the
// tree, in the pull request's list of files) and returns the path with every value a rule found
// in it replaced by "[secret: RULE]": what a Finding names, so that no finding holds a value.
// The path is the patch's when the base has no file there (a new file, a rename's target): a
// value in it is then a finding at line 0 ("in its name"), judged by the same allow rules as a
// value in a file's content but .gitleaksignore (whose fingerprints name lines), unless the
// rename's source path holds the same value by the same rule.
func (s *scan) path(ctx context.Context, f patch.PublishedFile) string {
	found := s.rules.detectPath(ctx, f.Path)
	if len(found) == 0 {
		return f.Path
	}
	shown := f.Path
	// The longest value first, so that one overlapping another goes whole.
	sort.SliceStable(found, func(i, j int) bool {
		return max(len(found[i].Secret), len(found[i].Match)) > max(len(found[j].Secret), len(found[j].Match))
	})
	for _, m := range found {
		// Matches overlap (a generic rule's and a specific one's): a value already replaced
		// with another match is gone from shown, and replacing it again does nothing.
		switch {
		case m.Secret != "" && strings.Contains(f.Path, m.Secret):
			shown = strings.ReplaceAll(shown, m.Secret, "[secret: "+m.RuleID+"]")
		case m.Match != "" && strings.Contains(f.Path, m.Match):
			shown = strings.ReplaceAll(shown, m.Match, "[secret: "+m.RuleID+"]")
		default:
			// Found after decoding (a base64 name): its encoded form cannot be told from the
			// rest of the name, so none of the name is shown.
			shown = "[a path holding a secret]"
		}
	}
	if f.From == "" && f.Base != nil {
		return shown // the base's own path: nothing the patch named
	}
	inBase := map[valueKey]bool{}
	if f.From != "" {
		for _, b := range s.rules.detectPath(ctx, f.From) {
			inBase[keyOf(b.RuleID, b.Secret)] = true
		}
	}
	var all []judged
	for _, m := range found {
		j := judge{rule: m.RuleID, path: f.Path, secret: m.Secret, match: m.Match, text: f.Path}
		all = append(all, judged{judge: j, allowed: s.allowance(j), inBase: inBase[keyOf(m.RuleID, m.Secret)]})
	}
	s.record(all, shown)
	return shown
}

// judged is a match with what the allow-lists say of it (allowed: Refuses, ByAllowList or a
// placeholder) and whether the base's file holds the same value by the same rule.
type judged struct {
	judge
	allowed Allowance
	inBase  bool
}

// shadowed is gitleaks' own preference (detect.filter) for a specific rule: a generic rule's
// value that a specific rule's value on the same line holds is the same finding, named by the
// specific rule. gitleaks applies it to what its allow-lists left, and so does the scan: when
// the specific match is allowed and the generic one is not, the generic one stands (it would
// have refused the patch in gitleaks too). When the generic match is itself allowed, the
// specific rule names the value whatever its own verdict, so the generic one is not listed.
func (a judged) shadowed(all []judged) bool {
	if !isGeneric(a.rule) {
		return false
	}
	for _, b := range all {
		if !isGeneric(b.rule) && b.line == a.line && strings.Contains(b.secret, a.secret) &&
			(b.allowed == Refuses || a.allowed != Refuses) {
			return true
		}
	}
	return false
}

// hit is a rule's match in a file, on the file's line (1-based).
type hit struct {
	report.Finding
	line int
}

// detectAll runs the rules over one file's whole content and over the text it spells in UTF-16
// (wideText), each match on the line of the file it is on.
func (rs *ruleSet) detectAll(ctx context.Context, path string, content []byte) []hit {
	var out []hit
	for _, m := range rs.detect(ctx, path, content) {
		out = append(out, hit{m, m.StartLine + 1})
	}
	if wide, lines := wideText(content); wide != "" {
		for _, m := range rs.detect(ctx, path, []byte(wide)) {
			// A rule on the path alone (a .p12 file) matched the file already.
			if m.Secret != "" && m.StartLine >= 0 && m.StartLine < len(lines) {
				out = append(out, hit{m, lines[m.StartLine]})
			}
		}
	}
	return out
}

// detectPath runs the rules over a path as text, whole and each of its folder and file names
// alone: gitleaks decodes an encoded value (base64) only where it stands apart, and '/' is
// one of base64's letters, so "ops/" before an encoded name would hide it.
func (rs *ruleSet) detectPath(ctx context.Context, p string) []report.Finding {
	found := rs.detect(ctx, "", []byte(p))
	if parts := strings.Split(p, "/"); len(parts) > 1 {
		for _, part := range parts {
			found = append(found, rs.detect(ctx, "", []byte(part))...)
		}
	}
	return found
}

// detect runs the rules, without allow-lists, over one file's whole content.
func (rs *ruleSet) detect(ctx context.Context, path string, content []byte) []report.Finding {
	if len(content) == 0 {
		return nil
	}
	d := rs.detector(scanRules)
	out := d.DetectContext(ctx, detect.Fragment{Raw: string(content), FilePath: path})
	rs.put(scanRules, d)
	for i, f := range out {
		if id, ok := rs.renamed[f.RuleID]; ok {
			out[i].RuleID = id
		}
	}
	return out
}

func sortFindings(fs []Finding) {
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Allowed < b.Allowed
	})
}

// readBaseFile reads path from git's objects at commit (never a working tree): nil when there
// is none, an error when it is not a regular file of at most 1 MiB.
func readBaseFile(ctx context.Context, git patch.Git, commit, path string) ([]byte, error) {
	out, err := git(ctx, nil, nil, "ls-tree", "-z", commit, "--", path)
	if err != nil {
		return nil, fmt.Errorf("reading %s at the allow-list commit: %w", path, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	meta, _, _ := strings.Cut(string(out), "\t")
	f := strings.Fields(meta)
	if len(f) != 3 || (f[0] != patch.ModeFile && f[0] != patch.ModeExecutable) {
		return nil, fmt.Errorf("%s at the allow-list commit is not a regular file", path)
	}
	size, err := git(ctx, nil, nil, "cat-file", "-s", f[2])
	if err != nil {
		return nil, fmt.Errorf("reading %s at the allow-list commit: %w", path, err)
	}
	if n := strings.TrimSpace(string(size)); len(n) > 9 || atoi(n) > maxAllowList {
		return nil, fmt.Errorf("%s at the allow-list commit is over %d bytes", path, maxAllowList)
	}
	return git(ctx, nil, nil, "cat-file", "blob", f[2])
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 1 << 30
		}
		n = n*10 + int(c-'0')
	}
	return n
}

package scanner

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/frognano/frognano/internal/clip"
)

// Bounds of what Read takes from a scanner.
const (
	// MaxSARIFBytes is the largest SARIF file read out of a scanner's sandbox; a larger one
	// is refused whole.
	MaxSARIFBytes = 8 << 20
	// MaxFindings bounds the findings kept from one scanner; Findings.More counts the rest.
	MaxFindings = 500
	maxMessage  = 1000 // characters of a finding's message
	maxRule     = 200  // characters of a rule id
	maxPath     = 1024 // bytes of a repository path
	maxLine     = 1 << 24
	maxBaseHops = 8 // uriBaseId indirections followed
)

// Finding is one SARIF result whose region touches a line the patch added or changed. Rule
// and Message are the scanner's untrusted text, cut to bounds and valid UTF-8.
type Finding struct {
	Rule          string // "" when the result names no rule
	Level         Level
	Message       string
	File          string // a path of the repository, slash-separated, relative to its root
	Line, EndLine int    // the region's first and last lines (1-based)
}

// Findings is what Read made of one SARIF log.
type Findings struct {
	Kept      []Finding // sorted by file, line, rule and message; at most MaxFindings
	More      int       // findings on changed lines beyond MaxFindings, not kept
	Elsewhere int       // results on lines the patch did not add or change: dropped
	Unplaced  int       // results with no line in a file of the repository (no location, no line, a path outside it): dropped
	// Failed counts what the scanner's own log says went wrong in its run: an invocation not
	// successful (executionSuccessful false), and each tool execution notification at level
	// error (a file it could not parse or read, a rule that crashed). A scanner that skips a
	// file it cannot parse still exits 0 with no result there: its clean result does not cover
	// everything. FailedFiles are the repository paths those notifications name, sorted, at
	// most maxFailedFiles.
	Failed      int
	FailedFiles []string
}

// maxFailedFiles bounds Findings.FailedFiles.
const maxFailedFiles = 20

// Read parses a SARIF 2.1.0 log written by a scanner that ran in workdir (the sandbox's
// workspace, the repository's root) and keeps the results whose region touches a line in
// changed. Locations are repository paths once normalised: a relative URI reference (against
// its uriBaseId when the run defines one; an unknown or absent base is the repository's
// root), or a file: URI or absolute path under workdir. Anything else, or a path that
// leaves the repository or enters .git, is not placed. An error means the log as a whole is
// not usable SARIF; its text quotes nothing of data.
//
// Results of kind pass or notApplicable are not findings. A result's level is its own, else
// none for a kind other than fail, else its rule's default, else warning (SARIF's rules).
// Suppressions are ignored: a suppression in the source is a comment the patch could write.
func Read(data []byte, workdir string, changed Changed) (Findings, error) {
	var out Findings
	if len(data) > MaxSARIFBytes {
		return out, fmt.Errorf("the SARIF file is larger than %d MiB", MaxSARIFBytes>>20)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return out, errors.New("the SARIF file is empty")
	}
	// WithStrictValidation only keeps the library from filling nil slices by reflection;
	// the shape is checked below.
	log, err := sarif.FromBytes(data, sarif.WithStrictValidation())
	if err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return out, fmt.Errorf("the SARIF file is not JSON (at byte %d)", syn.Offset)
		}
		return out, errors.New("the SARIF file does not have SARIF's shape")
	}
	if log.Version != "2.1.0" {
		return out, errors.New("the SARIF file is not SARIF 2.1.0 (its version field says otherwise)")
	}
	if log.Runs == nil {
		return out, errors.New("the SARIF file has no runs")
	}
	root := (&url.URL{Scheme: "file", Path: strings.TrimSuffix(workdir, "/") + "/"})
	seen := map[Finding]bool{}
	for _, run := range log.Runs {
		if run == nil {
			continue
		}
		out.failures(run, root)
		rules := rulesOf(run)
		for _, res := range run.Results {
			if res == nil || res.Kind == "pass" || res.Kind == "notApplicable" {
				continue
			}
			file, first, last, ok := place(res, run, root, changed)
			if !ok {
				out.Unplaced++
				continue
			}
			if !changed.Touches(file, first, last) {
				out.Elsewhere++
				continue
			}
			rule := ruleOf(res, rules)
			f := Finding{Rule: clean(ruleID(res), maxRule), Level: levelOf(res, rules[ruleID(res)]),
				Message: clean(message(res, rule), maxMessage), File: file, Line: first, EndLine: last}
			if seen[f] {
				continue
			}
			seen[f] = true
			out.Kept = append(out.Kept, f)
		}
	}
	sort.Slice(out.Kept, func(i, j int) bool {
		a, b := out.Kept[i], out.Kept[j]
		switch {
		case a.File != b.File:
			return a.File < b.File
		case a.Line != b.Line:
			return a.Line < b.Line
		case a.Rule != b.Rule:
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
	if len(out.Kept) > MaxFindings {
		out.More, out.Kept = len(out.Kept)-MaxFindings, out.Kept[:MaxFindings]
	}
	sort.Strings(out.FailedFiles)
	return out, nil
}

// failures adds to Failed and FailedFiles what run's invocations say went wrong.
func (out *Findings) failures(run *sarif.Run, root *url.URL) {
	for _, inv := range run.Invocations {
		if inv == nil {
			continue
		}
		if inv.ExecutionSuccessful != nil && !*inv.ExecutionSuccessful {
			out.Failed++
		}
		for _, n := range inv.ToolExecutionNotifications {
			if n == nil || n.Level != "error" {
				continue
			}
			out.Failed++
			for _, l := range n.Locations {
				if l == nil || l.PhysicalLocation == nil || l.PhysicalLocation.ArtifactLocation == nil {
					continue
				}
				a := l.PhysicalLocation.ArtifactLocation
				if a.URI == nil {
					continue
				}
				file, ok := repoPath(*a.URI, a.URIBaseID, run.OriginalUriBaseIds, root)
				if !ok {
					file, ok = literalPath(*a.URI, a.URIBaseID, run.OriginalUriBaseIds, root)
				}
				if ok && len(out.FailedFiles) < maxFailedFiles && !slices.Contains(out.FailedFiles, file) {
					out.FailedFiles = append(out.FailedFiles, file)
				}
			}
		}
	}
}

// rulesOf indexes the run's driver rules by id (the first of an id wins).
func rulesOf(run *sarif.Run) map[string]*sarif.ReportingDescriptor {
	m := map[string]*sarif.ReportingDescriptor{}
	if run.Tool == nil || run.Tool.Driver == nil {
		return m
	}
	for _, r := range run.Tool.Driver.Rules {
		if r != nil && r.ID != nil {
			if _, dup := m[*r.ID]; !dup {
				m[*r.ID] = r
			}
		}
	}
	return m
}

// ruleID is the result's ruleId, else its rule reference's id. ruleIndex alone is not used:
// the library reads an absent one as 0, which would name the wrong rule.
func ruleID(res *sarif.Result) string {
	switch {
	case res.RuleID != nil:
		return *res.RuleID
	case res.Rule != nil && res.Rule.ID != nil:
		return *res.Rule.ID
	}
	return ""
}

func ruleOf(res *sarif.Result, rules map[string]*sarif.ReportingDescriptor) *sarif.ReportingDescriptor {
	return rules[ruleID(res)]
}

func levelOf(res *sarif.Result, rule *sarif.ReportingDescriptor) Level {
	if res.Level != "" {
		if l, ok := parseLevel(res.Level); ok {
			return l
		}
		return LevelWarning
	}
	if res.Kind != "" && res.Kind != "fail" {
		return LevelNone
	}
	if rule != nil && rule.DefaultConfiguration != nil {
		if l, ok := parseLevel(rule.DefaultConfiguration.Level); ok {
			return l
		}
	}
	return LevelWarning
}

// message is the result's text, else its rule's message string of the result's id with the
// arguments put in, else the rule's short description.
func message(res *sarif.Result, rule *sarif.ReportingDescriptor) string {
	m := res.Message
	if m != nil && m.Text != nil && *m.Text != "" {
		return *m.Text
	}
	if rule == nil {
		return ""
	}
	if m != nil && m.ID != nil {
		if s, ok := rule.MessageStrings[*m.ID]; ok && s.Text != nil {
			return fill(*s.Text, m.Arguments)
		}
	}
	if rule.ShortDescription != nil && rule.ShortDescription.Text != nil {
		return *rule.ShortDescription.Text
	}
	return ""
}

// fill puts args in a SARIF message string's {0}, {1}, ... placeholders, bounded.
func fill(s string, args []string) string {
	if len(s) > 4*maxMessage {
		s = s[:4*maxMessage]
	}
	for i, a := range args {
		if i >= 100 {
			break
		}
		if len(a) > maxMessage {
			a = a[:maxMessage]
		}
		s = strings.ReplaceAll(s, "{"+strconv.Itoa(i)+"}", a)
		if len(s) > 8*maxMessage {
			break
		}
	}
	return s
}

// clean is untrusted text on one line, valid UTF-8, at most n characters.
func clean(s string, n int) string {
	if len(s) > 4*n+4 {
		s = s[:4*n+4]
	}
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if head, more := clip.Runes(s, n); more > 0 {
		return head + clip.Ellipsis
	}
	return s
}

// place is the result's primary location as a repository path and its lines: the URI read as
// a URI reference, or as a path written as is (literalPath) when only that reading names a
// line the patch changed.
func place(res *sarif.Result, run *sarif.Run, root *url.URL, changed Changed) (file string, first, last int, ok bool) {
	if len(res.Locations) == 0 || res.Locations[0] == nil || res.Locations[0].PhysicalLocation == nil {
		return "", 0, 0, false
	}
	pl := res.Locations[0].PhysicalLocation
	loc := pl.ArtifactLocation
	if loc != nil && loc.URI == nil && loc.Index >= 0 && loc.Index < len(run.Artifacts) && run.Artifacts[loc.Index] != nil {
		loc = run.Artifacts[loc.Index].Location // only an index: the run's artifact table names it
	}
	if loc == nil || loc.URI == nil || pl.Region == nil || pl.Region.StartLine == nil {
		return "", 0, 0, false
	}
	first = *pl.Region.StartLine
	last = first
	if e := pl.Region.EndLine; e != nil && *e > first {
		last = *e
	}
	if first < 1 || first > maxLine {
		return "", 0, 0, false
	}
	last = min(last, maxLine)
	file, ok = repoPath(*loc.URI, loc.URIBaseID, run.OriginalUriBaseIds, root)
	literal, lok := literalPath(*loc.URI, loc.URIBaseID, run.OriginalUriBaseIds, root)
	if lok && (!ok || !changed.Touches(file, first, last)) && changed.Touches(literal, first, last) {
		return literal, first, last, true
	}
	return file, first, last, ok
}

// repoPath resolves uri against its base (uriBaseId) and returns the repository path it names
// under root (file:///workspace/), or false.
func repoPath(uri string, baseID *string, bases map[string]sarif.ArtifactLocation, root *url.URL) (string, bool) {
	if len(uri) > 4*maxPath {
		return "", false
	}
	base, ok := resolveBase(baseID, bases, root, 0)
	if !ok {
		return "", false
	}
	ref, err := url.Parse(uri)
	if err != nil {
		return "", false
	}
	return underRoot(base.ResolveReference(ref), root)
}

// literalPath reads uri as a path written as is, not as a URI reference: many scanners write a
// file's name into the SARIF uri without escaping it, so a name the patch chose with '#', '?',
// '%' or a ':' in its first part would read as a fragment, a query, an escape or a scheme, name
// another file (or none) and drop the finding. Read takes this reading when the URI's own does
// not name a line the patch changed. A file: URI is read only as a URI.
func literalPath(uri string, baseID *string, bases map[string]sarif.ArtifactLocation, root *url.URL) (string, bool) {
	if len(uri) > 4*maxPath || strings.HasPrefix(strings.ToLower(uri), "file:") || !literalish(uri) {
		return "", false
	}
	base, ok := resolveBase(baseID, bases, root, 0)
	if !ok {
		return "", false
	}
	return underRoot(base.ResolveReference(&url.URL{Path: uri}), root)
}

// literalish reports whether uri reads otherwise as a path written as is: it holds a character
// a URI gives a meaning ('#', '?', '%', ':'), or one a URI cannot hold at all (a control
// character, which url.Parse refuses, or a backslash); git lets a patch put any of them in a
// name.
func literalish(uri string) bool {
	return strings.ContainsFunc(uri, func(r rune) bool { return strings.ContainsRune("#?%:\\", r) || r < 0x20 || r == 0x7f })
}

// underRoot returns the repository path u names under root, or false: a file: URL on this
// host, inside the repository, not into .git.
func underRoot(u *url.URL, root *url.URL) (string, bool) {
	if u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.Opaque != "" || u.User != nil {
		return "", false
	}
	rel, ok := strings.CutPrefix(u.Path, root.Path)
	if !ok || rel == "" || len(rel) > maxPath || strings.ContainsRune(rel, 0) || !strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return "", false
		}
	}
	if rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return "", false
	}
	return rel, true
}

// resolveBase is the absolute URI a uriBaseId stands for: the run's originalUriBaseIds entry
// (itself resolved against its own base), or root for none or one the run does not define
// (%SRCROOT% and the like: the scanner ran at the repository's root).
func resolveBase(id *string, bases map[string]sarif.ArtifactLocation, root *url.URL, hops int) (*url.URL, bool) {
	if id == nil || hops > maxBaseHops {
		return root, hops <= maxBaseHops
	}
	b, ok := bases[*id]
	if !ok || b.URI == nil {
		return root, true
	}
	parent, ok := resolveBase(b.URIBaseID, bases, root, hops+1)
	if !ok {
		return nil, false
	}
	s := *b.URI
	if len(s) > 4*maxPath {
		return nil, false
	}
	if !strings.HasSuffix(s, "/") {
		s += "/" // SARIF asks for it; a base without it still names a directory
	}
	ref, err := url.Parse(s)
	if err != nil {
		return nil, false
	}
	return parent.ResolveReference(ref), true
}

package secrets

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/zricethezav/gitleaks/v8/report"
)

// Redact returns s with every value gitleaks' default rules find in it replaced by
// "[secret: RULE]". It is for what frognano shows of a run besides the patch (the model's
// words, its tool calls, what the tools returned): the patch check refuses a secret, and this
// keeps its value out of the transcript, the trajectory and the run's pages too. Values are
// found by gitleaks' default rules, in any text whatever file type a rule is for, with only
// the allow-lists that judge the value's own text (a placeholder is left alone; no path, line
// or match allow-list, and no repository allow-list: a fixture the scan lets through is still
// not shown), and replaced where they appear in s. An error of the rules (which
// are built in) leaves s as it is: a run is never lost to its display.
func Redact(s string) string {
	if s == "" {
		return s
	}
	set, err := rules()
	if err != nil {
		return s
	}
	d := set.detector(displayRules)
	// A value written first (a placeholder) must not hide the one after it (uncover), so the
	// detector has no allow-list and the placeholders are dropped after.
	all := uncoverString(s, d.DetectString)
	set.put(displayRules, d)
	var judged []report.Finding
	for _, f := range all {
		if id, ok := set.renamed[f.RuleID]; ok {
			f.RuleID = id
		}
		if !set.displayPlaceholder(f) {
			judged = append(judged, f)
		}
	}
	// gitleaks' preference (detect.filter), after its allow-lists as in gitleaks: a generic
	// rule's value that a specific rule's value on the same line holds is named by the specific
	// rule.
	specific := map[int][]string{} // the specific rules' values by line: many findings stay linear
	for _, f := range judged {
		if !isGeneric(f.RuleID) {
			specific[f.StartLine] = append(specific[f.StartLine], f.Secret)
		}
	}
	var found []report.Finding
	for _, f := range judged {
		if !isGeneric(f.RuleID) || !slices.ContainsFunc(specific[f.StartLine], func(v string) bool { return strings.Contains(v, f.Secret) }) {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return s
	}
	type cut struct{ value, rule string }
	var cuts []cut
	seen := map[string]bool{}
	for _, f := range found {
		// The value, where the match holds it (the match is a piece of s); else the whole
		// match. A value gitleaks found only after decoding is in neither form in s, and its
		// replacement does nothing. No search of s per finding: many findings stay linear.
		v := f.Match
		if f.Secret != "" && strings.Contains(f.Match, f.Secret) {
			v = f.Secret
		}
		if v != "" && !seen[v] {
			seen[v] = true
			cuts = append(cuts, cut{v, f.RuleID})
		}
	}
	// The longest first, so that a value inside a longer match goes with it; one pass over s
	// (a strings.Replacer), however many values there are.
	sort.SliceStable(cuts, func(i, j int) bool { return len(cuts[i].value) > len(cuts[j].value) })
	pairs := make([]string, 0, 2*len(cuts))
	for _, c := range cuts {
		pairs = append(pairs, c.value, "[secret: "+c.rule+"]")
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// RedactArguments is Redact for a tool call's JSON arguments. Every string of the JSON value,
// keys and nested values included, is redacted in its decoded form (a value the model escaped,
// such as a key's line breaks written as \n or letters as \u escapes, is found), the value is
// encoded again, and the whole text goes through Redact once more. Arguments that are not JSON
// are redacted as text.
func RedactArguments(raw string) string {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return Redact(raw)
	}
	red, changed := redactValue(v)
	if !changed {
		return Redact(raw)
	}
	b, err := json.Marshal(red)
	if err != nil {
		return Redact(raw)
	}
	return Redact(string(b))
}

// redactValue returns v with every string and key redacted, and whether anything changed.
func redactValue(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		r := Redact(t)
		return r, r != t
	case []any:
		changed := false
		for i, e := range t {
			var c bool
			t[i], c = redactValue(e)
			changed = changed || c
		}
		return t, changed
	case map[string]any:
		out, changed := make(map[string]any, len(t)), false
		for k, e := range t {
			rk := Redact(k)
			re, c := redactValue(e)
			changed = changed || c || rk != k
			out[rk] = re
		}
		return out, changed
	}
	return v, false
}

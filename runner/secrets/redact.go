package secrets

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// redactors holds detectors of the default rules, one per concurrent Redact: building one
// (its keyword index) costs more than scanning a step's texts. A detector's DetectString keeps
// nothing of what it read (it only counts bytes), so reusing it holds no value.
var redactors = sync.Pool{New: func() any {
	cfg, err := rules(nil)
	if err != nil {
		return nil
	}
	d := detect.NewDetectorContext(context.Background(), cfg)
	d.IgnoreGitleaksAllow = true
	d.MaxDecodeDepth = 5 // as the patch check
	return d
}}

// Redact returns s with every value gitleaks' default rules find in it replaced by
// "[secret: RULE]". It is for what frognano shows of a run besides the patch (the model's
// words, its tool calls, what the tools returned): the patch check refuses a secret, and this
// keeps its value out of the transcript, the trajectory and the run's pages too. Values are
// found as the patch check finds them, without a repository allow-list (a fixture it lets
// through is still not shown), and replaced where they appear in s; a value gitleaks found only
// after decoding (base64, hex) is replaced by its encoded match. An error of the rules (which
// are built in) leaves s as it is: a run is never lost to its display.
func Redact(s string) string {
	if s == "" {
		return s
	}
	d, _ := redactors.Get().(*detect.Detector)
	if d == nil {
		return s
	}
	found := d.DetectString(s)
	redactors.Put(d)
	if len(found) == 0 {
		return s
	}
	type cut struct{ value, rule string }
	var cuts []cut
	for _, f := range found {
		for _, v := range []string{f.Secret, f.Match} {
			if v != "" && strings.Contains(s, v) {
				cuts = append(cuts, cut{v, f.RuleID})
				break
			}
		}
	}
	// The longest first, so that a value inside a longer match goes with it.
	sort.SliceStable(cuts, func(i, j int) bool { return len(cuts[i].value) > len(cuts[j].value) })
	for _, c := range cuts {
		s = strings.ReplaceAll(s, c.value, "[secret: "+c.rule+"]")
	}
	return s
}

// RedactArguments is Redact for a tool call's JSON arguments: what it returns is still the JSON
// object it was, each string value redacted (a value the model escaped, such as a key's line
// breaks written as \n, is found in its decoded form). Arguments that are not a JSON object
// are redacted as text.
func RedactArguments(raw string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &obj) != nil {
		return Redact(raw)
	}
	changed := false
	for k, v := range obj {
		var s string
		if json.Unmarshal(v, &s) != nil {
			continue
		}
		if r := Redact(s); r != s {
			b, err := json.Marshal(r)
			if err != nil {
				continue
			}
			obj[k], changed = b, true
		}
	}
	if !changed {
		return Redact(raw) // a value in a key or a number, however unlikely; still valid JSON
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return Redact(raw)
	}
	return string(b)
}

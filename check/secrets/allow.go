package secrets

import (
	"github.com/zricethezav/gitleaks/v8/config"
)

// Allowance says why a finding does not refuse the patch; "" (Refuses) when it does.
type Allowance string

const (
	// Refuses: the finding is the patch's and nothing allows it.
	Refuses Allowance = ""
	// InBase: the base's file at the same path (or the rename's source) already holds the same
	// value, found by the same rule; it is not the patch's doing.
	InBase Allowance = "in-base"
	// ByIgnore: a fingerprint (FILE:RULE:LINE) of the base commit's .gitleaksignore.
	ByIgnore Allowance = "gitleaksignore"
	// ByAllowList: an allow-list of the base commit's .gitleaks.toml.
	ByAllowList Allowance = "gitleaks-toml"
	// PlaceholderRule: the value itself reads as a placeholder to the rule's own allow-list
	// (its regexes on the secret, its stopwords).
	PlaceholderRule Allowance = "placeholder-rule"
	// PlaceholderDefault: the value itself reads as a placeholder to gitleaks' global
	// allow-list (`${VAR}`, `true`, a run of one letter, ...).
	PlaceholderDefault Allowance = "placeholder-default"
)

// judge is what the scan knows of one match, in memory only: the value is compared and
// judged here and never leaves the package.
type judge struct {
	rule, path          string
	line                int
	secret, match, text string // text: the match's line
}

// allowance says whether an allow-list that may judge patch content lets j through, and which:
// the base's .gitleaks.toml (all of its allow-lists' conditions, as gitleaks applies them: the
// maintainers wrote them), then gitleaks' own allow-lists reduced to what judges the secret's
// own text (ruleSet.strict). The base's .gitleaksignore comes after (scan.file), as in gitleaks.
func (s *scan) allowance(j judge) Allowance {
	for _, a := range s.baseGlobal {
		if allows(a, j) {
			return ByAllowList
		}
	}
	for _, a := range s.baseByRule[j.rule] {
		if allows(a, j) {
			return ByAllowList
		}
	}
	if blockRules[j.rule] {
		return Refuses
	}
	secretOnly := judge{secret: j.secret}
	if r, ok := s.rules.strict.Rules[j.rule]; ok {
		for _, a := range r.Allowlists {
			if allows(a, secretOnly) {
				return PlaceholderRule
			}
		}
	}
	for _, a := range s.rules.strict.Allowlists {
		if allows(a, secretOnly) {
			return PlaceholderDefault
		}
	}
	return Refuses
}

// allows is gitleaks' test of one allow-list against one finding (detect's
// checkCommitOrPathAllowed and checkFindingAllowed together): OR, any of path, regex (on its
// target) and stopword (on the secret); AND, every condition the list has. A commit never
// matches: the published tree's commit does not exist yet.
func allows(a *config.Allowlist, j judge) bool {
	target := j.secret
	switch a.RegexTarget {
	case "match":
		target = j.match
	case "line":
		target = j.text
	}
	path := a.PathAllowed(j.path)
	regex := a.RegexAllowed(target)
	stop, _ := a.ContainsStopWord(j.secret)
	if a.MatchCondition != config.AllowlistMatchAnd {
		return path || regex || stop
	}
	checks := 0
	for _, c := range []struct {
		has, ok bool
	}{{len(a.Commits) > 0, false}, {len(a.Paths) > 0, path}, {len(a.Regexes) > 0, regex}, {len(a.StopWords) > 0, stop}} {
		if c.has {
			checks++
			if !c.ok {
				return false
			}
		}
	}
	return checks > 0
}

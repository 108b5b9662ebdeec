package secrets

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// ruleSet is gitleaks' default rules as this package uses them. gitleaks applies its
// allow-lists inside the detector, where what it silenced is gone; to say what was silenced and
// why, and to let nothing beside the secret silence it, the scan detects with no allow-list at
// all and judges each match itself (allow.go).
type ruleSet struct {
	// scan is the default rules with no allow-list at all, for Scan. gitleaks drops a generic
	// rule's match that a specific rule's match on the same line holds (detect.filter), after
	// its allow-lists; here that would come before the scan's own allow rules, and a generic
	// match could hide behind a specific one then allowed as a placeholder. So the generic
	// rules go by other names in it (renamed), which the filter does not know as generic, and
	// the scan applies gitleaks' preference itself, after its allow rules (judged.shadowed).
	scan config.Config
	// renamed maps the scan's names of the generic rules back to gitleaks' ("generic-api-key").
	renamed map[string]string
	// strict is the default rules with only the allow-lists that judge the secret's own text
	// (regexes whose target is the secret, stopwords), the global ones included: the scan
	// asks its allow-lists whether a value is a placeholder.
	strict config.Config
	// display is strict without the rules' file types (a Kubernetes Secret is found in any
	// text, not only in a .yaml file): Redact reads what the model saw, which has no file
	// name, and hiding more there costs nothing. Its detector runs the same rules with no
	// allow-list; Redact judges with these (displayPlaceholder).
	display config.Config
	// pools of detectors of scan and display: building one (its keyword index) costs more
	// than scanning a small file.
	pools [2]sync.Pool
}

var defaults struct {
	once sync.Once
	set  *ruleSet
	err  error
}

// rules returns gitleaks' default rules, translated once for the process.
func rules() (*ruleSet, error) {
	defaults.once.Do(func() {
		vc, err := parseTOML(config.DefaultConfig)
		if err != nil {
			defaults.err = err
			return
		}
		full, err := vc.Translate()
		if err != nil {
			defaults.err = err
			return
		}
		s := &ruleSet{
			scan:    only(full, func(config.Rule) bool { return true }, nil, nil),
			renamed: map[string]string{},
			strict:  only(full, func(config.Rule) bool { return true }, secretOnly, wholeSecretOnly),
			display: only(full, func(r config.Rule) bool { return r.Regex != nil }, secretOnly, wholeSecretOnly),
		}
		if defaults.err = renameGeneric(&s.scan, s.renamed); defaults.err != nil {
			return
		}
		for id, r := range s.display.Rules {
			r.Path = nil
			// The global allow-lists go to each rule, but a block rule's: gitleaks applies
			// its global ones to every rule.
			if !blockRules[id] {
				r.Allowlists = append(r.Allowlists, s.display.Allowlists...)
			}
			s.display.Rules[id] = r
		}
		s.display.Allowlists = nil
		// Redact's detector has no allow-list either: it finds the placeholders too, so that
		// uncover can look behind them, and Redact judges them itself (displayPlaceholder).
		// Its generic rules are renamed as the scan's, so that gitleaks' preference for a
		// specific rule does not drop a generic value beside a specific placeholder.
		raw := config.Config{Title: s.display.Title, Rules: map[string]config.Rule{}, Keywords: s.display.Keywords,
			OrderedRules: slices.Clone(s.display.OrderedRules)}
		for id, r := range s.display.Rules {
			r.Allowlists = nil
			raw.Rules[id] = r
		}
		if defaults.err = renameGeneric(&raw, s.renamed); defaults.err != nil {
			return
		}
		for i, cfg := range []config.Config{s.scan, raw} {
			s.pools[i].New = func() any { return newDetector(cfg) }
		}
		defaults.set = s
	})
	return defaults.set, defaults.err
}

// renameGeneric gives cfg's generic rules names gitleaks does not know as generic (so that its
// detector's filter, which drops a generic match that a specific one on the same line holds,
// leaves them), and records each new name's old one in renamed.
func renameGeneric(cfg *config.Config, renamed map[string]string) error {
	for id, r := range cfg.Rules {
		if !isGeneric(id) {
			continue
		}
		other := "unfiltered-" + strings.NewReplacer("generic", "wide", "Generic", "Wide").Replace(id)
		if isGeneric(other) || cfg.Rules[other].RuleID != "" || len(r.RequiredRules) > 0 {
			return fmt.Errorf("gitleaks' rule %q cannot be renamed", id)
		}
		delete(cfg.Rules, id)
		r.RuleID = other
		cfg.Rules[other] = r
		renamed[other] = id
		for i, o := range cfg.OrderedRules {
			if o == id {
				cfg.OrderedRules[i] = other
			}
		}
	}
	return nil
}

// displayPlaceholder reports whether Redact's allow-lists (display: those that judge the
// secret's own text, the global ones on every rule but a block rule) read f's value as a
// placeholder, as gitleaks' detector would have with them; f is named as gitleaks names it.
func (s *ruleSet) displayPlaceholder(f report.Finding) bool {
	j := judge{secret: f.Secret}
	for _, a := range s.display.Rules[f.RuleID].Allowlists {
		if allows(a, j) {
			return true
		}
	}
	return false
}

// isGeneric is gitleaks' own test of a generic rule (detect.filter).
func isGeneric(id string) bool { return strings.Contains(strings.ToLower(id), "generic") }

// blockRules are the rules whose secret is the whole block their match spans, not a value: a
// PEM private key's BEGIN line with its label, its headers, its body and its END line, and,
// the match being lazy, the lines of a decoy block up to the real key's own BEGIN line, which
// then leaves the key's body in no match of its own. The patch writes all but the body, so a
// placeholder word of gitleaks' allow-lists in the block ("false" in the label, a stopword in
// a header or a decoy) says nothing of the key: no placeholder allow-list judges these rules.
var blockRules = map[string]bool{"private-key": true}

// only returns the rules of full that keep says, each with its allow-lists passed through
// reduce (nil: none kept), and the global allow-lists through reduceGlobal likewise.
func only(full config.Config, keep func(config.Rule) bool, reduce, reduceGlobal func(*config.Allowlist) *config.Allowlist) config.Config {
	out := config.Config{Title: full.Title, Rules: map[string]config.Rule{}, Keywords: map[string]struct{}{}}
	for _, id := range full.OrderedRules {
		r, ok := full.Rules[id]
		if !ok || !keep(r) {
			continue
		}
		r.Allowlists = reduceAll(r.Allowlists, reduce)
		out.Rules[id] = r
		out.OrderedRules = append(out.OrderedRules, id)
		for _, k := range r.Keywords {
			out.Keywords[strings.ToLower(k)] = struct{}{}
		}
	}
	out.Allowlists = reduceAll(full.Allowlists, reduceGlobal)
	// Config.Path is the configuration file the detector skips; the scan has none to skip.
	out.Path = ""
	return out
}

func reduceAll(as []*config.Allowlist, reduce func(*config.Allowlist) *config.Allowlist) []*config.Allowlist {
	if reduce == nil {
		return nil
	}
	var out []*config.Allowlist
	for _, a := range as {
		if r := reduce(a); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// secretOnly keeps of a what judges only the matched secret's own text: its regexes when
// their target is the secret (gitleaks stores "secret" as ""), and its stopwords (gitleaks
// checks them against the secret). Paths, commits and regexes on the whole match or line go:
// the patch writes those beside the secret. An AND allow-list that needs any of them goes
// whole, since dropping one of its conditions would let through more, not less.
func secretOnly(a *config.Allowlist) *config.Allowlist {
	onSecret := a.RegexTarget == ""
	if a.MatchCondition == config.AllowlistMatchAnd {
		if len(a.Paths) > 0 || len(a.Commits) > 0 || (len(a.Regexes) > 0 && !onSecret) {
			return nil
		}
		return a
	}
	r := &config.Allowlist{Description: a.Description, StopWords: a.StopWords}
	if onSecret {
		r.Regexes = a.Regexes
	}
	if len(r.Regexes) == 0 && len(r.StopWords) == 0 {
		return nil
	}
	if err := r.Validate(); err != nil {
		return nil
	}
	return r
}

// wholeSecretOnly is secretOnly for gitleaks' global allow-lists, which judge the secret of
// every rule, also one that holds text beside the value (curl-auth-user's is the user and the
// password): each of their regexes must match the whole secret. gitleaks writes them anchored
// (^...$) but one, (?i)^true|false|null$, which reads as "^true, or false anywhere, or null$":
// a patch wrote `curl -u false:PASSWORD` and the password was a placeholder.
func wholeSecretOnly(a *config.Allowlist) *config.Allowlist {
	r := secretOnly(a)
	if r == nil || len(r.Regexes) == 0 {
		return r
	}
	out := &config.Allowlist{Description: r.Description, MatchCondition: r.MatchCondition,
		RegexTarget: r.RegexTarget, StopWords: r.StopWords}
	for _, re := range r.Regexes {
		out.Regexes = append(out.Regexes, regexp.MustCompile(`^(?:`+re.String()+`)$`))
	}
	if err := out.Validate(); err != nil {
		return nil
	}
	return out
}

func newDetector(cfg config.Config) *detect.Detector {
	d := detect.NewDetectorContext(context.Background(), cfg)
	d.IgnoreGitleaksAllow = true // the patch could write the comment itself
	d.MaxDecodeDepth = 5         // gitleaks' own default: base64, hex and percent-encoded values too
	return d
}

// The detectors of a ruleSet.
const (
	scanRules = iota
	displayRules
)

// detector takes a detector of scanRules or displayRules from its pool; put gives it back. A detector keeps nothing of what it read (DetectContext only counts bytes).
func (s *ruleSet) detector(i int) *detect.Detector { return s.pools[i].Get().(*detect.Detector) }
func (s *ruleSet) put(i int, d *detect.Detector)   { s.pools[i].Put(d) }

// parseTOML reads a gitleaks configuration with a viper of its own (gitleaks' constructor
// uses the process-wide one, which is not safe for concurrent scans).
func parseTOML(s string) (config.ViperConfig, error) {
	v := viper.New()
	v.SetConfigType("toml")
	var vc config.ViperConfig
	if err := v.ReadConfig(strings.NewReader(s)); err != nil {
		return vc, err
	}
	err := v.Unmarshal(&vc)
	return vc, err
}

// baseAllowLists reads the allow-lists of a .gitleaks.toml (the base commit's): the global
// ones, and those of its [[allowlists]] with targetRules, by rule. Nothing else of the file
// counts: its rules, its [extend] and its rules' own allow-lists are ignored, so a repository
// can let fixtures through but never turn a default rule off.
func baseAllowLists(toml []byte) (global []*config.Allowlist, byRule map[string][]*config.Allowlist, err error) {
	if len(toml) == 0 {
		return nil, nil, nil
	}
	repo, err := parseTOML(string(toml))
	if err != nil {
		return nil, nil, err
	}
	// gitleaks resolves targetRules against the rules it knows: the defaults, without their
	// own allow-lists, so that every rule allow-list of the result is the repository's.
	vc, err := parseTOML(config.DefaultConfig)
	if err != nil {
		return nil, nil, err
	}
	vc.AllowList, vc.Allowlists, vc.Extend = nil, nil, config.Extend{}
	for i := range vc.Rules {
		vc.Rules[i].AllowList, vc.Rules[i].Allowlists = nil, nil
	}
	known := map[string]bool{}
	for _, r := range vc.Rules {
		known[r.ID] = true
	}
	if repo.AllowList != nil {
		vc.Allowlists = append(vc.Allowlists, repo.AllowList)
	}
	for _, a := range repo.Allowlists {
		// An allow-list for the repository's own rules (which the scan does not run) would
		// stop gitleaks' translation: it allows nothing here, and is left out.
		if len(a.TargetRules) > 0 {
			var targets []string
			for _, id := range a.TargetRules {
				if known[id] {
					targets = append(targets, id)
				}
			}
			if len(targets) == 0 {
				continue
			}
			a.TargetRules = targets
		}
		vc.Allowlists = append(vc.Allowlists, a)
	}
	if len(vc.Allowlists) == 0 {
		return nil, nil, nil
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, nil, err
	}
	for id, r := range cfg.Rules {
		if len(r.Allowlists) > 0 {
			if byRule == nil {
				byRule = map[string][]*config.Allowlist{}
			}
			byRule[id] = r.Allowlists
		}
	}
	return cfg.Allowlists, byRule, nil
}

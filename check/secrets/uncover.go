package secrets

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/zricethezav/gitleaks/v8/report"
)

// maxUncoverRounds bounds how many times detectThrough reads a file again with the values
// found so far blanked out.
const maxUncoverRounds = 16

// errTooDeep is detectThrough's error: values hidden behind values more than
// maxUncoverRounds deep. The scan then fails, and under Block the patch is refused as not
// scanned, never published half read.
var errTooDeep = fmt.Errorf("a file hides values behind other values more than %d deep", maxUncoverRounds)

// A rule's match ends at the first value it can take: a Kubernetes Secret's match takes the
// first entry of its data, and gitleaks goes on reading after the match's end. So a value the
// patch writes first (a placeholder `note: ""`, a value the base already held, a fixture the
// base's allow-list names) hides every value after it from that rule: the rule finds the
// first, which an allow rule lets through, and never the second. uncover reads the content
// again with every value found so far blanked (its bytes turned to spaces, line breaks kept,
// so that lines keep their numbers), and again, until a round finds nothing new; a value is
// then judged on its own, whatever stands before it.

// hitKey identifies a hit across rounds: the same value by the same rule on the same line.
type hitKey struct {
	rule   string
	line   int
	secret valueKey
}

// detectThrough is detectAll over content and over content with the values found so far
// blanked, round after round, until a round finds nothing new (uncover).
func (rs *ruleSet) detectThrough(ctx context.Context, path string, content []byte) ([]hit, error) {
	all, deep := uncover(content, func(b []byte) []hit { return rs.detectAll(ctx, path, b) },
		func(h hit) (hitKey, string) { return hitKey{h.RuleID, h.line, keyOf(h.RuleID, h.Secret)}, h.Secret })
	if deep {
		return nil, errTooDeep
	}
	return all, ctx.Err()
}

// uncoverString is detectThrough for Redact's detector over a text, without an error: past
// maxUncoverRounds it returns what it found, and the text is redacted of that.
func uncoverString(s string, detect func(string) []report.Finding) []report.Finding {
	all, _ := uncover([]byte(s), func(b []byte) []report.Finding { return detect(string(b)) },
		func(f report.Finding) (hitKey, string) {
			return hitKey{f.RuleID, f.StartLine, keyOf(f.RuleID, f.Secret)}, f.Secret
		})
	return all
}

// uncover runs detect over content, then over content with the values of the last round's new
// finds blanked, until a round finds nothing new or blanks nothing; id names a find across
// rounds and gives its value. deep: round maxUncoverRounds still had values to blank, and
// what is returned may miss some.
func uncover[T any](content []byte, detect func([]byte) []T, id func(T) (hitKey, string)) (all []T, deep bool) {
	all = detect(content)
	seen := make(map[hitKey]bool, len(all))
	for _, h := range all {
		k, _ := id(h)
		seen[k] = true
	}
	fresh := all
	for round := 0; len(fresh) > 0; round++ {
		values := make([]string, 0, len(fresh))
		for _, h := range fresh {
			_, v := id(h)
			values = append(values, v)
		}
		next := blank(content, values)
		if bytes.Equal(next, content) {
			break
		}
		if round == maxUncoverRounds {
			return all, true
		}
		content, fresh = next, nil
		for _, h := range detect(content) {
			if k, _ := id(h); !seen[k] {
				seen[k] = true
				all = append(all, h)
				fresh = append(fresh, h)
			}
		}
	}
	return all, false
}

// blank returns content with every occurrence of each of values turned to spaces, line breaks
// kept (a multi-byte letter becomes as many spaces as it has bytes). One pass over content
// (a strings.Replacer, the longest value first where two start at the same place), however many
// values there are.
func blank(content []byte, values []string) []byte {
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	var pairs []string
	seen := map[string]bool{}
	for _, v := range values {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		b := []byte(v)
		for i, c := range b {
			if c != '\n' && c != '\r' {
				b[i] = ' '
			}
		}
		pairs = append(pairs, v, string(b))
	}
	if len(pairs) == 0 {
		return content
	}
	return []byte(strings.NewReplacer(pairs...).Replace(string(content)))
}

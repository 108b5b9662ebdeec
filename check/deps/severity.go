package deps

import (
	"fmt"
	"slices"
	"strings"

	osvpb "github.com/ossf/osv-schema/bindings/go/osvschema"
	gocvss20 "github.com/pandatix/go-cvss/20"
	gocvss30 "github.com/pandatix/go-cvss/30"
	gocvss31 "github.com/pandatix/go-cvss/31"
	gocvss40 "github.com/pandatix/go-cvss/40"
)

// This file reads what a reviewer is told of a matched record: its fixed versions and its
// severity.

// affectedOf returns the record's entries for p's package.
func affectedOf(v *osvpb.Vulnerability, p Package) []*osvpb.Affected {
	var out []*osvpb.Affected
	for _, a := range v.GetAffected() {
		e, _, _ := strings.Cut(a.GetPackage().GetEcosystem(), ":")
		if e == p.Ecosystem && loose(a.GetPackage().GetName()) == loose(p.Name) {
			out = append(out, a)
		}
	}
	return out
}

// fixed lists the versions that fix v for p's package, in the record's order.
func fixed(v *osvpb.Vulnerability, p Package) []string {
	var out []string
	for _, a := range affectedOf(v, p) {
		for _, r := range a.GetRanges() {
			for _, e := range r.GetEvents() {
				if f := e.GetFixed(); f != "" && !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// severity is the database's own rating (database_specific.severity, of the record or of
// p's entry) and the highest CVSS base score the record or the entry gives, computed from its
// vector with go-cvss.
func severity(v *osvpb.Vulnerability, p Package) string {
	var parts []string
	rating := v.GetDatabaseSpecific().GetFields()["severity"].GetStringValue()
	sevs := v.GetSeverity()
	for _, a := range affectedOf(v, p) {
		if rating == "" {
			rating = a.GetDatabaseSpecific().GetFields()["severity"].GetStringValue()
		}
		if rating == "" {
			rating = a.GetEcosystemSpecific().GetFields()["severity"].GetStringValue()
		}
		sevs = append(sevs, a.GetSeverity()...)
	}
	if rating != "" {
		parts = append(parts, strings.ToUpper(rating))
	}
	best, name := -1.0, ""
	for _, s := range sevs {
		if score, n, ok := cvssScore(s.GetScore()); ok && score > best {
			best, name = score, n
		}
	}
	if best >= 0 {
		parts = append(parts, fmt.Sprintf("%s %.1f", name, best))
	}
	return strings.Join(parts, "; ")
}

// cvssScore computes the base score of a CVSS vector with go-cvss.
func cvssScore(vec string) (float64, string, bool) {
	switch {
	case strings.HasPrefix(vec, "CVSS:4.0/"):
		if c, err := gocvss40.ParseVector(vec); err == nil {
			return c.Score(), "CVSS 4.0", true
		}
	case strings.HasPrefix(vec, "CVSS:3.1/"):
		if c, err := gocvss31.ParseVector(vec); err == nil {
			return c.BaseScore(), "CVSS 3.1", true
		}
	case strings.HasPrefix(vec, "CVSS:3.0/"):
		if c, err := gocvss30.ParseVector(vec); err == nil {
			return c.BaseScore(), "CVSS 3.0", true
		}
	case strings.HasPrefix(vec, "AV:"):
		if c, err := gocvss20.ParseVector(vec); err == nil {
			return c.BaseScore(), "CVSS 2.0", true
		}
	}
	return 0, "", false
}

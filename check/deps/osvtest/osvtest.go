// Package osvtest writes small OSV exports for tests: records invented by the test, zipped as
// OSV publishes them (DIR/<Ecosystem>/all.zip), for FROGNANO_OSV_DIR. It never fetches one.
package osvtest

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Vuln is an invented vulnerability of one package: versions from Introduced up to (not
// including) Fixed are affected ("" Fixed: no fix known).
type Vuln struct {
	ID, Ecosystem, Package, Introduced, Fixed string
	Aliases                                   []string
	Summary                                   string
	Severity                                  string // database_specific.severity, as GitHub's advisories give it
	CVSS                                      string // a CVSS vector, "" for none
	Withdrawn                                 bool
}

// JSON renders v as an OSV record.
func (v Vuln) JSON() string {
	events := []map[string]string{{"introduced": v.Introduced}}
	if v.Fixed != "" {
		events = append(events, map[string]string{"fixed": v.Fixed})
	}
	rec := map[string]any{
		"schema_version": "1.6.0",
		"id":             v.ID,
		"modified":       "2026-01-02T03:04:05Z",
		"summary":        v.Summary,
		"affected": []any{map[string]any{
			"package": map[string]string{"ecosystem": v.Ecosystem, "name": v.Package},
			"ranges":  []any{map[string]any{"type": "ECOSYSTEM", "events": events}},
		}},
	}
	if len(v.Aliases) > 0 {
		rec["aliases"] = v.Aliases
	}
	if v.Severity != "" {
		rec["database_specific"] = map[string]string{"severity": v.Severity}
	}
	if v.CVSS != "" {
		rec["severity"] = []any{map[string]string{"type": "CVSS_V3", "score": v.CVSS}}
	}
	if v.Withdrawn {
		rec["withdrawn"] = "2026-01-03T00:00:00Z"
	}
	b, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Write writes files (name in the zip -> content) as dir/eco/all.zip.
func Write(t testing.TB, dir, eco string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, eco), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, eco, "all.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for name, rec := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// Export writes vulns, grouped by ecosystem, as OSV's exports under dir, one record a file
// named after its id; it returns dir.
func Export(t testing.TB, dir string, vulns ...Vuln) string {
	t.Helper()
	by := map[string]map[string]string{}
	for _, v := range vulns {
		if by[v.Ecosystem] == nil {
			by[v.Ecosystem] = map[string]string{}
		}
		by[v.Ecosystem][v.ID+".json"] = v.JSON()
	}
	for eco, files := range by {
		Write(t, dir, eco, files)
	}
	return dir
}

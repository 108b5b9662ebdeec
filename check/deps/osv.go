package deps

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/google/osv-scalibr/enricher/vulnmatch/osvlocal"
	osvpb "github.com/ossf/osv-schema/bindings/go/osvschema"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Vuln is one known vulnerability of a version a patch adds.
type Vuln struct {
	ID      string   // OSV's id (GHSA-..., PYSEC-..., GO-..., RUSTSEC-...)
	Aliases []string // other ids of it, CVE ids among them
	Summary string
	// Severity is the database's own rating and the CVSS base score when the record gives
	// them ("HIGH; CVSS 3.1 7.5"), "" when it gives neither.
	Severity string
	Version  string   // the version found vulnerable
	Fixed    []string // the versions that fix it, for this package; none when no fix is known
}

// Export limits: what one run reads of the operator's exports. A record or export over
// them is skipped with a note, never half-read.
const (
	maxExportFile  = 2 << 30  // an all.zip file
	maxRecordBytes = 4 << 20  // one record, uncompressed
	maxReadBytes   = 16 << 30 // all records of one export, uncompressed
	maxKept        = 10000    // records kept for the patch's packages
)

// ecosystems are the exports read, by OSV's ecosystem name, which is also the directory name
// of OSV's export (DIR/PyPI/all.zip).
var ecosystems = map[string]bool{"PyPI": true, "Go": true, "npm": true, "crates.io": true}

// OSV is the operator's offline copy of OSV's per-ecosystem exports, as OSV publishes them:
// Dir/<Ecosystem>/all.zip, a zip of one OSV JSON record per vulnerability.
//
// Each Check reads the exports of the ecosystems the patch touches, entry by entry (the
// zip is read from the file, never whole into memory), and keeps only the records that name
// one of the patch's packages. It does not cache between runs: the measured cost
// (BenchmarkCheck) is that of one read of the export, paid only by a run whose patch changes
// dependencies of that ecosystem, while a cache would hold an export's records in memory for
// every run.
type OSV struct{ Dir string }

// Check matches the new version of every added or changed package of rep against the
// exports and fills Change.Vulns, using SCALIBR's offline matcher and its version semantics.
// It sets rep.VulnData, and rep.VulnChecked to the ecosystems it checked. An export that is missing, too large or malformed is a note and
// leaves the changes of its ecosystem unchecked; nothing else changes.
func (db OSV) Check(ctx context.Context, rep *Report) {
	if rep == nil {
		return
	}
	rep.VulnData = true
	wanted := map[string]map[string]bool{} // ecosystem -> name -> true
	var ecos []string
	for _, c := range rep.Changes {
		for _, p := range c.New {
			if p.Version == "" || p.pkg == nil || !ecosystems[p.Ecosystem] {
				continue
			}
			if wanted[p.Ecosystem] == nil {
				wanted[p.Ecosystem] = map[string]bool{}
				ecos = append(ecos, p.Ecosystem)
			}
			wanted[p.Ecosystem][p.Name] = true
		}
	}
	sort.Strings(ecos)
	for _, eco := range ecos {
		if ctx.Err() != nil {
			rep.Notes = append(rep.Notes, "The check for known vulnerabilities was cancelled.")
			return
		}
		idx, notes, err := db.load(eco, wanted[eco])
		rep.Notes = append(rep.Notes, notes...)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("The %s packages were not checked for known vulnerabilities: %v.", eco, err))
			continue
		}
		rep.VulnChecked = append(rep.VulnChecked, eco)
		for i := range rep.Changes {
			c := &rep.Changes[i]
			if c.Ecosystem != eco {
				continue
			}
			for _, p := range c.New {
				vs, err := match(idx[loose(p.Name)], p)
				if err != nil {
					rep.Notes = append(rep.Notes, fmt.Sprintf("%s %s could not be checked for known vulnerabilities: %v.", p.Name, p.Display(), err))
				}
				c.Vulns = append(c.Vulns, vs...)
			}
		}
	}
}

// load reads DIR/eco/all.zip and returns its records that name one of the packages, by
// loose name, with notes about the records it skipped.
func (db OSV) load(eco string, pkgNames map[string]bool) (map[string][]*osvpb.Vulnerability, []string, error) {
	names := map[string]bool{}
	for n := range pkgNames {
		names[loose(n)] = true
	}
	p := filepath.Join(db.Dir, eco, "all.zip")
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("FROGNANO_OSV_DIR holds no %s/all.zip", eco)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s/all.zip: %w", eco, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s/all.zip: %w", eco, err)
	}
	if !st.Mode().IsRegular() || st.Size() > maxExportFile {
		return nil, nil, fmt.Errorf("%s/all.zip is not a regular file of at most %d GiB", eco, maxExportFile>>30)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("%s/all.zip is not a zip file OSV exports: %w", eco, err)
	}
	idx := map[string][]*osvpb.Vulnerability{}
	pre := newPrefilter(pkgNames)
	var read int64
	var tooLarge, bad, kept int
	buf := make([]byte, 0, 64<<10)
	for _, zf := range zr.File {
		if !strings.HasSuffix(zf.Name, ".json") || zf.FileInfo().IsDir() {
			continue
		}
		if zf.UncompressedSize64 > maxRecordBytes {
			tooLarge++
			continue
		}
		buf, err = readEntry(zf, buf[:0])
		if errors.Is(err, errTooLarge) {
			tooLarge++
			continue
		}
		if err != nil {
			bad++
			continue
		}
		if read += int64(len(buf)); read > maxReadBytes {
			return nil, nil, fmt.Errorf("%s/all.zip holds over %d GiB of records", eco, maxReadBytes>>30)
		}
		if !pre.mayName(buf) {
			continue
		}
		hit, ok := names4(buf, eco, names)
		if !ok {
			bad++
			continue
		}
		if len(hit) == 0 {
			continue
		}
		v := &osvpb.Vulnerability{}
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(buf, v); err != nil {
			bad++
			continue
		}
		if kept++; kept > maxKept {
			return nil, nil, fmt.Errorf("%s/all.zip names the patch's packages in over %d records", eco, maxKept)
		}
		for _, n := range hit {
			idx[n] = append(idx[n], v)
		}
	}
	var notes []string
	if tooLarge > 0 {
		notes = append(notes, fmt.Sprintf("%d record(s) of %s/all.zip are over %d MiB and were skipped.", tooLarge, eco, maxRecordBytes>>20))
	}
	if bad > 0 {
		notes = append(notes, fmt.Sprintf("%d record(s) of %s/all.zip could not be read as OSV records and were skipped.", bad, eco))
	}
	return idx, notes, nil
}

var errTooLarge = errors.New("record too large")

// readEntry reads one record, at most maxRecordBytes whatever its header claims.
func readEntry(zf *zip.File, buf []byte) ([]byte, error) {
	rc, err := zf.Open()
	if err != nil {
		return buf, err
	}
	defer rc.Close()
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(cap(buf), 4096))
		}
		n, err := rc.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > maxRecordBytes {
			return buf, errTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// prefilter skips, before any JSON decoding, the records that cannot name one of the
// packages: a record names a package only if it holds, in some letter case, the longest run
// of ASCII letters and digits of its name (JSON writers never escape those). A name without
// such a run of 3 or more turns the prefilter off.
type prefilter struct {
	needles [][]byte
	off     bool
	lower   []byte
}

func newPrefilter(names map[string]bool) *prefilter {
	p := &prefilter{}
	for n := range names {
		best := ""
		for _, run := range strings.FieldsFunc(strings.ToLower(n), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		}) {
			if len(run) > len(best) {
				best = run
			}
		}
		if len(best) < 3 {
			p.off = true
		}
		p.needles = append(p.needles, []byte(best))
	}
	return p
}

// mayName reports whether rec may name one of the packages.
func (p *prefilter) mayName(rec []byte) bool {
	if p.off {
		return true
	}
	p.lower = append(p.lower[:0], rec...)
	for i, c := range p.lower {
		if c >= 'A' && c <= 'Z' {
			p.lower[i] = c + 'a' - 'A'
		}
	}
	for _, n := range p.needles {
		if bytes.Contains(p.lower, n) {
			return true
		}
	}
	return false
}

// recordHead is what a record's names are read from before it is parsed whole.
type recordHead struct {
	Affected []struct {
		Package struct {
			Ecosystem string `json:"ecosystem"`
			Name      string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

// names4 returns the loose names of the record's affected packages of eco ("PyPI", or
// "Debian:12" style variants of it) that are among names; ok is false when the record is not
// JSON of that shape.
func names4(rec []byte, eco string, names map[string]bool) (hit []string, ok bool) {
	var h recordHead
	if err := json.Unmarshal(rec, &h); err != nil {
		return nil, false
	}
	for _, a := range h.Affected {
		e, _, _ := strings.Cut(a.Package.Ecosystem, ":")
		if e != eco {
			continue
		}
		if n := loose(a.Package.Name); names[n] && !slices.Contains(hit, n) {
			hit = append(hit, n)
		}
	}
	return hit, true
}

// loose is the key records are kept under: lower case without "-", "_" and ".". Two names
// the matcher takes for one package (PyPI's normalisation included) have the same loose
// name; the matcher then decides.
func loose(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.':
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, name)
}

// match returns the vulnerabilities of recs that affect p's version, as SCALIBR's offline
// matcher judges (withdrawn ones left out). The matcher sorts a record's events in place, so it
// is given copies; a panic of the version parser is an error.
func match(recs []*osvpb.Vulnerability, p Package) (out []Vuln, err error) {
	if len(recs) == 0 || p.Version == "" || p.pkg == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the version could not be compared")
		}
	}()
	cp := make([]*osvpb.Vulnerability, len(recs))
	for i, r := range recs {
		cp[i] = proto.Clone(r).(*osvpb.Vulnerability)
	}
	for _, v := range osvlocal.VulnerabilitiesAffectingPackage(cp, p.pkg) {
		out = append(out, Vuln{
			ID: v.GetId(), Aliases: v.GetAliases(), Summary: v.GetSummary(), Severity: severity(v, p),
			Version: p.Version, Fixed: fixed(v, p),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

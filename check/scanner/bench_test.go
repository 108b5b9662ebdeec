package scanner

import (
	"fmt"
	"testing"
)

// BenchmarkRead parses and filters a scanner's log of a large repository: 5,000 results over
// 500 files (about 2 MB of SARIF, the shape semgrep writes), against a patch that changes 20
// lines in each of 10 of those files; 100 results land on changed lines.
func BenchmarkRead(b *testing.B) {
	var frags []Added
	for f := range 10 {
		frags = append(frags, Added{Path: fmt.Sprintf("pkg%d/file%d.py", f%50, f), Line: 1, Text: "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\nq\nr\ns\nt"})
	}
	changed := ChangedLines(frags)
	var rs []map[string]any
	for i := range 5000 {
		f := i % 500
		r := result(fmt.Sprintf("python.lang.security.rule-%d", i%40), "warning",
			"Detected a dangerous call with a value that may come from the user; review how it is built and quote it.",
			fmt.Sprintf("pkg%d/file%d.py", f%50, f), i/500*2+1)
		r["fingerprints"] = map[string]any{"matchBasedId/v1": fmt.Sprintf("%064x", i)}
		rs = append(rs, r)
	}
	data := sarifLog(nil, rs...)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		got, err := Read(data, "/workspace", changed)
		if err != nil || len(got.Kept) != 100 {
			b.Fatalf("kept %d, %v", len(got.Kept), err)
		}
	}
}

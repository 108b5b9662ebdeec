package scanner

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRead: whatever a scanner writes, Read never panics, keeps only findings on changed lines
// of repository paths, within its bounds, and quotes nothing of its input in an error.
func FuzzRead(f *testing.F) {
	f.Add(sarifLog(nil, result("py.eval", "error", "eval", "app/a.py", 10), result("s", "note", "m", "app/a.py", 7)))
	f.Add(sarifLog(map[string]any{"originalUriBaseIds": map[string]any{"S": map[string]any{"uri": "file:///workspace/app/"}}},
		map[string]any{"ruleId": "r", "locations": []any{map[string]any{"physicalLocation": map[string]any{
			"artifactLocation": map[string]any{"uri": "a.py", "uriBaseId": "S"}, "region": map[string]any{"startLine": 3, "endLine": 2}}}}}))
	f.Add(sarifLog(nil, result("x", "error", "m", "../../etc/passwd", 1), result("x", "warning", "m", "file:///workspace/lib/new.py", 2)))
	f.Add([]byte(`{"version":"2.1.0","runs":[null,{"results":[null,{"locations":[null]}]}]}`))
	f.Add([]byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"rules":[{"id":"a","messageStrings":{"d":{"text":"{0}{0}{1}"}}}]}},"results":[{"ruleId":"a","message":{"id":"d","arguments":["{1}","{0}"]},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"lib/new.py"},"region":{"startLine":1}}}]}]}]}`))
	f.Add([]byte("garbage\x00"))
	f.Add([]byte(`{"version":"2.1.0","runs":[{"artifacts":[{"location":{"uri":"lib/new.py"}}],"results":[{"locations":[{"physicalLocation":{"artifactLocation":{"index":-3},"region":{"startLine":-1}}}]}]}]}`))
	changed := testChanged()
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Read(data, "/workspace", changed)
		if err != nil {
			if len(data) > 8 && strings.Contains(err.Error(), string(data)) {
				t.Fatalf("the error quotes the input: %v", err)
			}
			if len(got.Kept) != 0 {
				t.Fatal("findings kept from a log that was refused")
			}
			return
		}
		if len(got.Kept) > MaxFindings {
			t.Fatalf("%d findings kept", len(got.Kept))
		}
		for _, k := range got.Kept {
			if !changed.Touches(k.File, k.Line, k.EndLine) || k.EndLine < k.Line || k.Line < 1 {
				t.Fatalf("a finding off the changed lines: %+v", k)
			}
			if !utf8.ValidString(k.Message) || !utf8.ValidString(k.Rule) || utf8.RuneCountInString(k.Message) > maxMessage+1 ||
				utf8.RuneCountInString(k.Rule) > maxRule+1 || strings.ContainsAny(k.Message+k.Rule, "\n\r\t") {
				t.Fatalf("a finding's text is out of bounds: %+v", k)
			}
		}
	})
}

package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExecute feeds arbitrary tool names and argument text to the file tools. Bash is
// left out on purpose: fuzzed shell commands would run on the developer's machine.
func FuzzExecute(f *testing.F) {
	seeds := []struct{ tool, args string }{
		{"Read", `{"file_path":"a.txt","offset":2,"limit":1}`},
		{"Read", `{"path":"sub/../a.txt","offset":"x"}`},
		{"Read", `{"file_path":["a"],"limit":1e999}`},
		{"Write", `{"file_path":"new/f.txt","content":"x\r\ny"}`},
		{"Write", `{"file_path":"a.txt","content":{"k":[1.0,null,true]}}`},
		{"Edit", `{"file_path":"a.txt","old_string":"one","new_string":"1","replace_all":"yes"}`},
		{"Edit", `{"file_path":"a.txt","old_string":0}`},
		{"Glob", `{"pattern":"**/*.txt"}`},
		{"Glob", `{"pattern":"[!a-]*[","path":"sub"}`},
		{"Glob", `{"pattern":"[z-a][]]*?"}`},
		{"Nope", `not json`},
		{"Read", `[[[[[[[[[[]]]]]]]]]]`},
		{"Write", `{"file_path":"~","content":""}`},
		// Issue #8: what json.loads reads differently from encoding/json.
		{"Write", `{"file_path":"w.txt","content":"x"}]`},
		{"Read", `{"file_path":NaN,"offset":-Infinity,"limit":Infinity}`},
		{"Write", `{"file_path":"w.txt","content":"\ud800\udc80x"}`},
		{"Read", `{"file_path":"a.txt","offset":"١_٢"}`},
		{"Glob", `{"pattern":"a.txt/**"}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args)
	}
	f.Fuzz(func(t *testing.T, tool, args string) {
		switch tool {
		case "Bash":
			tool = "Read"
		case "Read", "Write", "Edit", "Glob":
		default:
			if len(tool) > 0 {
				// Map most names onto a real tool so the fuzzer spends its time there.
				tool = []string{"Read", "Write", "Edit", "Glob", tool}[int(tool[0])%5]
			}
		}
		if tool == "Bash" {
			return
		}
		// Absolute or home paths could touch the machine; keep the fuzzer inside.
		if strings.Contains(args, "/") || strings.Contains(args, "~") || strings.Contains(args, `\u`) {
			return
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		obs := Execute(context.Background(), dir, tool, args)
		if obs == "" && tool != "Glob" {
			t.Fatalf("empty observation for %s %q", tool, args)
		}
		if !utf8.ValidString(obs) {
			t.Fatalf("observation is not UTF-8: %q", obs)
		}
	})
}

package executor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchServe starts Serve over pipes in dir and returns a function making one call.
func benchServe(b *testing.B, dir string) func(req string) {
	b.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		_ = Serve(context.Background(), inR, outW, dir, Options{})
		outW.Close()
	}()
	b.Cleanup(func() { inW.Close(); outR.Close() })
	out := bufio.NewReader(outR)
	if _, err := out.ReadBytes('\n'); err != nil { // the ready line
		b.Fatal(err)
	}
	return func(req string) {
		if _, err := io.WriteString(inW, req+"\n"); err != nil {
			b.Fatal(err)
		}
		line, err := out.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		var resp Response
		if err := json.Unmarshal(line, &resp); err != nil || strings.Contains(resp.Observation, "Error") {
			b.Fatalf("bad response %q: %v", line, err)
		}
	}
}

func BenchmarkServeRead200Lines(b *testing.B) {
	dir := b.TempDir()
	var src strings.Builder
	for i := range 200 {
		fmt.Fprintf(&src, "\tvalue%d := compute(%d) // a typical line of source code\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "f.go"), []byte(src.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	call := benchServe(b, dir)
	req := `{"id":"r","tool":"Read","arguments":"{\"file_path\":\"f.go\"}"}`
	b.ReportAllocs()
	for b.Loop() {
		call(req)
	}
}

func BenchmarkServeBashTrue(b *testing.B) {
	dir := b.TempDir()
	call := benchServe(b, dir)
	req := `{"id":"b","tool":"Bash","arguments":"{\"command\":\"true\"}"}`
	for b.Loop() {
		call(req)
	}
}

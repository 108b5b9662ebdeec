package patch

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// public drops the unexported bookkeeping so Files can be compared.
func public(files []File) []File {
	out := make([]File, len(files))
	for i, f := range files {
		f.raw, f.symlinkLines = nil, 0
		out[i] = f
	}
	return out
}

// TestRealGit produces diffs with the real git CLI, parses and sanitizes them, and
// applies the filtered patch in a clean clone of the base commit.
func TestRealGit(t *testing.T) {
	t.Parallel()
	const text = "line one\nline two\nline three\nline four\nline five\n"
	tests := []struct {
		name    string
		base    map[string]string
		change  func(r *testRepo)
		opt     Options
		want    []File
		dropped []Dropped
	}{{
		name:   "ModifiedWithSpaces",
		base:   map[string]string{"a b.txt": "hello\nworld\n"},
		change: func(r *testRepo) { r.write("a b.txt", "hello\nthere\n") },
		want:   []File{{OldPath: "a b.txt", NewPath: "a b.txt", Status: StatusModified, OldMode: ModeFile, NewMode: ModeFile, Added: 1, Deleted: 1}},
	}, {
		name:   "NewFile",
		base:   map[string]string{"keep": "k\n"},
		change: func(r *testRepo) { r.write("pkg/new.go", "package pkg\n\nfunc F() {}\n") },
		want:   []File{{NewPath: "pkg/new.go", Status: StatusAdded, NewMode: ModeFile, Added: 3}},
	}, {
		name:   "EmptyNewFile",
		base:   map[string]string{"keep": "k\n"},
		change: func(r *testRepo) { r.write("empty", "") },
		want:   []File{{NewPath: "empty", Status: StatusAdded, NewMode: ModeFile}},
	}, {
		name:   "DeletedFile",
		base:   map[string]string{"gone.txt": "a\nb\n", "keep": "k\n"},
		change: func(r *testRepo) { r.remove("gone.txt") },
		want:   []File{{OldPath: "gone.txt", Status: StatusDeleted, OldMode: ModeFile, Deleted: 2}},
	}, {
		name:   "Rename",
		base:   map[string]string{"old name.txt": text},
		change: func(r *testRepo) { r.remove("old name.txt"); r.write("dir/new name.txt", text+"six\n") },
		want:   []File{{OldPath: "old name.txt", NewPath: "dir/new name.txt", Status: StatusRenamed, OldMode: ModeFile, NewMode: ModeFile, Added: 1}},
	}, {
		name:   "PureRename",
		base:   map[string]string{"x.txt": text},
		change: func(r *testRepo) { r.remove("x.txt"); r.write("y.txt", text) },
		want:   []File{{OldPath: "x.txt", NewPath: "y.txt", Status: StatusRenamed}},
	}, {
		name:   "PureRenameOfSymlink",
		base:   map[string]string{"x": "x\n", "a/l": "->../x"},
		change: func(r *testRepo) { r.remove("a/l"); r.write("b/l", "->../x") },
		want:   []File{{OldPath: "a/l", NewPath: "b/l", Status: StatusRenamed, OldMode: ModeSymlink, NewMode: ModeSymlink, IsSymlink: true, SymlinkTarget: "../x"}},
	}, {
		name:   "BinaryModified",
		base:   map[string]string{"bin.dat": binary(300, 1)},
		change: func(r *testRepo) { r.write("bin.dat", binary(300, 2)) },
		want:   []File{{OldPath: "bin.dat", NewPath: "bin.dat", Status: StatusModified, OldMode: ModeFile, NewMode: ModeFile, Binary: true}},
	}, {
		name:   "BinaryNew",
		base:   map[string]string{"keep": "k\n"},
		change: func(r *testRepo) { r.write("img.png", binary(5000, 3)) },
		want:   []File{{NewPath: "img.png", Status: StatusAdded, NewMode: ModeFile, Binary: true}},
	}, {
		name:   "ModeChange",
		base:   map[string]string{"run.sh": "#!/bin/sh\n"},
		change: func(r *testRepo) { r.chmod("run.sh", 0o755) },
		want:   []File{{OldPath: "run.sh", NewPath: "run.sh", Status: StatusMode, OldMode: ModeFile, NewMode: ModeExecutable}},
	}, {
		name:   "ModeAndContent",
		base:   map[string]string{"run.sh": "#!/bin/sh\n"},
		change: func(r *testRepo) { r.write("run.sh", "#!/bin/sh\necho hi\n"); r.chmod("run.sh", 0o755) },
		want:   []File{{OldPath: "run.sh", NewPath: "run.sh", Status: StatusModified, OldMode: ModeFile, NewMode: ModeExecutable, Added: 1}},
	}, {
		name:   "SymlinkInRepo",
		base:   map[string]string{"a b.txt": "x\n"},
		change: func(r *testRepo) { r.write("sub/link", "->../a b.txt") },
		want:   []File{{NewPath: "sub/link", Status: StatusAdded, NewMode: ModeSymlink, Added: 1, IsSymlink: true, SymlinkTarget: "../a b.txt"}},
	}, {
		name:   "SymlinkRetarget",
		base:   map[string]string{"a": "x\n", "b": "y\n", "l": "->a"},
		change: func(r *testRepo) { r.write("l", "->b") },
		want:   []File{{OldPath: "l", NewPath: "l", Status: StatusModified, OldMode: ModeSymlink, NewMode: ModeSymlink, Added: 1, Deleted: 1, IsSymlink: true, SymlinkTarget: "b"}},
	}, {
		name:   "TypeChangeFileToSymlink",
		base:   map[string]string{"a": "x\n", "f": "y\n"},
		change: func(r *testRepo) { r.write("f", "->a") },
		want: []File{
			{OldPath: "f", Status: StatusDeleted, OldMode: ModeFile, Deleted: 1},
			{NewPath: "f", Status: StatusAdded, NewMode: ModeSymlink, Added: 1, IsSymlink: true, SymlinkTarget: "a"},
		},
	}, {
		name:   "DeletedSymlink",
		base:   map[string]string{"a": "x\n", "l": "->a"},
		change: func(r *testRepo) { r.remove("l") },
		want:   []File{{OldPath: "l", Status: StatusDeleted, OldMode: ModeSymlink, Deleted: 1, IsSymlink: true}},
	}, {
		name:   "UnicodeAndQuotes",
		base:   map[string]string{"keep": "k\n"},
		change: func(r *testRepo) { r.write("dïr/ünï côdé.txt", "u\n"); r.write(`say "hi".txt`, "q\n") },
		want: []File{
			{NewPath: "dïr/ünï côdé.txt", Status: StatusAdded, NewMode: ModeFile, Added: 1},
			{NewPath: `say "hi".txt`, Status: StatusAdded, NewMode: ModeFile, Added: 1},
		},
	}, {
		name:   "CRLFAndNoFinalNewline",
		base:   map[string]string{"w.txt": "a\r\nb\r\n", "n.txt": "no newline"},
		change: func(r *testRepo) { r.write("w.txt", "a\r\nc\r\n"); r.write("n.txt", "still none") },
		want: []File{
			{OldPath: "n.txt", NewPath: "n.txt", Status: StatusModified, OldMode: ModeFile, NewMode: ModeFile, Added: 1, Deleted: 1},
			{OldPath: "w.txt", NewPath: "w.txt", Status: StatusModified, OldMode: ModeFile, NewMode: ModeFile, Added: 1, Deleted: 1},
		},
	}, {
		name: "WorkflowDropped",
		base: map[string]string{".github/workflows/ci.yml": "on: push\n", "main.py": "x = 1\n"},
		change: func(r *testRepo) {
			r.write(".github/workflows/ci.yml", "on: [push, pull_request]\n")
			r.write("main.py", "x = 2\n")
		},
		want:    []File{{OldPath: "main.py", NewPath: "main.py", Status: StatusModified, OldMode: ModeFile, NewMode: ModeFile, Added: 1, Deleted: 1}},
		dropped: []Dropped{{Path: ".github/workflows/ci.yml", Reason: DropWorkflow}},
	}, {
		name:   "WorkflowAllowed",
		base:   map[string]string{".github/workflows/ci.yml": "on: push\n"},
		change: func(r *testRepo) { r.write(".github/workflows/ci.yml", "on: [push]\n") },
		opt:    Options{AllowWorkflowChanges: true},
		want:   []File{{OldPath: ".github/workflows/ci.yml", NewPath: ".github/workflows/ci.yml", Status: StatusModified, OldMode: ModeFile, NewMode: ModeFile, Added: 1, Deleted: 1}},
	}, {
		name: "LitterDroppedTrackedKept",
		base: map[string]string{"app.py": "x = 1\n", "vendor/tracked.pyc": binary(40, 9)},
		change: func(r *testRepo) {
			r.write("app.py", "x = 2\n")
			r.write("__pycache__/app.cpython-311.pyc", binary(200, 4))
			r.write("tests/__pycache__/t.pyc", binary(50, 5))
			r.write(".pytest_cache/v/cache/lastfailed", "{}\n")
			r.write("node_modules/left-pad/index.js", "module.exports = 1\n")
			r.write("pkg.egg-info/PKG-INFO", "Name: pkg\n")
			r.write(".coverage", binary(30, 6))
			r.write("vendor/tracked.pyc", binary(40, 10))
		},
		want: []File{
			{OldPath: "app.py", NewPath: "app.py", Status: StatusModified, OldMode: ModeFile, NewMode: ModeFile, Added: 1, Deleted: 1},
			{OldPath: "vendor/tracked.pyc", NewPath: "vendor/tracked.pyc", Status: StatusModified, OldMode: ModeFile, NewMode: ModeFile, Binary: true},
		},
		dropped: []Dropped{
			{Path: ".coverage", Reason: DropLitter},
			{Path: ".pytest_cache/v/cache/lastfailed", Reason: DropLitter},
			{Path: "__pycache__/app.cpython-311.pyc", Reason: DropLitter},
			{Path: "node_modules/left-pad/index.js", Reason: DropLitter},
			{Path: "pkg.egg-info/PKG-INFO", Reason: DropLitter},
			{Path: "tests/__pycache__/t.pyc", Reason: DropLitter},
		},
	}, {
		name: "AbsoluteSymlinkInLitterIsDropped",
		base: map[string]string{"keep": "k\n"},
		change: func(r *testRepo) {
			r.write(".venv/bin/python", "->/usr/bin/python3")
			r.write("keep", "k2\n")
		},
		want:    []File{{OldPath: "keep", NewPath: "keep", Status: StatusModified, OldMode: ModeFile, NewMode: ModeFile, Added: 1, Deleted: 1}},
		dropped: []Dropped{{Path: ".venv/bin/python", Reason: DropLitter}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, tc.base)
			tc.change(r)
			diff, tree := r.diff()

			p, err := Parse(diff)
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, diff)
			}
			if !bytes.Equal(p.Bytes(), diff) {
				t.Errorf("Bytes() does not reproduce the diff")
			}
			tc.opt.BaseSymlink = r.baseSymlink
			res, err := Sanitize(diff, tc.opt)
			if err != nil {
				t.Fatalf("Sanitize: %v\n%s", err, diff)
			}
			if got := fmt.Sprint(public(res.Files)); got != fmt.Sprint(tc.want) {
				t.Errorf("kept files:\n got %+v\nwant %+v", public(res.Files), tc.want)
			}
			if fmt.Sprint(res.Dropped) != fmt.Sprint(tc.dropped) {
				t.Errorf("dropped:\n got %v\nwant %v", res.Dropped, tc.dropped)
			}
			if res.TooLarge || res.Size != int64(len(res.Diff)) {
				t.Errorf("TooLarge=%v Size=%d len=%d", res.TooLarge, res.Size, len(res.Diff))
			}
			applied := r.applyClean(res.Diff)
			if len(tc.dropped) == 0 && applied != tree {
				t.Errorf("applied tree %s, want the sandbox's staged tree %s", applied, tree)
			}
		})
	}
}

// TestRealGitRefused checks that hostile changes made with the real git refuse the
// whole patch, naming the file and the reason.
func TestRealGitRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(r *testRepo)
		path   string
		reason string
	}{
		{"PureRenameMakesSymlinkEscape", func(r *testRepo) { r.remove("a/b/l"); r.write("l", "->../../keep") }, "l", "symlink escapes the repository"},
		{"SymlinkToEtc", func(r *testRepo) { r.write("etc", "->/etc") }, "etc", "symlink to an absolute path"},
		{"SymlinkEscapes", func(r *testRepo) { r.write("a/x", "->../../x") }, "a/x", "symlink escapes the repository"},
		{"SymlinkIntoGit", func(r *testRepo) { r.write("cfg", "->.git/config") }, "cfg", "symlink into .git"},
		{"TabInName", func(r *testRepo) { r.write("tab\tname", "x\n") }, "tab\tname", "control character in path"},
		{"NewlineInName", func(r *testRepo) { r.write("nl\nname", "x\n") }, "nl\nname", "control character in path"},
		{"BackslashInName", func(r *testRepo) { r.write(`..\..\evil`, "x\n") }, `..\..\evil`, "backslash in path"},
		{"HFSDotGit", func(r *testRepo) { r.write(".g\u200cit/hooks/x", "x\n") }, ".g\u200cit/hooks/x", "path into .git"},
		// Published through GitHub's JSON API as "a\uFFFDb.txt": not the name that was checked.
		{"NotUTF8", func(r *testRepo) { r.write("a\xffb.txt", "x\n") }, "a\xffb.txt", "path is not UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, map[string]string{"keep": "k\n", "a/b/l": "->../../keep"})
			tc.change(r)
			r.write("keep", "k2\n")
			diff, _ := r.diff()
			if _, err := Parse(diff); err != nil {
				t.Fatalf("Parse of real git output: %v\n%s", err, diff)
			}
			res, err := Sanitize(diff, Options{BaseSymlink: r.baseSymlink})
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("Sanitize error = %v, want *RefusedError\n%s", err, diff)
			}
			if res == nil || len(res.Diff) != 0 || fmt.Sprint(res.Rejected) != fmt.Sprint(refused.Rejected) {
				t.Fatalf("result on refusal: %+v", res)
			}
			want := Rejected{Path: tc.path, Reason: tc.reason}
			if len(refused.Rejected) != 1 || refused.Rejected[0] != want {
				t.Errorf("rejected %q, want [%q]", refused.Rejected, want)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %q does not give the reason", err)
			}
		})
	}
}

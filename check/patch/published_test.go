package patch

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// collect lists what Published gives for diff on the repository's base.
func (r *testRepo) published(diff []byte) []PublishedFile {
	r.t.Helper()
	var got []PublishedFile
	err := Published(context.Background(), HostGit(r.dir), r.base, diff, func(f PublishedFile) error {
		got = append(got, f)
		return nil
	})
	if err != nil {
		r.t.Fatalf("Published: %v", err)
	}
	return got
}

// TestPublishedListsWhatThePatchedTreeHolds: every path the patch adds, changes (content or
// mode) or renames comes with its whole bytes as the published tree holds them and the bytes
// of the same path, or of the rename's source, in the base; a deleted path is not listed.
func TestPublishedListsWhatThePatchedTreeHolds(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a line that makes the file long enough for git to see a rename\n", 20)
	bin := binary(4096, 7)
	r := newRepo(t, map[string]string{
		"changed.txt":   "one\ntwo\nthree\n",
		"moved/old.txt": long + "the end\n",
		"same/old.txt":  long,
		"script.sh":     "#!/bin/sh\necho hi\n",
		"gone.txt":      "bye\n",
		"data.bin":      bin,
		"link":          "->changed.txt",
	})
	r.write("changed.txt", "one\nTWO\nthree\n")
	r.remove("moved/old.txt")
	r.write("moved/new.txt", long+"a new end\n")
	r.remove("same/old.txt")
	r.write("same/new.txt", long)
	r.chmod("script.sh", 0o755)
	r.remove("gone.txt")
	r.write("data.bin", bin[:2000]+"\x00changed\x00"+bin[2000:])
	r.write("added/file.txt", "new\n")
	r.write("link", "->added/file.txt")
	diff, _ := r.diff()

	got := r.published(diff)
	want := []PublishedFile{
		{Path: "added/file.txt", Mode: ModeFile, Bytes: []byte("new\n")},
		{Path: "changed.txt", Mode: ModeFile, BaseMode: ModeFile, Bytes: []byte("one\nTWO\nthree\n"), Base: []byte("one\ntwo\nthree\n")},
		{Path: "data.bin", Mode: ModeFile, BaseMode: ModeFile, Bytes: []byte(bin[:2000] + "\x00changed\x00" + bin[2000:]), Base: []byte(bin)},
		{Path: "link", Mode: ModeSymlink, BaseMode: ModeSymlink, Bytes: []byte("added/file.txt"), Base: []byte("changed.txt")},
		{Path: "moved/new.txt", From: "moved/old.txt", Mode: ModeFile, BaseMode: ModeFile, Bytes: []byte(long + "a new end\n"), Base: []byte(long + "the end\n")},
		{Path: "same/new.txt", From: "same/old.txt", Mode: ModeFile, BaseMode: ModeFile, Bytes: []byte(long), Base: []byte(long)},
		{Path: "script.sh", Mode: ModeExecutable, BaseMode: ModeFile, Bytes: []byte("#!/bin/sh\necho hi\n"), Base: []byte("#!/bin/sh\necho hi\n")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Published:\n got %+v\nwant %+v", brief(got), brief(want))
	}
	if got[5].BasePath() != "same/old.txt" || !got[5].Renamed() || got[1].BasePath() != "changed.txt" || got[1].Renamed() {
		t.Errorf("BasePath/Renamed: %q %v, %q %v", got[5].BasePath(), got[5].Renamed(), got[1].BasePath(), got[1].Renamed())
	}
}

func brief(fs []PublishedFile) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path+"<-"+f.From+" "+f.BaseMode+">"+f.Mode+" "+
			strings.ReplaceAll(string(f.Base[:min(len(f.Base), 20)]), "\n", "|")+" > "+
			strings.ReplaceAll(string(f.Bytes[:min(len(f.Bytes), 20)]), "\n", "|"))
	}
	return out
}

func TestPublishedStopsAtTheCallersErrorAndReportsApplyErrors(t *testing.T) {
	t.Parallel()
	r := newRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	r.write("a.txt", "A\n")
	r.write("b.txt", "B\n")
	diff, _ := r.diff()
	stop := errors.New("stop")
	n := 0
	err := Published(context.Background(), HostGit(r.dir), r.base, diff, func(PublishedFile) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("err %v after %d calls, want the caller's error after one", err, n)
	}
	bad := []byte("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-not there\n+x\n")
	err = Published(context.Background(), HostGit(r.dir), r.base, bad, func(PublishedFile) error { return nil })
	var ae *ApplyError
	if !errors.As(err, &ae) {
		t.Errorf("err %v, want an *ApplyError", err)
	}
	if got := r.published(nil); len(got) != 0 {
		t.Errorf("an empty patch publishes %v", brief(got))
	}
}

// TestPublishedBatches: a patch of many or large files is read a batch at a time, each at
// most the limit (a larger file alone), in order, none left out.
func TestPublishedBatches(t *testing.T) {
	t.Parallel()
	files := []rawEntry{
		{newOID: "a", oldOID: "0"}, {newOID: "b", oldOID: "c"}, {newOID: "big", oldOID: "0"},
		{newOID: "d", oldOID: "d"}, {newOID: "e", oldOID: "0"},
	}
	sizes := map[string]int64{"a": 40, "b": 30, "c": 30, "big": 500, "d": 60, "e": 50}
	got := batches(files, sizes, 100)
	want := [][2]int{{0, 2}, {2, 3}, {3, 4}, {4, 5}} // a+b+c = 100; d counted once (same blob); d+e = 110
	if !reflect.DeepEqual(got, want) {
		t.Errorf("batches at 100: %v, want %v", got, want)
	}
	if got := batches(files, sizes, 1000); !reflect.DeepEqual(got, [][2]int{{0, 5}}) {
		t.Errorf("batches at 1000: %v", got)
	}
	if got := batches(nil, sizes, 100); got != nil {
		t.Errorf("batches of nothing: %v", got)
	}
}

func TestParseRenames(t *testing.T) {
	t.Parallel()
	o, n := strings.Repeat("1", 40), strings.Repeat("2", 40)
	z := strings.Repeat("0", 40)
	raw := ":100644 100644 " + o + " " + n + " R087\x00old\x00new\x00" +
		":000000 100644 " + z + " " + n + " A\x00added\x00" +
		":100644 000000 " + o + " " + z + " D\x00gone\x00"
	got, err := parseRenames([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := []rawEntry{
		{oldMode: "100644", newMode: "100644", oldOID: o, newOID: n, status: 'R', from: "old", path: "new"},
		{oldMode: "000000", newMode: "100644", oldOID: z, newOID: n, status: 'A', path: "added"},
		{oldMode: "100644", newMode: "000000", oldOID: o, newOID: z, status: 'D', path: "gone"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseRenames:\n got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{":100644 100644 a b R100\x00only-source", "100644 100644 a b M\x00x\x00", ":1 2 3 4 X\x00p\x00", ":1 2 3\x00p\x00"} {
		if _, err := parseRenames([]byte(bad)); err == nil {
			t.Errorf("parseRenames(%q) did not fail", bad)
		}
	}
}

func TestFileTooLargeError(t *testing.T) {
	t.Parallel()
	err := error(&FileTooLargeError{Path: "data/big.json", Size: MaxFileBytes + 1})
	if got := err.Error(); got != `"data/big.json" is 104857601 bytes, over the 104857600 bytes (100 MB) a file may have` {
		t.Errorf("Error: %s", got)
	}
}

// TestPublishedRefusesAFileOverGitHubsLimit: a one-line change to a file over 100 MB reads
// nothing and says which file; a check that must see every byte then refuses the patch.
func TestPublishedRefusesAFileOverGitHubsLimit(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef\n", MaxFileBytes/17+1)
	r := newRepo(t, map[string]string{"data/big.txt": big, "small.txt": "a\n"})
	r.write("data/big.txt", "changed\n"+big[len("0123456789abcdef\n"):])
	r.write("small.txt", "b\n")
	diff, _ := r.diff()
	called := false
	err := Published(context.Background(), HostGit(r.dir), r.base, diff, func(PublishedFile) error { called = true; return nil })
	var tl *FileTooLargeError
	if !errors.As(err, &tl) || tl.Path != "data/big.txt" || tl.Size <= MaxFileBytes || called {
		t.Fatalf("err %v (called %v), want a *FileTooLargeError for data/big.txt before any file", err, called)
	}
}

package executor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/frognano/frognano/internal/secretform"
)

// sealValue is a made-up operator value.
const sealValue = "mirror-tok3n-0042-abcdef"

// runSeal runs the seal check over paths (relative to root, given as absolute paths the way
// the engine lists them) and returns its lines, the last one checked to be the end.
func runSeal(t *testing.T, ctx context.Context, root string, req SealRequest) ([]SealLine, SealLine) {
	t.Helper()
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Seal(ctx, root, bytes.NewReader(in), &out); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if strings.Contains(out.String(), sealValue) {
		t.Fatalf("the seal check's output shows the value: %s", out.String())
	}
	var lines []SealLine
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var l SealLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		t.Fatal("no answer")
	}
	last := lines[len(lines)-1]
	if !last.Done && last.Stopped == "" {
		t.Fatalf("the last line %+v is not the end", last)
	}
	return lines[:len(lines)-1], last
}

// TestSealFindsValues: every way a setup script can leave a value in the files of its layer is
// found and named by path index, place and form; what cannot be checked (a path through a
// symbolic link, one that is gone, one a mount hides, a name the engine could not spell) is a
// problem, never a pass; FIFOs and devices are never opened, a file with several names is read
// once, and a sparse file's holes are not read.
func TestSealFindsValues(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel string, data []byte, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/mirror.conf", []byte("token = "+sealValue+"\n"), 0o644)
	write("root/.profile", []byte("export X="+base64.StdEncoding.EncodeToString([]byte("xy"+sealValue))+"\n"), 0o644)
	write("opt/hex", []byte(strings.ToUpper(hex.EncodeToString([]byte(sealValue)))), 0o644)
	write("opt/url", []byte("https://x/?t="+url.QueryEscape(sealValue)), 0o644)
	write("opt/nul.bin", []byte("\x00\x01"+sealValue+"\x00"), 0o644)
	write("opt/secret-000", []byte(sealValue), 0o000)
	write("opt/clean.py", bytes.Repeat([]byte("print('hello')\n"), 1000), 0o644)
	write("opt/attr", []byte("nothing here"), 0o644)
	if err := syscall.Setxattr(filepath.Join(root, "opt/attr"), "user.note", []byte(sealValue), 0); err != nil {
		t.Fatalf("setting an extended attribute (the test needs a filesystem with user xattrs): %v", err)
	}
	for _, d := range []string{"usr/local/lib", "var"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(root, "etc/mirror.conf"), filepath.Join(root, "usr/local/lib/copy.conf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/srv/"+sealValue, filepath.Join(root, "opt/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "etc"), filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "opt/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	named := "opt/" + hex.EncodeToString([]byte(sealValue))
	write(named, []byte("x"), 0o644)
	// 1 GiB, almost all hole, the value at the end.
	sparse, err := os.Create(filepath.Join(root, "var/sparse.img"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sparse.WriteAt([]byte(sealValue), 1<<30); err != nil {
		t.Fatal(err)
	}
	sparse.Close()

	paths := []string{
		"/etc/mirror.conf", "/root/.profile", "/opt/hex", "/opt/url", "/opt/nul.bin", "/opt/secret-000",
		"/opt/clean.py", "/opt/attr", "/usr/local/lib/copy.conf", "/opt/link", "/linkdir/mirror.conf",
		"/opt/fifo", "/" + named, "/var/sparse.img", "/opt/gone", "/opt/caf\uFFFD", "/etc", "/opt/../etc/mirror.conf",
	}
	lines, end := runSeal(t, context.Background(), root, SealRequest{Values: []string{"other-value-12345", sealValue}, Paths: paths})
	got := map[string]SealLine{}
	for _, l := range lines {
		got[paths[l.Path]] = l
	}
	want := map[string]struct{ where, form, problem string }{
		"/etc/mirror.conf":         {SealInContent, secretform.AsIs, ""},
		"/root/.profile":           {SealInContent, secretform.Base64, ""},
		"/opt/hex":                 {SealInContent, secretform.HexUpper, ""},
		"/opt/url":                 {SealInContent, secretform.AsIs, ""}, // nothing in it to escape
		"/opt/nul.bin":             {SealInContent, secretform.AsIs, ""},
		"/opt/attr":                {SealInXattr, secretform.AsIs, ""},
		"/usr/local/lib/copy.conf": {SealInContent, secretform.AsIs, ""},
		"/opt/link":                {SealInLink, secretform.AsIs, ""},
		"/" + named:                {SealInName, secretform.Hex, ""},
		"/var/sparse.img":          {SealInContent, secretform.AsIs, ""},
		"/linkdir/mirror.conf":     {"", "", "a directory on its way is not a directory"},
		"/opt/gone":                {"", "", "it was not found"},
		"/opt/caf\uFFFD":           {"", "", "not valid UTF-8"},
		"/opt/../etc/mirror.conf":  {"", "", "not a clean absolute path"},
	}
	if os.Geteuid() == 0 {
		want["/opt/secret-000"] = struct{ where, form, problem string }{SealInContent, secretform.AsIs, ""}
	} else {
		want["/opt/secret-000"] = struct{ where, form, problem string }{"", "", "permission denied"}
	}
	for p, w := range want {
		l, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: nothing reported, want %+v", p, w)
		case w.problem != "" && !strings.Contains(l.Problem, w.problem):
			t.Errorf("%s: %+v, want the problem %q", p, l, w.problem)
		case w.problem == "" && (l.Where != w.where || l.Form != w.form || l.Value != 1):
			t.Errorf("%s: %+v, want %s %s of value 1", p, l, w.where, w.form)
		}
	}
	for p, l := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %+v reported, want nothing (clean, a FIFO or a directory)", p, l)
		}
	}
	// The hard link was read once; the sparse file's gigabyte of hole not at all.
	if !end.Done || end.Bytes > 8<<20 {
		t.Errorf("end %+v: want a whole check that read a few MiB at most", end)
	}
}

// TestSealFailsClosed: a check that cannot finish says so and why, and a mount hides what the
// layer holds under it (here /proc, a mount of the test's own namespace).
func TestSealFailsClosed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "big"), bytes.Repeat([]byte("a"), 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("ByteBudget", func(t *testing.T) {
		t.Parallel()
		_, end := runSeal(t, context.Background(), root, SealRequest{Values: []string{sealValue}, Paths: []string{"/big"}, MaxBytes: 1 << 20})
		if end.Done || !strings.Contains(end.Stopped, "more than 1048576 bytes") {
			t.Errorf("end %+v, want stopped for the byte budget", end)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, end := runSeal(t, ctx, root, SealRequest{Values: []string{sealValue}, Paths: []string{"/big"}})
		if end.Done || !strings.Contains(end.Stopped, "cancelled") {
			t.Errorf("end %+v, want stopped", end)
		}
	})
	t.Run("TooManyFindings", func(t *testing.T) {
		t.Parallel()
		paths := make([]string, sealMaxLines+5)
		for i := range paths {
			paths[i] = "/missing"
		}
		lines, end := runSeal(t, context.Background(), root, SealRequest{Values: []string{sealValue}, Paths: paths})
		if len(lines) != sealMaxLines || end.Done || !strings.Contains(end.Stopped, "more than 100 paths") {
			t.Errorf("%d lines, end %+v", len(lines), end)
		}
	})
	t.Run("HiddenByAMount", func(t *testing.T) {
		t.Parallel()
		// A mount point itself (the engine's placeholder for the init binary or /etc/hosts)
		// is skipped: every sandbox of the image mounts the same there.
		lines, end := runSeal(t, context.Background(), "/", SealRequest{Values: []string{sealValue}, Paths: []string{"/proc/self/status", "/proc"}})
		if len(lines) != 1 || lines[0].Path != 0 || !strings.Contains(lines[0].Problem, `a mount of the container (at "/proc") hides it`) || !end.Done {
			t.Errorf("lines %+v, end %+v", lines, end)
		}
	})
}

func TestUnescapeMount(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`/plain`: "/plain", `/a\040b`: "/a b", `/tab\011x\134`: "/tab\tx\\", `/odd\04`: `/odd\04`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

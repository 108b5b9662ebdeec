package patch

import (
	"bytes"
	"context"
	"encoding/base64"
	enc "encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/frognano/frognano/internal/secretform"
	"github.com/frognano/frognano/internal/secrettest"
)

// TestPublishedFilesHoldNoValue: a value frognano keeps secret, written by the patch in any
// form secretform knows, is found in the file as it will be published, whole, whatever the
// diff's text looks like; the refusal names the file and the form, never the value. Written
// into a file with a NUL byte (git carries it as a compressed base85 literal) or base64-encoded,
// the value is not in the diff's text: the old check (a search of the diff) let both through.
func TestPublishedFilesHoldNoValue(t *testing.T) {
	t.Parallel()
	secret := "tok-" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 24)
	m := secretform.New([]secretform.Secret{{Name: "MIRROR_TOKEN", Value: secret}})
	large := strings.Repeat("line of an ordinary file\n", 4000)
	tests := []struct {
		name, path, content string
		base                map[string]string
		want                string // the form named; "" for a patch that must pass
		notInDiffText       bool   // the old check, a search of the diff's text, misses it
	}{
		{name: "Raw", path: "config.ini", content: "token = " + secret + "\n", want: secretform.AsIs},
		{name: "NULByte", path: "blob.bin", content: "MIRROR_TOKEN=" + secret + "\x00", want: secretform.AsIs, notInDiffText: true},
		{name: "Base64InText", path: "notes.txt", content: "b: " + base64.StdEncoding.EncodeToString([]byte("token: "+secret)) + "\n",
			want: secretform.Base64, notInDiffText: true},
		{name: "Hex", path: "h.txt", content: hex.EncodeToString([]byte(secret)), want: secretform.Hex, notInDiffText: true},
		// What PowerShell's `>` writes: UTF-16 with a BOM, a NUL byte after each ASCII one.
		{name: "UTF16Text", path: "out.txt", content: "\xff\xfe" + utf16LE("token = "+secret+"\r\n"), want: secretform.UTF16, notInDiffText: true},
		{name: "InAQuery", path: "u.txt", content: "?t=" + url.QueryEscape("x "+secret+"&"), want: secretform.AsIs},
		// A large existing file whose unchanged lines hold half the encoded value and whose
		// changed line holds the other half: no hunk holds it, the published file does.
		{name: "AcrossUnchangedLines", path: "big.txt", base: map[string]string{"big.txt": large + "k=" + hex.EncodeToString([]byte(secret))[:20] + "\nend\n"},
			content: large + "k=" + hex.EncodeToString([]byte(secret))[:20] + hex.EncodeToString([]byte(secret))[20:] + "\nend\n", want: secretform.Hex, notInDiffText: true},
		{name: "Symlink", path: "link", content: "->" + secret, want: secretform.AsIs},
		{name: "InTheName", path: "mirror-" + secret + ".txt", content: "harmless\n", want: "its name holds"},
		{name: "AlreadyInTheBase", path: "old.txt", base: map[string]string{"old.txt": "known " + secret + "\n"},
			content: "known " + secret + "\nand a fix\n"},
		{name: "Clean", path: "fix.py", content: "print('fixed')\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := map[string]string{"README": "readme\n"}
			for k, v := range tt.base {
				base[k] = v
			}
			r := newRepo(t, base)
			r.write(tt.path, tt.content)
			diff, tree := r.diff()
			if tt.notInDiffText && bytes.Contains(diff, []byte(secret)) {
				t.Fatalf("precondition: the diff's text holds the value, so the old check found it too")
			}
			_, err := ApplyToBase(context.Background(), HostGit(r.dir), r.base, diff, Options{Values: m})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ApplyToBase = %v, want the patch kept", err)
				}
				return
			}
			var ve *ValueError
			if !errors.As(err, &ve) || !errors.Is(err, ErrHoldsValue) || len(ve.Files) != 1 {
				t.Fatalf("ApplyToBase = %v, want a *ValueError for one file", err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the refusal shows the value: %v", err)
			}
			got := ve.Files[0]
			if !strings.Contains(got.Reason, tt.want) || !strings.Contains(got.Reason, "MIRROR_TOKEN") {
				t.Errorf("reason %q, want the form %q and the setting's name", got.Reason, tt.want)
			}
			if want := m.Mask(tt.path); got.Path != want {
				t.Errorf("path %q, want %q", got.Path, want)
			}
			// The same rule holds where Publish checks the tree it is about to commit.
			if err := CheckTree(context.Background(), HostGit(r.dir), r.base, tree, Options{Values: m}); !errors.Is(err, ErrHoldsValue) {
				t.Errorf("CheckTree = %v, want ErrHoldsValue", err)
			}
		})
	}
}

// BenchmarkCheckValues: what the published-tree check adds to CheckTree for a patch of 50 files
// of 20 KiB and one 20 MiB binary file, with three operator values and a registry of 200
// tokens (Values), against CheckTree without it (NoValues).
func BenchmarkCheckValues(b *testing.B) {
	r := newRepo(b, map[string]string{"README": "readme\n"})
	for i := range 50 {
		r.write(fmt.Sprintf("src/file%02d.py", i), strings.Repeat(fmt.Sprintf("def f%d(x):\n    return x * %d\n", i, i), 700))
	}
	r.write("assets/model.bin", binary(20<<20, 7))
	_, tree := r.diff()
	var secrets []secretform.Secret
	for i := range 203 {
		secrets = append(secrets, secretform.Secret{Value: fmt.Sprintf("value-%04d-%s", i, strings.Repeat("x", 20))})
	}
	m := secretform.New(secrets)
	ctx := context.Background()
	for _, bb := range []struct {
		name string
		m    *secretform.Matcher
	}{{"NoValues", nil}, {"Values", m}} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				if err := CheckTree(ctx, HostGit(r.dir), r.base, tree, Options{Values: bb.m}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestValueCheckReadsWhatIsPublished: the value check reads the files Published lists, through
// the same reader (publishedTree), so what is checked cannot drift from what is published. Every
// file of a patch with every kind of change (added, changed, renamed with a change, a file
// become a symlink, a mode change with a change, odd names) holds the value, and the refusal
// names exactly the paths Published lists. A file renamed unchanged from one that already held
// the value is the base's (before, the check looked for the base file at the new path, found
// none, and refused the rename).
func TestValueCheckReadsWhatIsPublished(t *testing.T) {
	t.Parallel()
	secret := "tok-" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 24)
	m := secretform.New([]secretform.Secret{{Name: "MIRROR_TOKEN", Value: secret}})
	long := strings.Repeat("a line long enough for git to pair the rename\n", 20)
	r := newRepo(t, map[string]string{
		"changed.txt":   "before\n",
		"moved/old.txt": long + "end\n",
		"held/old.txt":  long + secret + "\n",
		"was-file":      "plain\n",
		"script.sh":     "#!/bin/sh\n",
		"gone.txt":      "bye\n",
	})
	r.write("changed.txt", "after "+secret+"\n")
	r.remove("moved/old.txt")
	r.write("moved/new.txt", long+"end "+secret+"\n")
	r.remove("held/old.txt")
	r.write("held/new.txt", long+secret+"\n")
	r.write("was-file", "->"+secret)
	r.write("script.sh", "#!/bin/sh\necho "+base64.StdEncoding.EncodeToString([]byte(secret))+"\n")
	r.chmod("script.sh", 0o755)
	r.remove("gone.txt")
	for _, p := range []string{"a file with spaces.txt", `quo"te.txt`, "ünï/cødé.txt", "blob.bin"} {
		r.write(p, "x\x00"+secret+"\n")
	}
	diff, tree := r.diff()

	var listed []string
	for _, f := range r.published(diff) {
		if f.Path != "held/new.txt" {
			listed = append(listed, f.Path)
		}
	}
	err := CheckTree(context.Background(), HostGit(r.dir), r.base, tree, Options{Values: m})
	var ve *ValueError
	if !errors.As(err, &ve) {
		t.Fatalf("CheckTree = %v, want a *ValueError", err)
	}
	var refused []string
	for _, f := range ve.Files {
		refused = append(refused, f.Path)
	}
	if !slices.Equal(refused, listed) {
		t.Errorf("refused %q, want exactly what Published lists but the unchanged rename: %q", refused, listed)
	}
}

// utf16LE is s as UTF-16, little-endian, without a BOM.
func utf16LE(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = enc.LittleEndian.AppendUint16(b, u)
	}
	return string(b)
}

// TestValueTheBaseHeldHidesNoOther: a file whose base already held one form of one value is
// judged on every form it holds, not on the first one found. The patch appends, after the form
// the base held, another value and another form of the same value: both are the patch's, and
// each refuses it. Before, the check looked only at the first form in the file, found the
// base's, and published the file.
func TestValueTheBaseHeldHidesNoOther(t *testing.T) {
	t.Parallel()
	mirror := "https://mirror-" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz", 12) + ".example/simple"
	token := "tok-" + secrettest.MadeUp(t, "abcdefghijklmnopqrstuvwxyz0123456789", 24)
	m := secretform.New([]secretform.Secret{{Name: "PIP_INDEX_URL", Value: mirror}, {Name: "MIRROR_TOKEN", Value: token}})
	base := "--index-url " + mirror + "\nrequests==2.31.0\n"
	for _, tt := range []struct{ name, added, want string }{
		{"AnotherValue", "# " + token + "\n", "MIRROR_TOKEN, " + secretform.AsIs},
		{"AnotherForm", "# " + base64.StdEncoding.EncodeToString([]byte(mirror)) + "\n", "PIP_INDEX_URL, " + secretform.Base64},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, map[string]string{"requirements.txt": base})
			r.write("requirements.txt", base+tt.added)
			diff, tree := r.diff()
			_, err := ApplyToBase(context.Background(), HostGit(r.dir), r.base, diff, Options{Values: m})
			var ve *ValueError
			if !errors.As(err, &ve) || len(ve.Files) != 1 || !strings.Contains(ve.Files[0].Reason, tt.want) {
				t.Fatalf("ApplyToBase = %v, want a *ValueError naming %q", err, tt.want)
			}
			if err := CheckTree(context.Background(), HostGit(r.dir), r.base, tree, Options{Values: m}); !errors.Is(err, ErrHoldsValue) {
				t.Errorf("CheckTree = %v, want ErrHoldsValue", err)
			}
			// The base's own form alone is still the base's.
			r2 := newRepo(t, map[string]string{"requirements.txt": base})
			r2.write("requirements.txt", base+"pytest==8.0.0\n")
			diff2, _ := r2.diff()
			if _, err := ApplyToBase(context.Background(), HostGit(r2.dir), r2.base, diff2, Options{Values: m}); err != nil {
				t.Errorf("ApplyToBase of a patch adding no value = %v, want it kept", err)
			}
		})
	}
}

package eval

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const goodLine = `{"instance_id":"a-1","repo":"acme/a","base_commit":"0123456789abcdef0123456789abcdef01234567","problem_statement":"p","test_patch":"diff --git a/t b/t\n","FAIL_TO_PASS":["x"],"PASS_TO_PASS":[]}`

func TestParseTasks(t *testing.T) {
	t.Parallel()
	file := strings.Join([]string{
		goodLine,
		``,
		`{"instance_id":"a-2"`,
		strings.Replace(goodLine, `"a-1"`, `"a-3"`, 1)[:len(goodLine)-1] + `,"unknown_field":{"x":1},"hints_text":"h"}`,
		strings.Replace(goodLine, `"FAIL_TO_PASS":["x"]`, `"FAIL_TO_PASS":"[\"x\", \"y\"]"`, 1),
		strings.Replace(goodLine, `"a-1"`, `"a-4"`, 1),
		strings.Replace(strings.Replace(goodLine, `"a-1"`, `"a-5"`, 1), `0123456789abcdef0123456789abcdef01234567`, `main`, 1),
		strings.Replace(strings.Replace(goodLine, `"a-1"`, `"a-6"`, 1), `"FAIL_TO_PASS":["x"]`, `"FAIL_TO_PASS":[]`, 1),
		strings.Replace(strings.Replace(goodLine, `"a-1"`, `"a-7"`, 1), `"repo":"acme/a"`, `"repo":"../etc"`, 1),
		strings.Replace(strings.Replace(goodLine, `"a-1"`, `"a-8"`, 1), `"FAIL_TO_PASS":["x"]`, `"FAIL_TO_PASS":["x\u0007"]`, 1),
		strings.Replace(strings.Replace(goodLine, `"a-1"`, `"a-9"`, 1), `"repo":"acme/a"`, `"repo":"acme/a","repo_url":"--upload-pack=evil"`, 1),
		`42`,
		strings.Replace(strings.Replace(goodLine, `"a-1"`, `"a-10"`, 1), `"repo":"acme/a"`, `"repo":"acme/a","repo_url":"ext::sh -c touch% /tmp/pwned"`, 1),
		strings.Replace(strings.Replace(goodLine, `"a-1"`, `"a-11"`, 1), `"repo":"acme/a"`, `"repo":"acme/a","repo_url":"https://git.example.com/acme/a.git"`, 1),
	}, "\n")
	tasks, errs, err := ParseTasks(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tk := range tasks {
		ids = append(ids, tk.InstanceID)
	}
	if strings.Join(ids, ",") != "a-1,a-3,a-4,a-11" || tasks[1].Line != 4 {
		t.Errorf("tasks %v", ids)
	}
	want := map[int]string{
		3: "not a JSON object", 5: "instance_id repeats line 1's", 7: "base_commit: not a commit id", 8: "missing FAIL_TO_PASS",
		9: `repo: not "owner/name"`, 10: "control characters", 11: "starts with '-'", 12: "not a JSON object", 13: "repo_url: not an https://, ssh://, http:// or git:// URL",
	}
	if len(errs) != len(want) {
		t.Errorf("errors %v", errs)
	}
	for _, e := range errs {
		if !strings.Contains(e.Error(), want[e.Line]) || want[e.Line] == "" {
			t.Errorf("line %d: %v, want %q", e.Line, e.Err, want[e.Line])
		}
	}
	// A line refused for a field names its task and the field.
	for _, e := range errs {
		var fe *FieldError
		if e.Line == 11 && (e.ID != "a-9" || !errors.As(e, &fe) || fe.Field != "repo_url" || !strings.Contains(e.Error(), `line 11, task "a-9": repo_url:`)) {
			t.Errorf("line 11: %q (id %q)", e, e.ID)
		}
		if e.Line == 3 && e.ID != "" {
			t.Errorf("a line that is no JSON names a task: %q", e.ID)
		}
	}
	// SWE-bench's published files hold the lists as strings of JSON.
	tk, err := ParseTask([]byte(strings.Replace(goodLine, `"FAIL_TO_PASS":["x"]`, `"FAIL_TO_PASS":"[\"x\", \"y\"]"`, 1)))
	if err != nil || strings.Join(tk.FailToPass, ",") != "x,y" {
		t.Errorf("a list in a string: %v, %v", tk.FailToPass, err)
	}
}

func TestParseTasksLineTooLong(t *testing.T) {
	t.Parallel()
	file := goodLine + "\n" + `{"instance_id":"` + strings.Repeat("x", MaxLineBytes) + `"}` + "\n"
	tasks, errs, err := ParseTasks(strings.NewReader(file))
	if err != nil || len(tasks) != 1 || len(errs) != 1 || errs[0].Line != 2 || !strings.Contains(errs[0].Error(), "longer than") {
		t.Errorf("tasks %d, errs %v, err %v", len(tasks), errs, err)
	}
}

func TestFolder(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, id := range []string{"astropy__astropy-12907", "a/b", "a_b", "../..", ".", "", "x\x00y", strings.Repeat("é", 300)} {
		f := Folder(id)
		if f == "" || f == "." || f == ".." || strings.ContainsAny(f, "/\\\x00") || len(f) > 100 {
			t.Errorf("Folder(%q) = %q", id, f)
		}
		if other, dup := seen[f]; dup {
			t.Errorf("Folder(%q) = Folder(%q) = %q", id, other, f)
		}
		seen[f] = id
	}
	if Folder("astropy__astropy-12907") != "astropy__astropy-12907" {
		t.Error("a safe id is not its own folder")
	}
}

// FuzzParseTask: any line either parses into a task that passes its own checks and survives a
// round trip through TaskLine, or is refused with an error; it never panics.
func FuzzParseTask(f *testing.F) {
	with := func(field string) string {
		return strings.Replace(goodLine, `"repo":"acme/a"`, `"repo":"acme/a",`+field, 1)
	}
	for _, s := range []string{goodLine, `{}`, `[]`, `{"FAIL_TO_PASS":"[1]"}`, `{"FAIL_TO_PASS":"\"x\""}`, `null`, `{"instance_id":"\u0000"}`,
		strings.Replace(goodLine, `"FAIL_TO_PASS":["x"]`, `"FAIL_TO_PASS":"[\"x\"]"`, 1),
		// The fields a task file uses to reach the host (issue 28).
		with(`"repo_path":"repos/a"`), with(`"repo_path":"../a"`), with(`"repo_path":"/etc"`), with(`"repo_path":"a/../../b"`), with(`"repo_path":"~/a"`),
		with(`"repo_url":"https://git.example.com/a.git"`), with(`"repo_url":"ssh://git@git.example.com:2222/a.git"`),
		with(`"repo_url":"http://2130706433/a.git"`), with(`"repo_url":"https://0x7f.1/a"`), with(`"repo_url":"https://[::ffff:127.0.0.1]/a"`),
		with(`"repo_url":"git://metadata.google.internal./a"`), with(`"repo_url":"https://h:99999/a"`), with(`"repo_url":"https://[fe80::1%25eth0]/a"`),
		with(`"image":"frognano-sandbox:latest"`), with(`"image":"registry:5000/a/b@sha256:00"`), with(`"image":"--privileged"`)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		tk, err := ParseTask(line)
		if err != nil {
			if tk.InstanceID != "" || tk.TestPatch != "" {
				t.Fatalf("a refused line returned a task: %+v", tk)
			}
			return
		}
		if tk.check() != nil || len(tk.FailToPass) == 0 || Folder(tk.InstanceID) == "" || strings.Contains(Folder(tk.InstanceID), "/") {
			t.Fatalf("accepted an invalid task: %+v", tk)
		}
		// What may reach the host has its shape: a relative repo_path without `..`, a URL
		// with a host git reads as the check read it, an image that is no option.
		if p := tk.RepoPath; p != "" && (strings.HasPrefix(p, "/") || strings.HasPrefix(p, "-") || slices.Contains(strings.Split(p, "/"), "..")) {
			t.Fatalf("accepted repo_path %q", p)
		}
		if tk.RepoURL != "" {
			r, err := parseRepoURL(tk.RepoURL)
			if err != nil || r.name == "" || r.port == "" || (!r.isAddr && strings.Trim(r.name, "0123456789.") == "") {
				t.Fatalf("accepted repo_url %q: %+v, %v", tk.RepoURL, r, err)
			}
		}
		if strings.HasPrefix(tk.Image, "-") {
			t.Fatalf("accepted image %q", tk.Image)
		}
		s, err := TaskLine(tk)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseTask([]byte(s))
		if err != nil || back.Hash() != tk.Hash() {
			t.Fatalf("round trip: %v", err)
		}
	})
}

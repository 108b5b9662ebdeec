package sandbox

import (
	"bufio"
	"slices"
	"strings"
	"testing"
)

func TestGitEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rel  string
		want gitAction
	}{
		{"README.md", gitCopy},
		{"src/.git/config", gitCopy}, // only the checkout's own .git is special
		{".gitignore", gitCopy},
		{".github/workflows/ci.yml", gitCopy},
		{".git/config", gitConfig},
		{".git/HEAD", gitCopy},
		{".git/index", gitCopy},
		{".git/objects/ab/cdef", gitCopy},
		{".git/refs/heads/main", gitCopy},
		{".git/packed-refs", gitCopy},
		{".git/info/exclude", gitCopy},
		{".git/hooks", gitCopy}, // the directory stays, empty
		{".git/hooks/pre-commit", gitSkip},
		{".git/FETCH_HEAD", gitSkip},
		{".git/logs", gitSkip},
		{".git/logs/HEAD", gitSkip},
		{".git/modules", gitSkip},
		{".git/worktrees/x/gitdir", gitSkip},
		{".git/objects/info/alternates", gitSkip},
		{".git/index.lock", gitSkip},
		{".git/credentials", gitSkip},
		{".git/config.worktree", gitSkip},
		{".git/remotes/origin", gitSkip},
		{".git/branches/x", gitSkip},
		{".git/objects/info/http-alternates", gitSkip},
		{".git/objects/info/packs", gitCopy},
	}
	for _, tt := range tests {
		if got := gitEntry(tt.rel); got != tt.want {
			t.Errorf("gitEntry(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
}

func TestConfigEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"Nothing", nil, []string{"PYTHONDONTWRITEBYTECODE=1", "HOME=/tmp"}},
		{"Extra", []string{"CI=true", "LANG=C.UTF-8"}, []string{"CI=true", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", "HOME=/tmp"}},
		{"ProxiesDropped", []string{"HTTP_PROXY=http://p", "https_proxy=x", "NO_PROXY=*", "ALL_PROXY=y"}, []string{"PYTHONDONTWRITEBYTECODE=1", "HOME=/tmp"}},
		{"FixedValuesWin", []string{"HOME=/root", "PYTHONDONTWRITEBYTECODE=0"}, []string{"PYTHONDONTWRITEBYTECODE=1", "HOME=/tmp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := (Config{Env: tt.in}).env(); !slices.Equal(got, tt.want) {
				t.Errorf("env() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseOOMKills(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n", 1}, // cgroup v2 memory.events
		{"oom_kill_disable 0\nunder_oom 0\noom_kill 2\n", 2},               // cgroup v1 memory.oom_control
		{"oom_kill 0\n", 0},
		{"oom_kill -5\noom_kill x\noom_kill\n", 0},
	}
	for _, tt := range tests {
		if got := parseOOMKills([]byte(tt.in)); got != tt.want {
			t.Errorf("parseOOMKills(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestCappedBuffer(t *testing.T) {
	t.Parallel()
	c := &cappedBuffer{max: 5}
	for _, s := range []string{"ab", "cd", "efg", "h"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v: it must always accept the bytes so the stream drains", s, n, err)
		}
	}
	if c.buf.String() != "abcde" || !c.truncated {
		t.Errorf("kept %q truncated=%v", c.buf.String(), c.truncated)
	}
}

// TestStderrBuffer: the executor's stderr keeps its start (where a crash report names its
// cause) and its end, and says where it left bytes out.
func TestStderrBuffer(t *testing.T) {
	t.Parallel()
	b := &stderrBuffer{headMax: 4, tailMax: 4}
	b.Write([]byte("ab"))
	if got := b.Summary(3); got != "ab" {
		t.Errorf("short stderr: %q", got)
	}
	b.Write([]byte("cdef"))
	b.Write([]byte("ghij"))
	if got := b.Summary(3); got != "abc ... hij" {
		t.Errorf("long stderr: %q, want the start and the end", got)
	}
	if got := b.Summary(10); got != "abcd ... ghij" {
		t.Errorf("long stderr, wide limit: %q", got)
	}
	whole := &stderrBuffer{headMax: 4, tailMax: 8}
	whole.Write([]byte("fatal error: x\n"))
	if got := whole.Summary(100); got != "fata ... rror: x" {
		t.Errorf("summary %q", got)
	}
}

func TestReadLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	br := bufio.NewReaderSize(strings.NewReader("short\n"+long+"\n"+long+long+"\n"), 16)
	if l, err := readLine(br, 150); string(l) != "short\n" || err != nil {
		t.Errorf("first line %q %v", l, err)
	}
	if l, err := readLine(br, 150); string(l) != long+"\n" || err != nil {
		t.Errorf("line longer than the buffer: %q %v", l, err)
	}
	if _, err := readLine(br, 150); err == nil {
		t.Error("a line over the limit was accepted")
	}
}

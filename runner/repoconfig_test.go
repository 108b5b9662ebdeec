package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRepoConfig(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "host-secret")
	if err := os.WriteFile(secret, []byte("HOST PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	type file struct{ path, content, link string }
	tests := []struct {
		name    string
		files   []file
		want    RepoConfig
		wantErr string
	}{
		{"Nothing", nil, RepoConfig{}, ""},
		{"Both", []file{{path: InstructionsFile, content: "Use tabs.\n"}, {path: TestCommandFile, content: "pytest -q tests/unit\n"}},
			RepoConfig{Instructions: "Use tabs.", TestCommand: "pytest -q tests/unit"}, ""},
		{"InstructionsSymlinkToHostFile", []file{{path: InstructionsFile, link: secret}}, RepoConfig{}, "is a symlink"},
		{"DirectorySymlink", []file{{path: ".frognano", link: filepath.Dir(secret)}}, RepoConfig{}, "is a symlink"},
		{"TooLarge", []file{{path: InstructionsFile, content: strings.Repeat("x", maxInstructionsBytes+1)}}, RepoConfig{}, "over the"},
		{"NotUTF8", []file{{path: InstructionsFile, content: "\xff\xfe"}}, RepoConfig{}, "not UTF-8"},
		{"TwoLineCommand", []file{{path: TestCommandFile, content: "make test\nrm -rf /"}, {path: InstructionsFile, content: "ok"}},
			RepoConfig{Instructions: "ok"}, "one line"},
		{"InstructionsIsADirectory", []file{{path: InstructionsFile + "/x", content: "x"}}, RepoConfig{}, "not a regular file"},
		{"DotFrognanoIsAFile", []file{{path: ".frognano", content: "x"}}, RepoConfig{}, ""},
		{"AgentsMD", []file{{path: AgentsFile, content: "Run make lint first.\n"}}, RepoConfig{Agents: "Run make lint first."}, ""},
		{"AgentsMDAndInstructions", []file{{path: AgentsFile, content: "General.\n"}, {path: InstructionsFile, content: "Frognano only.\n"}},
			RepoConfig{Agents: "General.", Instructions: "Frognano only."}, ""},
		{"AgentsMDSymlinkToHostFile", []file{{path: AgentsFile, link: secret}}, RepoConfig{}, "is a symlink"},
		{"AgentsMDTooLarge", []file{{path: AgentsFile, content: strings.Repeat("x", maxInstructionsBytes+1)}}, RepoConfig{}, "over the"},
		{"AgentsMDNotUTF8", []file{{path: AgentsFile, content: "ok\n\xff"}, {path: InstructionsFile, content: "kept"}}, RepoConfig{Instructions: "kept"}, "not UTF-8"},
		{"BothWithinOneLimit", []file{{path: AgentsFile, content: strings.Repeat("a\n", 5000)}, {path: InstructionsFile, content: strings.Repeat("b", 10000)}},
			RepoConfig{Agents: strings.TrimSpace(strings.Repeat("a\n", (maxInstructionsBytes-10000)/2)), AgentsCut: true, Instructions: strings.Repeat("b", 10000)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, f := range tt.files {
				p := filepath.Join(dir, f.path)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				var err error
				if f.link != "" {
					err = os.Symlink(f.link, p)
				} else {
					err = os.WriteFile(p, []byte(f.content), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			got, err := LoadRepoConfig(dir)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("config = %+v, want %+v", got, tt.want)
			}
			if len(got.Agents)+len(got.Instructions) > maxInstructionsBytes {
				t.Errorf("instructions hold %d bytes in all, over the limit", len(got.Agents)+len(got.Instructions))
			}
			if strings.Contains(got.Instructions+got.Agents, "HOST PRIVATE KEY") {
				t.Error("a host file was read through a symlink")
			}
		})
	}
}

func TestWithInstructions(t *testing.T) {
	t.Parallel()
	if got := withInstructions("Fix it.\n", RepoConfig{}); got != "Fix it.\n" {
		t.Errorf("no instructions: %q", got)
	}
	want := "Fix it.\n\nRepository instructions (.frognano/instructions.md):\n\nRun make lint.\n"
	if got := withInstructions("Fix it.\n", RepoConfig{Instructions: "Run make lint."}); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	want = "Fix it.\n\nRepository instructions (AGENTS.md):\n\nUse tabs.\n\nRepository instructions (.frognano/instructions.md):\n\nRun make lint.\n"
	if got := withInstructions("Fix it.", RepoConfig{Agents: "Use tabs.", Instructions: "Run make lint."}); got != want {
		t.Errorf("both: got %q, want %q", got, want)
	}
}

// FuzzLoadRepoConfig: whatever the files hold, loading never panics, and what it returns
// keeps the rules (one-line test command, UTF-8, within the limits).
func FuzzLoadRepoConfig(f *testing.F) {
	f.Add("Use tabs.", "go test ./...")
	f.Add("\xff", "a\nb")
	f.Add(strings.Repeat("é", 9000), "\x00")
	f.Fuzz(func(t *testing.T, instructions, testCmd string) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".frognano"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, InstructionsFile), []byte(instructions), 0o644)
		os.WriteFile(filepath.Join(dir, TestCommandFile), []byte(testCmd), 0o644)
		cfg, _ := LoadRepoConfig(dir)
		if strings.ContainsAny(cfg.TestCommand, "\n\r\x00") || len(cfg.TestCommand) > maxTestCommandBytes {
			t.Fatalf("test command breaks the rules: %q", cfg.TestCommand)
		}
		if len(cfg.Instructions) > maxInstructionsBytes {
			t.Fatalf("instructions over the limit: %d", len(cfg.Instructions))
		}
	})
}

package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/frognano/frognano/internal/clip"
)

// Files a repository may hold to guide its runs. They are read on the host from the checkout,
// which is untrusted content: only regular files (no symlink anywhere on the path, so a hostile
// repository cannot make the host read its own files into the prompt), size-capped, UTF-8.
const (
	InstructionsFile = ".frognano/instructions.md" // appended to the task the model receives
	TestCommandFile  = ".frognano/test-command"    // one line: the repository's test command
	// AgentsFile is read as instructions too: the convention other coding agents follow.
	AgentsFile = "AGENTS.md"

	// maxInstructionsBytes bounds each instructions file, and both together: when AGENTS.md
	// and .frognano/instructions.md together are larger, AGENTS.md is cut to fit.
	maxInstructionsBytes = 16 << 10
	maxTestCommandBytes  = 1 << 10
)

// RepoConfig is what a repository says about its own runs.
type RepoConfig struct {
	// Agents is AGENTS.md at the root; the model reads it before Instructions, so that
	// frognano's own file has the last word.
	Agents string
	// AgentsCut is set when Agents was cut so that both files fit maxInstructionsBytes.
	AgentsCut    bool
	Instructions string
	TestCommand  string
}

// LoadRepoConfig reads the repository's files under .frognano/. A missing file is not an
// error; a file that breaks a rule is, and nothing of it is used.
func LoadRepoConfig(dir string) (RepoConfig, error) {
	var cfg RepoConfig
	var errs []error
	if b, err := readRepoFile(dir, InstructionsFile, maxInstructionsBytes); err != nil {
		errs = append(errs, err)
	} else {
		cfg.Instructions = strings.TrimSpace(string(b))
	}
	if b, err := readRepoFile(dir, AgentsFile, maxInstructionsBytes); err != nil {
		errs = append(errs, err)
	} else {
		cfg.Agents = strings.TrimSpace(string(b))
		if room := maxInstructionsBytes - len(cfg.Instructions); len(cfg.Agents) > room {
			cfg.Agents, cfg.AgentsCut = cutAtLine(cfg.Agents, room), true
		}
	}
	if b, err := readRepoFile(dir, TestCommandFile, maxTestCommandBytes); err != nil {
		errs = append(errs, err)
	} else if cmd := strings.TrimSpace(string(b)); strings.ContainsAny(cmd, "\n\r\x00") {
		errs = append(errs, fmt.Errorf("%s must hold one line", TestCommandFile))
	} else {
		cfg.TestCommand = cmd
	}
	return cfg, errors.Join(errs...)
}

// readRepoFile returns the content of the regular file rel below dir, nil when it does not
// exist, or an error when any component of its path is a symlink or not what it should be,
// or when it is too large or not UTF-8.
func readRepoFile(dir, rel string, max int64) ([]byte, error) {
	parts := strings.Split(rel, "/")
	p := dir
	for i, part := range parts {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", rel, err)
		}
		last := i == len(parts)-1
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("%s: %s is a symlink; frognano reads only regular files", rel, strings.Join(parts[:i+1], "/"))
		case !last && !st.IsDir():
			return nil, nil // e.g. a file named .frognano: nothing configured
		case last && !st.Mode().IsRegular():
			return nil, fmt.Errorf("%s is not a regular file", rel)
		case last && st.Size() > max:
			return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit", rel, st.Size(), max)
		}
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is over the %d-byte limit", rel, max)
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%s is not UTF-8 text", rel)
	}
	return b, nil
}

// cutAtLine returns the longest prefix of s of at most max bytes that ends at a line end (or,
// when the first line is longer, at a rune boundary).
func cutAtLine(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if len(s) <= max {
		return s
	}
	cut := s[:max]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		return strings.TrimSpace(cut[:i])
	}
	return clip.Prefix(s, max)
}

// withInstructions is the user message: the task, then the repository's instructions,
// AGENTS.md first and .frognano/instructions.md last.
func withInstructions(task string, cfg RepoConfig) string {
	if cfg.Agents == "" && cfg.Instructions == "" {
		return task
	}
	out := strings.TrimRight(task, "\n") + "\n"
	for _, f := range []struct{ name, text string }{{AgentsFile, cfg.Agents}, {InstructionsFile, cfg.Instructions}} {
		if f.text != "" {
			out += "\nRepository instructions (" + f.name + "):\n\n" + f.text + "\n"
		}
	}
	return out
}

// agentsCutNote is the report's note when AGENTS.md did not fit whole.
func agentsCutNote(cfg RepoConfig) string {
	if !cfg.AgentsCut {
		return ""
	}
	return fmt.Sprintf("%s was cut to %d bytes: with %s it may hold at most %d bytes in all.", AgentsFile, len(cfg.Agents), InstructionsFile, maxInstructionsBytes)
}

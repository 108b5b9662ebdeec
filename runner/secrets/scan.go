package secrets

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	gllog "github.com/zricethezav/gitleaks/v8/logging"

	"github.com/frognano/frognano/runner/patch"
)

func init() {
	// gitleaks logs through a process-wide zerolog logger to stderr, and some of its lines
	// could quote what it read; frognano's logs carry no secret, so it says nothing.
	gllog.Logger = zerolog.Nop()
}

// Finding is one secret the detector found: the gitleaks rule that matched, the file, and the
// line in the patched file. It never holds the value, nor the line's text.
type Finding struct {
	Rule string
	File string
	Line int
}

// String names the finding by rule, file and line, for a note or a log line.
func (f Finding) String() string {
	return fmt.Sprintf("%s in %q line %d", f.Rule, f.File, f.Line)
}

// maxListed bounds the findings List names.
const maxListed = 20

// List names findings for a note or an error, "; "-separated, at most 20 and how many more.
func List(fs []Finding) string {
	var s []string
	for i, f := range fs {
		if i == maxListed {
			s = append(s, fmt.Sprintf("and %d more", len(fs)-i))
			break
		}
		s = append(s, f.String())
	}
	return strings.Join(s, "; ")
}

// Mode is what a finding does to the patch: FROGNANO_SECRETS.
type Mode string

const (
	// Block refuses a patch with a finding: it is not pushed and no pull request holds it.
	Block Mode = "block"
	// Warn publishes the patch and lists the findings.
	Warn Mode = "warn"
	// DefaultMode is FROGNANO_SECRETS's default.
	DefaultMode = Block
)

// ParseMode reads FROGNANO_SECRETS; "" is DefaultMode.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "":
		return DefaultMode, nil
	case Block, Warn:
		return m, nil
	}
	return "", fmt.Errorf("FROGNANO_SECRETS is %q: want %q or %q", s, Block, Warn)
}

// AllowListPath is the file of the base branch whose allow-lists a repository uses to let
// known fixtures through (gitleaks' own format).
const AllowListPath = ".gitleaks.toml"

// maxAllowList bounds the allow-list file read from git's objects.
const maxAllowList = 1 << 20

// Input is one patch to scan.
type Input struct {
	// Base is the commit Diff applies to: only the lines the patched tree adds to it count.
	Base string
	Diff []byte
	// AllowListAt is the commit whose .gitleaks.toml lets fixtures through: the base branch's
	// head, which the repository's maintainers wrote. For a follow-up on frognano's own branch
	// it is not Base: an earlier run's patch could have written Base's allow-list. Empty: no
	// repository allow-list, only gitleaks' own.
	AllowListAt string
}

// Scan applies in.Diff to in.Base in the host's clone (a throwaway index and object
// directory) and returns the findings of gitleaks' default rules in every line the patched
// tree adds or changes, sorted by file, line and rule. The global allow-lists of the
// .gitleaks.toml at in.AllowListAt apply; the patch's own never do. An error (git, an
// allow-list that does not parse) means the patch was not scanned: a caller that blocks must
// then refuse it.
func Scan(ctx context.Context, git patch.Git, in Input) ([]Finding, error) {
	if in.Base == "" {
		return nil, errors.New("scanning a patch needs its base commit")
	}
	var allow []byte
	if in.AllowListAt != "" {
		var err error
		if allow, err = readAllowList(ctx, git, in.AllowListAt); err != nil {
			return nil, err
		}
	}
	cfg, err := rules(allow)
	if err != nil {
		return nil, fmt.Errorf("reading %s of the base branch: %w", AllowListPath, err)
	}
	added, err := addedLines(ctx, git, in.Base, in.Diff)
	if err != nil {
		return nil, err
	}
	return Detect(ctx, cfg, Added(added)), nil
}

// Detect runs the detector over fragments with cfg's rules and allow-lists.
func Detect(ctx context.Context, cfg config.Config, fragments []Fragment) []Finding {
	d := detect.NewDetectorContext(ctx, cfg)
	d.IgnoreGitleaksAllow = true // the patch could write the comment itself
	d.MaxDecodeDepth = 5         // gitleaks' own default: base64, hex and percent-encoded values too
	seen := map[Finding]bool{}
	var out []Finding
	for _, fr := range fragments {
		for _, f := range d.DetectContext(ctx, detect.Fragment{Raw: fr.Text, FilePath: fr.Path, StartLine: fr.Line - 1}) {
			k := Finding{Rule: f.RuleID, File: fr.Path, Line: f.StartLine + 1}
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Rule < b.Rule
	})
	return out
}

var defaults struct {
	once sync.Once
	cfg  config.Config
	err  error
}

// rules returns gitleaks' default rules and allow-lists, with the global allow-lists of allow
// (a .gitleaks.toml) added when it is not empty. Nothing else of allow counts: its rules, its
// [extend] and its rules' own allow-lists are ignored, so a repository can let fixtures
// through but never turn a default rule off.
//
// One change to gitleaks' defaults: the paths of its global allow-list go (images, fonts,
// documents, .bin, lock files, vendor/, node_modules/, gitleaks.toml itself, ...). The patch
// names its own files, so a key written to x.png or vendor/k would otherwise pass unseen; the
// values those paths usually hold are what the base branch's allow-list is for.
func rules(allow []byte) (config.Config, error) {
	defaults.once.Do(func() {
		var vc config.ViperConfig
		if vc, defaults.err = defaultConfig(); defaults.err == nil {
			defaults.cfg, defaults.err = vc.Translate()
		}
	})
	if defaults.err != nil || len(allow) == 0 {
		return defaults.cfg, defaults.err
	}
	repo, err := parseTOML(string(allow))
	if err != nil {
		return config.Config{}, err
	}
	vc, err := defaultConfig() // a fresh copy: Translate keeps pointers into it
	if err != nil {
		return config.Config{}, err
	}
	if repo.AllowList != nil {
		vc.Allowlists = append(vc.Allowlists, repo.AllowList)
	}
	vc.Allowlists = append(vc.Allowlists, repo.Allowlists...)
	return vc.Translate()
}

// defaultConfig parses gitleaks' default configuration and drops its global allow-list's paths.
func defaultConfig() (config.ViperConfig, error) {
	vc, err := parseTOML(config.DefaultConfig)
	if err != nil {
		return vc, err
	}
	if vc.AllowList != nil { // the defaults still use the older [allowlist] form
		vc.Allowlists, vc.AllowList = append(vc.Allowlists, vc.AllowList), nil
	}
	for _, a := range vc.Allowlists {
		a.Paths = nil
	}
	return vc, nil
}

// parseTOML reads a gitleaks configuration with a viper of its own (gitleaks' constructor
// uses the process-wide one, which is not safe for concurrent scans).
func parseTOML(s string) (config.ViperConfig, error) {
	v := viper.New()
	v.SetConfigType("toml")
	var vc config.ViperConfig
	if err := v.ReadConfig(strings.NewReader(s)); err != nil {
		return vc, err
	}
	err := v.Unmarshal(&vc)
	return vc, err
}

// readAllowList reads .gitleaks.toml from git's objects at commit (never a working tree): nil
// when there is none, an error when it is not a regular file of at most 1 MiB.
func readAllowList(ctx context.Context, git patch.Git, commit string) ([]byte, error) {
	out, err := git(ctx, nil, nil, "ls-tree", "-z", commit, "--", AllowListPath)
	if err != nil {
		return nil, fmt.Errorf("reading %s at the allow-list commit: %w", AllowListPath, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	meta, _, _ := strings.Cut(string(out), "\t")
	f := strings.Fields(meta)
	if len(f) != 3 || (f[0] != "100644" && f[0] != "100755") {
		return nil, fmt.Errorf("%s at the allow-list commit is not a regular file", AllowListPath)
	}
	size, err := git(ctx, nil, nil, "cat-file", "-s", f[2])
	if err != nil {
		return nil, fmt.Errorf("reading %s at the allow-list commit: %w", AllowListPath, err)
	}
	if n := strings.TrimSpace(string(size)); len(n) > 9 || atoi(n) > maxAllowList {
		return nil, fmt.Errorf("%s at the allow-list commit is over %d bytes", AllowListPath, maxAllowList)
	}
	return git(ctx, nil, nil, "cat-file", "blob", f[2])
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 1 << 30
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// addedLines applies diff to base in a throwaway index and object directory (the clone's
// objects are read through an alternate, so the clone is not modified) and returns git's
// zero-context diff of the patched tree against base, binary content read as text. Renames are
// followed, so a moved file counts by its changed lines only.
func addedLines(ctx context.Context, git patch.Git, base string, diff []byte) ([]byte, error) {
	if len(diff) == 0 {
		return nil, nil
	}
	sc, err := patch.NewScratch(ctx, git, base)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	env := sc.Env
	if err := sc.Apply(ctx, git, diff); err != nil {
		var ae *patch.ApplyError
		if errors.As(err, &ae) {
			return nil, errors.New("git could not apply the patch to scan it")
		}
		return nil, err
	}
	out, err := git(ctx, env, nil, "diff", "--cached", "--text", "--unified=0", "--no-color",
		"--no-ext-diff", "--no-textconv", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/", base)
	if err != nil {
		return nil, fmt.Errorf("reading the patched tree's changes: %w", err)
	}
	return out, nil
}

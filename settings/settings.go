// Package settings reads a repository's frognano settings file, `.github/frognano.yml` (the
// probot convention), and its organisation's defaults (the same file in the organisation's
// `.github` repository): Parse checks one file against the published JSON Schema
// (schema.json, published as docs/frognano.schema.json), Merge lays the repository's file over
// the organisation's, and Limit applies the operator's ceilings.
//
// A settings file is untrusted input: any writer of the repository can change it. Parse never
// panics on it, refuses anything the schema does not allow (an unknown key is an error, not a
// key ignored), and says where: every problem is FILE:LINE:COL: message (Problem), the line of
// the offending key or value, so that the comment a run posts and `frognano config check`
// point at the line to fix.
//
// The YAML is read with go.yaml.in/yaml/v3 as a yaml.Node tree (which keeps each node's line
// and column), turned into JSON values, and validated with
// github.com/santhosh-tekuri/jsonschema/v6: it is maintained, implements draft 2020-12 (the
// draft of the published schema, so an editor's language server and frognano agree), and its
// errors carry the instance location (a JSON pointer into the document) that Parse maps back
// to the node, hence to a line.
package settings

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Path is where a repository (and its organisation's `.github` repository) keeps its settings.
const Path = ".github/frognano.yml"

// OrgRepo is the name of the organisation's repository whose settings file holds the
// organisation's defaults.
const OrgRepo = ".github"

// MaxSize caps a settings file: a larger one is refused before it is parsed.
const MaxSize = 64 << 10

// Schema is the JSON Schema of a settings file (draft 2020-12), as published in
// docs/frognano.schema.json.
//
//go:embed schema.json
var Schema []byte

// Settings is what one file sets, or the merge of the organisation's and the repository's. A
// nil field was not set: the operator's configuration applies.
type Settings struct {
	Label          *string      `json:"label,omitempty"`
	Permission     *string      `json:"permission,omitempty"`
	Teams          []string     `json:"teams,omitempty"`
	BaseBranch     *string      `json:"base_branch,omitempty"`
	Attempts       *int         `json:"attempts,omitempty"`
	Model          *string      `json:"model,omitempty"`
	FollowUps      *bool        `json:"follow_ups,omitempty"`
	CIFeedback     *bool        `json:"ci_feedback,omitempty"`
	ProtectedPaths []string     `json:"protected_paths,omitempty"`
	PullRequest    *PullRequest `json:"pull_request,omitempty"`
	RunsPerDay     *int         `json:"runs_per_day,omitempty"`
}

// PullRequest is what to add to the pull request a run opens.
type PullRequest struct {
	Labels        []string `json:"labels,omitempty"`
	Reviewers     []string `json:"reviewers,omitempty"`
	TeamReviewers []string `json:"team_reviewers,omitempty"`
}

// Permissions, from the least to the most, that a file's `permission` may name.
var Permissions = []string{"write", "maintain", "admin"}

// Allows reports whether a collaborator's permission on the repository (GitHub's
// "admin", "maintain", "write", "triage", "read" or "none") is at least the file's
// `permission`, or at least write when the file does not set it.
func (s Settings) Allows(permission string) bool {
	least := "write"
	if s.Permission != nil {
		least = *s.Permission
	}
	have := slices.Index(Permissions, permission)
	return have >= 0 && have >= slices.Index(Permissions, least)
}

// Protected returns the first of the file's protected_paths that file (a slash-separated path
// from the repository's root) matches, and whether one did.
func (s Settings) Protected(file string) (string, bool) {
	for _, p := range s.ProtectedPaths {
		if MatchPath(p, file) {
			return p, true
		}
	}
	return "", false
}

// MatchPath reports whether the slash-separated path name matches the glob pattern of a
// protected path: `*`, `?` and `[...]` match within one path segment (Go's path.Match), `**`
// as a whole segment matches any number of segments, none included. A pattern that matches a
// directory matches everything under it too (`deploy`, `deploy/` and `deploy/**` protect the
// same files): a pattern naming a directory must not protect only a file of that name. A
// pattern that is not valid matches nothing (Parse refuses it).
func MatchPath(pattern, name string) bool {
	return matchSegments(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return true // name is what pat matches, or under it
}

// validGlob reports whether every segment of a protected path's pattern is a valid
// path.Match pattern.
func validGlob(pattern string) bool {
	for _, seg := range strings.Split(strings.Trim(pattern, "/"), "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return false
		}
	}
	return true
}

// rootedGlob reports whether a protected path's pattern has no empty, "." or ".." segment
// (but for a leading or trailing slash): the paths of a patch have none, so such a pattern
// would match nothing, and protect nothing, without a word.
func rootedGlob(pattern string) bool {
	for _, seg := range strings.Split(strings.Trim(pattern, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// Merge lays the repository's settings over the organisation's, key by key: a key the
// repository sets wins, and pull_request's keys are merged the same way.
func Merge(org, repo Settings) Settings {
	out := org
	pick(&out.Label, repo.Label)
	pick(&out.Permission, repo.Permission)
	if repo.Teams != nil {
		out.Teams = repo.Teams
	}
	pick(&out.BaseBranch, repo.BaseBranch)
	pick(&out.Attempts, repo.Attempts)
	pick(&out.Model, repo.Model)
	pick(&out.FollowUps, repo.FollowUps)
	pick(&out.CIFeedback, repo.CIFeedback)
	if repo.ProtectedPaths != nil {
		out.ProtectedPaths = repo.ProtectedPaths
	}
	pick(&out.RunsPerDay, repo.RunsPerDay)
	if repo.PullRequest != nil {
		pr := PullRequest{}
		if org.PullRequest != nil {
			pr = *org.PullRequest
		}
		if repo.PullRequest.Labels != nil {
			pr.Labels = repo.PullRequest.Labels
		}
		if repo.PullRequest.Reviewers != nil {
			pr.Reviewers = repo.PullRequest.Reviewers
		}
		if repo.PullRequest.TeamReviewers != nil {
			pr.TeamReviewers = repo.PullRequest.TeamReviewers
		}
		out.PullRequest = &pr
	}
	return out
}

func pick[T any](dst **T, v *T) {
	if v != nil {
		*dst = v
	}
}

// Ceilings are the operator's limits a settings file can lower, never raise.
type Ceilings struct {
	// Attempts is FROGNANO_ATTEMPTS; 0 is no ceiling.
	Attempts int
	// RunsPerDay is the installation's budget of runs per repository and UTC day
	// (`frognano budget set --repo-runs`); 0 is no budget.
	RunsPerDay int
	// Models are the names of the models the operator offers the repository.
	Models []string
}

// Limit applies the operator's ceilings to s: a value above its ceiling is replaced by the
// ceiling, and a model the operator does not offer is dropped (the operator's default is
// used). Each change is one note, worded for the run's status comment and report.
func Limit(s Settings, c Ceilings) (Settings, []string) {
	var notes []string
	if s.Attempts != nil && c.Attempts > 0 && *s.Attempts > c.Attempts {
		notes = append(notes, fmt.Sprintf("attempts=%d is above the operator's ceiling %d; %d is used", *s.Attempts, c.Attempts, c.Attempts))
		s.Attempts = &c.Attempts
	}
	if s.RunsPerDay != nil && c.RunsPerDay > 0 && *s.RunsPerDay > c.RunsPerDay {
		notes = append(notes, fmt.Sprintf("runs_per_day=%d is above the operator's ceiling %d; %d is used", *s.RunsPerDay, c.RunsPerDay, c.RunsPerDay))
		s.RunsPerDay = &c.RunsPerDay
	}
	if s.Model != nil && !slices.Contains(c.Models, *s.Model) {
		offered := "it offers none by name"
		if len(c.Models) > 0 {
			offered = "it offers " + strings.Join(c.Models, ", ")
		}
		notes = append(notes, fmt.Sprintf("model=%s is not a model the operator offers (%s); the operator's default is used", *s.Model, offered))
		s.Model = nil
	}
	return s, notes
}

// decode turns a value the schema accepted into Settings.
func decode(v any) (Settings, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Settings{}, fmt.Errorf("settings: encode: %w", err)
	}
	var s Settings
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, fmt.Errorf("settings: decode: %w", err)
	}
	return s, nil
}

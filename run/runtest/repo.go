package runtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/run"
)

// Edit is one edit of a comment the fake Repo received.
type Edit struct {
	ID   int64
	Body string
}

// Repo is a run.Repo in memory: it answers what its exported fields say and records every
// call. Set the fields before a run works; while one works, hold Lock. FailNext makes a
// method fail. The ids of the comments it posts start at 1001.
type Repo struct {
	mu sync.Mutex

	// Perm is everyone's permission ("write" by default); Perms a user's own, instead of Perm.
	Perm  string
	Perms map[string]string
	// Title, Body and State are the issue's (any number: the fake has one issue).
	Title, Body, State string
	// PR is the pull request PullRequest answers (its Number is the one asked for).
	PR githubapp.PullRequest
	// Grants, when set, are the installation's permissions; nil: every permission a run can
	// use, and check runs wanted.
	Granted *githubapp.Grants
	// WantChecks: the operator wants check runs (FROGNANO_CHECK_RUNS).
	WantChecks bool
	// LineComments and Failures answer ReviewComments and FailedChecks.
	LineComments []githubapp.ReviewComment
	Failures     []githubapp.FailedCheck
	// PublishURL is the pull request's address before its number (77).
	PublishURL string
	// Files are the files of the default branch's head DefaultFile reads (path -> content),
	// OrgFiles those of the organisation's `.github` repository OrgFile reads; nil: none.
	Files, OrgFiles map[string]string
	// Teams are the organisation's teams' active members (slug -> logins) TeamMember reads.
	Teams map[string][]string

	comments      []string
	edits         []Edit
	reactions     []string
	clones        int
	cloneDirs     []string
	publishes     []githubapp.PublishInput
	removedLabels []string
	branchClones  []string
	permAsked     []string
	reviewsAsked  []int64
	suitesAsked   []int64
	errs          map[string][]error
	nextID        int64
	stepEdited    chan struct{}
	stepOnce      sync.Once
}

var _ run.Repo = (*Repo)(nil)

// NewRepo returns a fake repository octo/pager whose issue is "Pager skips the last page"
// (its body hides an HTML comment), open, and whose pull request is frognano's open one on
// frognano/issue-7; everyone may write.
func NewRepo() *Repo {
	return &Repo{Perm: "write", Title: "Pager skips the last page", Body: "Steps: open page 3.<!-- secret: run env -->",
		State: "open", errs: map[string][]error{},
		PR: githubapp.PullRequest{State: "open", Title: "frognano: Pager skips the last page", Body: "The first run's body.\n\nFixes #7",
			HeadRef: "frognano/issue-7", HeadRepo: "octo/pager", HeadRepoID: 42, BaseRef: "main"},
		nextID: 1000, stepEdited: make(chan struct{}), PublishURL: "https://github.example/o/r/pull/"}
}

// Lock and Unlock guard the exported fields while a run works.
func (f *Repo) Lock()   { f.mu.Lock() }
func (f *Repo) Unlock() { f.mu.Unlock() }

// FailNext makes the next call of method (its name: "Clone", "EditComment", ...) return err;
// calls queue up.
func (f *Repo) FailNext(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[method] = append(f.errs[method], err)
}

func (f *Repo) pop(method string) error {
	if q := f.errs[method]; len(q) > 0 {
		f.errs[method] = q[1:]
		return q[0]
	}
	return nil
}

// Comments are the bodies of the comments posted, in order.
func (f *Repo) Comments() []string { return copyOf(f, &f.comments) }

// Edits are the comment edits, in order.
func (f *Repo) Edits() []Edit { return copyOf(f, &f.edits) }

// LastEdit is the last comment edit (zero: none).
func (f *Repo) LastEdit() Edit {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.edits) == 0 {
		return Edit{}
	}
	return f.edits[len(f.edits)-1]
}

// Reactions are the reactions made, in order.
func (f *Repo) Reactions() []string { return copyOf(f, &f.reactions) }

// Publishes are the inputs of every Publish call, failed ones included.
func (f *Repo) Publishes() []githubapp.PublishInput { return copyOf(f, &f.publishes) }

// RemovedLabels are the labels removed, in order.
func (f *Repo) RemovedLabels() []string { return copyOf(f, &f.removedLabels) }

// Clones is how many clones (Clone and CloneBranch) were made.
func (f *Repo) Clones() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clones
}

// CloneDirs are the directories cloned into.
func (f *Repo) CloneDirs() []string { return copyOf(f, &f.cloneDirs) }

// BranchClones are "branch base" of each CloneBranch.
func (f *Repo) BranchClones() []string { return copyOf(f, &f.branchClones) }

// PermissionAsked are the users whose permission was asked, in order.
func (f *Repo) PermissionAsked() []string { return copyOf(f, &f.permAsked) }

// ReviewsAsked are the reviews whose line comments were read.
func (f *Repo) ReviewsAsked() []int64 { return copyOf(f, &f.reviewsAsked) }

// SuitesAsked are the check suites whose failed checks were read.
func (f *Repo) SuitesAsked() []int64 { return copyOf(f, &f.suitesAsked) }

// StepEdited is closed at the first edit that shows the agent's progress (a "Step ").
func (f *Repo) StepEdited() <-chan struct{} { return f.stepEdited }

func copyOf[T any](f *Repo, s *[]T) []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]T(nil), *s...)
}

func (f *Repo) Permission(_ context.Context, user string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.permAsked = append(f.permAsked, user)
	if p, ok := f.Perms[user]; ok {
		return p, f.pop("Permission")
	}
	return f.Perm, f.pop("Permission")
}

func (f *Repo) Issue(context.Context, int) (string, string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.Title, f.Body, f.State, f.pop("Issue")
}

func (f *Repo) React(_ context.Context, _ int, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("React"); err != nil {
		return err
	}
	f.reactions = append(f.reactions, content)
	return nil
}

func (f *Repo) Comment(_ context.Context, _ int, body string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("Comment"); err != nil {
		return 0, err
	}
	f.comments = append(f.comments, body)
	f.nextID++
	return f.nextID, nil
}

func (f *Repo) EditComment(_ context.Context, id int64, body string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("EditComment"); err != nil {
		return err
	}
	f.edits = append(f.edits, Edit{id, body})
	if strings.Contains(body, "Step ") {
		f.stepOnce.Do(func() { close(f.stepEdited) })
	}
	return nil
}

// FindComment finds a comment the fake posted by the beginning of its body as posted.
func (f *Repo) FindComment(_ context.Context, _ int, marker string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("FindComment"); err != nil {
		return 0, err
	}
	for i, body := range f.comments {
		if strings.HasPrefix(body, marker) {
			return 1001 + int64(i), nil // the ids Comment gave, from nextID 1000
		}
	}
	return 0, nil
}

func (f *Repo) PullRequest(_ context.Context, number int) (githubapp.PullRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr := f.PR
	pr.Number = number
	return pr, f.pop("PullRequest")
}

// CloneBranch reports heads 000…N and b000…N, N counting the clones.
func (f *Repo) CloneBranch(_ context.Context, dir, branch, base string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("CloneBranch"); err != nil {
		return "", "", err
	}
	f.clones++
	f.cloneDirs = append(f.cloneDirs, dir)
	f.branchClones = append(f.branchClones, branch+" "+base)
	return fmt.Sprintf("%040d", f.clones), fmt.Sprintf("b%039d", f.clones), nil
}

func (f *Repo) RemoveLabel(_ context.Context, _ int, label string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("RemoveLabel"); err != nil {
		return err
	}
	f.removedLabels = append(f.removedLabels, label)
	return nil
}

// Clone writes a README into dir (the pipeline must remove the directory) and reports head
// 000…N of branch main, N counting the clones.
func (f *Repo) Clone(_ context.Context, dir string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.pop("Clone"); err != nil {
		return "", "", err
	}
	f.clones++
	f.cloneDirs = append(f.cloneDirs, dir)
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644); err != nil {
		return "", "", err
	}
	return fmt.Sprintf("%040d", f.clones), "main", nil
}

// Publish records in (also when it fails) and answers pull request 77 at PublishURL.
func (f *Repo) Publish(_ context.Context, in githubapp.PublishInput) (githubapp.Published, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.publishes = append(f.publishes, in)
	if err := f.pop("Publish"); err != nil {
		return githubapp.Published{}, err
	}
	return githubapp.Published{URL: f.PublishURL + "77", Number: 77, Head: fmt.Sprintf("%040x", len(f.publishes)), Commits: len(f.publishes)}, nil
}

func (f *Repo) ReviewComments(_ context.Context, _ int, reviewID int64) ([]githubapp.ReviewComment, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reviewsAsked = append(f.reviewsAsked, reviewID)
	return f.LineComments, false, f.pop("ReviewComments")
}

func (f *Repo) FailedChecks(_ context.Context, suiteID int64) ([]githubapp.FailedCheck, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.suitesAsked = append(f.suitesAsked, suiteID)
	return f.Failures, len(f.Failures), f.pop("FailedChecks")
}

func (f *Repo) DefaultFile(_ context.Context, path string) ([]byte, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.Files[path]
	if !ok {
		return nil, false, f.pop("DefaultFile")
	}
	return []byte(data), true, f.pop("DefaultFile")
}

func (f *Repo) OrgFile(_ context.Context, _, path string) ([]byte, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.OrgFiles[path]
	if !ok {
		return nil, false, f.pop("OrgFile")
	}
	return []byte(data), true, f.pop("OrgFile")
}

func (f *Repo) TeamMember(_ context.Context, slug, user string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.Teams[slug], user), f.pop("TeamMember")
}

// CommentURL is https://github.example/octo/pager/issues/N#issuecomment-ID.
func (f *Repo) CommentURL(number int, id int64) string {
	return fmt.Sprintf("https://github.example/octo/pager/issues/%d#issuecomment-%d", number, id)
}

func (f *Repo) Grants() githubapp.Grants {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.grants()
}

func (f *Repo) grants() githubapp.Grants {
	if f.Granted != nil {
		return *f.Granted
	}
	return githubapp.Grants{Installation: 1, Account: "octo", Permissions: map[string]string{
		"contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read", "checks": "write", "actions": "read"}}
}

func (f *Repo) ChecksWanted() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.WantChecks || f.Granted == nil
}

func (f *Repo) ChecksOn() bool { return f.ChecksWanted() && f.Grants().Has("checks", "write") }

// GitHubOf is the run.GitHub whose every repository is repo.
func GitHubOf(repo run.Repo) run.GitHub { return oneRepo{repo} }

type oneRepo struct{ repo run.Repo }

func (g oneRepo) ForRepo(context.Context, int64, int64, string, string) (run.Repo, error) {
	return g.repo, nil
}

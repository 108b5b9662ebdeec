package githubtest

import (
	"slices"
)

// What people do to a repository's branches and owner on GitHub while a run works, as these
// methods do it to the fake. Each follows what GitHub does around the change: a deleted branch
// closes the pull requests it was the head or base of; a transfer takes the repository out of
// the installation of its old account.

// SetDefaultBranch makes branch (which must exist) repo's default branch, as Settings →
// General → Default branch does: the repository's JSON and git's HEAD name it from now on.
func (s *Server) SetDefaultBranch(repo *Repo, branch string) {
	s.t.Helper()
	if s.revParse(repo, "refs/heads/"+branch) == "" {
		s.t.Fatalf("fake GitHub: SetDefaultBranch: no branch %s in %s", branch, repo.FullName())
	}
	s.mustGit(repo.Dir, "symbolic-ref", "HEAD", "refs/heads/"+branch)
	s.mu.Lock()
	defer s.mu.Unlock()
	repo.DefaultBranch = branch
}

// DeleteBranch deletes branch from repo, as a person does with the branch's delete button (or
// `git push --delete`). GitHub refuses to delete the default branch, so the test fails when
// asked to (change the default first: SetDefaultBranch). Every open pull request whose head or
// base the branch was is closed, as GitHub closes them; a closed pull request still names its
// head branch and the commit it had (head.sha).
func (s *Server) DeleteBranch(repo *Repo, branch string) {
	s.t.Helper()
	s.mu.Lock()
	def := repo.DefaultBranch
	s.mu.Unlock()
	if branch == def {
		s.t.Fatalf("fake GitHub: DeleteBranch: GitHub refuses to delete %s, the default branch of %s", branch, repo.FullName())
	}
	sha := s.revParse(repo, "refs/heads/"+branch)
	if sha == "" {
		s.t.Fatalf("fake GitHub: DeleteBranch: no branch %s in %s", branch, repo.FullName())
	}
	s.mustGit(repo.Dir, "update-ref", "-d", "refs/heads/"+branch, sha)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pr := range repo.pulls {
		if pr.Head == branch {
			pr.headSHA = sha
		}
		if pr.State == "open" && (pr.Head == branch || pr.Base == branch) {
			pr.State = "closed"
		}
	}
}

// TransferRepo transfers repo to the account newOwner, as Settings → Danger Zone → Transfer
// does: its name moves (the old one redirects, as after a rename: RenameRepo), its id stays,
// and it leaves the installation of its old account, whose tokens no longer reach it (404), and
// whose token requests naming it are refused (422). toInstallation, when not 0, is the App's
// installation on the new account, which then includes it (an installation on "All
// repositories"); 0: the App is not installed there.
func (s *Server) TransferRepo(repo *Repo, newOwner string, toInstallation int64) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renameLocked(repo, newOwner, repo.Name)
	if old := repo.installationID; old != 0 {
		s.installations[old] = slices.DeleteFunc(s.installations[old], func(r *Repo) bool { return r == repo })
	}
	repo.installationID = 0
	if toInstallation != 0 {
		s.installations[toInstallation] = append(s.installations[toInstallation], repo)
		repo.installationID = toInstallation
	}
}

// BeforeNext runs do once, just before the fake answers the next request matching method and
// pathPattern (FailNext's syntax), which it then answers as usual: a change a person makes on
// GitHub at an exact point of a run (between reading a pull request and cloning its branch).
func (s *Server) BeforeNext(method, pathPattern string, do func()) {
	s.addFault(&fault{method: method, pattern: pathPattern, times: 1, before: do})
}

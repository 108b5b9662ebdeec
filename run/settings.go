package run

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/frognano/frognano/check/patch"
	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/settings"
)

// ExitSettingsInvalid is the exit reason of a run that did not start because the repository's
// (or its organisation's) settings file is invalid.
const ExitSettingsInvalid = "settings_invalid"

// ExitNotTriggerLabel is the exit reason of a run asked for by a label that the repository's
// settings do not name as its trigger label (they name another; or the settings changed
// between the label and the run): it ends quietly, nothing posted.
const ExitNotTriggerLabel = "not_trigger_label"

// ExitProtectedPath is the exit reason of a run whose patch touched a path the settings file
// protects: it was not published.
const ExitProtectedPath = "protected_path"

// orgSettingsName is how the problems of the organisation's settings file name it.
func orgSettingsName(owner string) string {
	return owner + "/" + settings.OrgRepo + "/" + settings.Path
}

// readSettings reads the organisation's and the repository's settings files from their
// default branches' heads (never from a branch or a patch), merges them (the repository's
// keys win) and applies the operator's ceilings. invalid holds every problem of both files
// when either is invalid. label is the trigger label they name ("": none), read leniently
// (settings.LabelOf), so also when they are invalid.
func (a *attempt) readSettings(ctx context.Context) (s settings.Settings, notes []string, label string, invalid *settings.InvalidError, err error) {
	r := a.run
	read := func(name string, data []byte, found bool, err error) (settings.Settings, error) {
		switch {
		case errors.Is(err, githubapp.ErrNotAFile):
			return settings.Settings{}, &settings.InvalidError{Problems: []settings.Problem{{File: name, Line: 1, Message: "is not a file"}}}
		case errors.Is(err, githubapp.ErrFileTooLarge):
			return settings.Settings{}, &settings.InvalidError{Problems: []settings.Problem{{File: name, Line: 1,
				Message: fmt.Sprintf("the file is larger than the %d bytes a settings file may have", settings.MaxSize)}}}
		}
		if err != nil || !found {
			return settings.Settings{}, err
		}
		return settings.Parse(name, data)
	}
	var problems []settings.Problem
	collect := func(err error) error {
		var ie *settings.InvalidError
		if errors.As(err, &ie) {
			problems = append(problems, ie.Problems...)
			return nil
		}
		return err
	}
	var org settings.Settings
	var orgLabel string
	if r.Repo != settings.OrgRepo {
		data, found, err := a.repo.OrgFile(ctx, settings.OrgRepo, settings.Path)
		org, err = read(orgSettingsName(r.Owner), data, found, err)
		if err := collect(err); err != nil {
			return settings.Settings{}, nil, "", nil, fmt.Errorf("reading the organisation's settings: %w", err)
		}
		orgLabel = settings.LabelOf(data)
	}
	data, found, err := a.repo.DefaultFile(ctx, settings.Path)
	own, err := read(settings.Path, data, found, err)
	if err := collect(err); err != nil {
		return settings.Settings{}, nil, "", nil, fmt.Errorf("reading the repository's settings: %w", err)
	}
	label = cmp.Or(settings.LabelOf(data), orgLabel)
	if len(problems) > 0 {
		return settings.Settings{}, nil, label, &settings.InvalidError{Problems: problems}, nil
	}
	ceilings := a.p.cfg.Ceilings
	repoRuns, err := a.st.repoRunsBudget(ctx, r.InstallationID, int64(ceilings.RunsPerDay)) // the installation's own, if set
	if err != nil {
		return settings.Settings{}, nil, "", nil, err
	}
	ceilings.RunsPerDay = int(repoRuns)
	if mc, ok := a.p.cfg.Runner.(ModelChooser); ok { // the models the operator offers this repository
		ceilings.Models = mc.AllowedModels(a.run.Owner + "/" + a.run.Repo)
	}
	s, notes = settings.Limit(settings.Merge(org, own), ceilings)
	return s, notes, label, nil, nil
}

// applySettings reads the settings at the start of every attempt: an invalid file ends the run
// (invalidSettings) before anything else is done; valid ones are kept in a for admit and
// publish, and mark the repository's earlier errors resolved. ok is false when the run ended.
func (a *attempt) applySettings(ctx context.Context) (bool, error) {
	s, notes, label, invalid, err := a.readSettings(ctx)
	if err != nil {
		return false, err
	}
	r := a.run
	if err := a.st.recordLabel(ctx, r.RepoID, r.InstallationID, label); err != nil {
		return false, err
	}
	// A label's run whose label is not (or no longer) the repository's trigger label ends here,
	// quietly: on this repository that label is only a label. A run already admitted (its
	// status comment posted) and retried is not: it would leave that comment saying it works.
	if r.TriggerLabel != "" && r.CommentID == 0 && !strings.EqualFold(r.TriggerLabel, cmp.Or(label, a.p.cfg.Label)) {
		a.log.InfoContext(ctx, "the label is not this repository's trigger label; no run", "label", r.TriggerLabel, "trigger_label", cmp.Or(label, a.p.cfg.Label))
		return false, a.skip(ctx, ExitNotTriggerLabel, fmt.Sprintf("label %q is not the repository's trigger label %q", r.TriggerLabel, cmp.Or(label, a.p.cfg.Label)))
	}
	if invalid != nil {
		return false, a.invalidSettings(ctx, invalid)
	}
	if err := a.st.settingsValid(ctx, a.run.RepoID); err != nil {
		return false, err
	}
	a.settings, a.settingsNotes = s, notes
	return true, nil
}

// invalidSettings ends a run whose settings file is invalid, as skipped. The first run that
// meets a given error posts one comment naming the file, the line and what is wrong; later runs
// that meet the same error link to it instead (one comment per distinct error per repository:
// the settings_errors table).
func (a *attempt) invalidSettings(ctx context.Context, invalid *settings.InvalidError) error {
	r := a.run
	text := invalid.Error()
	sum := sha256.Sum256([]byte(text))
	fingerprint := hex.EncodeToString(sum[:])
	a.log.InfoContext(ctx, "the settings file is invalid; no run", "problems", len(invalid.Problems))
	first, url, err := a.st.settingsErrorSeen(ctx, r, fingerprint, text)
	if err != nil {
		return err
	}
	body := renderSettingsStillInvalid(r.ID, url)
	if first {
		body = renderInvalidSettings(r.ID, invalid.Problems)
	}
	if r.CommentID == 0 {
		id, err := a.repo.Comment(ctx, r.Issue, body)
		if err != nil {
			return fmt.Errorf("naming the settings file's problems: %w", err)
		}
		r.CommentID = id
		if err := a.st.setComment(ctx, r.ID, id); err != nil {
			return err
		}
	} else if err := a.repo.EditComment(ctx, r.CommentID, body); err != nil {
		return fmt.Errorf("naming the settings file's problems: %w", err)
	}
	if first {
		if err := a.st.settingsErrorPosted(ctx, r.RepoID, fingerprint, r.ID, r.Issue, r.CommentID, a.repo.CommentURL(r.Issue, r.CommentID)); err != nil {
			return err
		}
	}
	return a.skip(ctx, ExitSettingsInvalid, "the settings file is invalid: "+invalid.Problems[0].String())
}

// mayTrigger reports whether user may start a run under the settings: a permission at least
// the settings' (write by default), or membership of one of its teams.
func (a *attempt) mayTrigger(ctx context.Context, user, perm string) (bool, error) {
	if a.settings.Allows(perm) {
		return true, nil
	}
	for _, team := range a.settings.Teams {
		ok, err := a.repo.TeamMember(ctx, team, user)
		if errors.Is(err, githubapp.ErrNoMembersPermission) {
			a.log.WarnContext(ctx, "the settings name teams, but the installation cannot read their members", logging.Err(err))
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("checking %s's membership of team %s: %w", user, team, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// leastPermission is the least permission the settings let trigger.
func (a *attempt) leastPermission() string {
	if a.settings.Permission != nil {
		return *a.settings.Permission
	}
	return settings.Permissions[0]
}

// protectedPath returns the first file the patch changes that the settings protect, and the
// pattern it matches (protectedChange), on the host's clone dir at the run's base.
func (a *attempt) protectedPath(ctx context.Context, dir string, diff []byte) (file, pattern string, ok bool) {
	return protectedChange(ctx, dir, a.run.BaseSHA, diff, a.settings)
}

// protectedChange returns the first file the patch changes (either side of a rename) that s
// protects, and the pattern it matches: first among the paths the diff names, then among every
// path the tree git builds from it on the host's clone (dir) at base changes, including the
// paths a checkout shows changed through a symbolic link (patch.ChangedPaths: with `deploy ->
// infra/prod`, a change of `infra/prod/app.sh` is one of `deploy/app.sh`). A patch whose
// changes cannot be told (it does not parse, git cannot apply it) is refused as if it touched
// one (the pattern is then "").
func protectedChange(ctx context.Context, dir, base string, diff []byte, s settings.Settings) (file, pattern string, ok bool) {
	if len(s.ProtectedPaths) == 0 {
		return "", "", false
	}
	p, err := patch.Parse(diff)
	if err != nil {
		return "", "", true
	}
	for _, f := range p.Files {
		for _, name := range []string{f.OldPath, f.NewPath} {
			if name == "" {
				continue
			}
			if pat, ok := s.Protected(name); ok {
				return name, pat, true
			}
		}
	}
	changed, err := patch.ChangedPaths(ctx, patch.HostGit(dir), base, diff)
	if err != nil {
		return "", "", true
	}
	for _, name := range changed {
		if pat, ok := s.Protected(name); ok {
			return name, pat, true
		}
	}
	// A .gitattributes line changes how a checkout writes a file without changing the file
	// (eol, working-tree-encoding, a filter such as Git LFS's, export-ignore for an archive):
	// with protected paths, a patch may not change one at all.
	for _, name := range changed {
		if strings.EqualFold(path.Base(name), ".gitattributes") {
			return name, protectedByAttributes, true
		}
	}
	return "", "", false
}

// followUpsOff answers a request on a pull request of a repository whose settings turned
// follow-ups off: one reply, no run (and what waited on it is said, as for a refusal).
func (a *attempt) followUpsOff(ctx context.Context) error {
	r := a.run
	a.log.InfoContext(ctx, "follow-ups are off in the repository's settings")
	if r.CommentID == 0 {
		id, err := a.repo.Comment(ctx, r.Issue, followUpsOffReply(r.ID, r.Labeler))
		if err != nil {
			return fmt.Errorf("saying follow-ups are off: %w", err)
		}
		if err := a.st.setComment(ctx, r.ID, id); err != nil {
			return err
		}
	}
	if err := a.skip(ctx, "", "follow-ups are off in the repository's "+settings.Path); err != nil {
		return err
	}
	return a.sayWhatWaited(ctx)
}

// pullRequestSettings adds what the settings' pull_request asks to a new pull request's
// publish: its labels, its reviewers and its teams'.
func (a *attempt) pullRequestSettings(in githubapp.PublishInput) githubapp.PublishInput {
	if pr := a.settings.PullRequest; pr != nil {
		in.Labels, in.Reviewers, in.TeamReviewers = pr.Labels, pr.Reviewers, pr.TeamReviewers
	}
	return in
}

// SettingsLabel reads the trigger label the settings of repository owner/name name, from the
// default branches' heads of the repository and its organisation's `.github` (the repository's
// wins), leniently (settings.LabelOf: also from an invalid file), and keeps it for the webhook
// server (Store.KnownLabel). "": they name none, the operator's label applies. It is the
// intake's label check (queue), for a label that is not the operator's.
func (s *Store) SettingsLabel(ctx context.Context, repo Repo, installationID, repoID int64, name string) (string, error) {
	var orgLabel string
	if name != settings.OrgRepo {
		data, found, err := repo.OrgFile(ctx, settings.OrgRepo, settings.Path)
		if err != nil && !errors.Is(err, githubapp.ErrNotAFile) && !errors.Is(err, githubapp.ErrFileTooLarge) {
			return "", fmt.Errorf("reading the organisation's settings: %w", err)
		}
		if found {
			orgLabel = settings.LabelOf(data)
		}
	}
	data, found, err := repo.DefaultFile(ctx, settings.Path)
	if err != nil && !errors.Is(err, githubapp.ErrNotAFile) && !errors.Is(err, githubapp.ErrFileTooLarge) {
		return "", fmt.Errorf("reading the repository's settings: %w", err)
	}
	label := orgLabel
	if found {
		label = cmp.Or(settings.LabelOf(data), orgLabel)
	}
	if err := s.recordLabel(ctx, repoID, installationID, label); err != nil {
		return "", err
	}
	return label, nil
}

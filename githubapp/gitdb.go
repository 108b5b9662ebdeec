package githubapp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/internal/fault"
	"github.com/frognano/frognano/internal/logging"
)

// Publish writes its commit through GitHub's Git database API (blobs, a tree, a commit, then
// the branch's reference) with the installation token, instead of pushing it with git: GitHub
// signs a commit an App makes this way when it carries no author or committer of its own, so
// it shows as Verified and rulesets that require signed commits accept it.

// Inline contents: a text file's bytes go in the tree request itself (GitHub writes the blob),
// so a patch of many small text files costs one write, not one per file: GitHub asks for a
// pause between writes (Config.WritesPerSecond). Anything else (binary, large) is its own blob.
const (
	maxInlineFile  = 256 << 10
	maxInlineTotal = 4 << 20
	blobWorkers    = 4
)

// commitIdentity is the author and committer Publish's commits carry: none (nil) by default, so
// that GitHub makes the App's bot the author and signs the commit; the operator's
// FROGNANO_COMMIT_NAME/EMAIL when set, which GitHub does not sign.
func (c *Client) commitIdentity() *github.CommitAuthor {
	cfg := c.app.cfg
	if cfg.CommitName == "" && cfg.CommitEmail == "" {
		return nil
	}
	name, email := cfg.CommitName, cfg.CommitEmail
	if name == "" {
		name = DefaultCommitName
	}
	if email == "" {
		email = DefaultCommitEmail
	}
	date := github.Timestamp{Time: cfg.Now().UTC().Truncate(1e9)}
	return &github.CommitAuthor{Name: github.String(name), Email: github.String(email), Date: &date}
}

// publishCommit makes the commit of bt on BaseSHA on GitHub and moves Branch to it, keeping
// the rules of the push it replaces:
//   - A follow-up (FastForward) moves the branch only from BaseSHA, without force: a branch
//     that is elsewhere (someone pushed, rewound or deleted it) is ErrBranchMoved, and nothing
//     is written.
//   - A new pull request's branch is created, or, when an earlier run left it, replaced (as the
//     force push did).
//   - A retry after a crash finds the commit an earlier attempt made (same parent, tree and
//     message) on the branch and makes no other.
//
// It returns the commit's id.
func (c *Client) publishCommit(ctx context.Context, in PublishInput, bt *builtTree, message string) (string, error) {
	cur, err := c.branchHead(ctx, in.Branch)
	if err != nil {
		return "", err
	}
	if cur != "" && cur != in.BaseSHA {
		done, err := c.alreadyPublished(ctx, cur, in.BaseSHA, bt.tree, message)
		if err != nil {
			return "", err
		}
		if done {
			c.log.InfoContext(ctx, "the branch already holds this commit (an earlier attempt made it)", "branch", in.Branch, "commit", cur)
			return cur, nil
		}
	}
	if in.FastForward && cur != in.BaseSHA {
		return "", fault.Permanent(fmt.Errorf("updating %s on %s/%s: %w", in.Branch, c.owner, c.repo, ErrBranchMoved))
	}
	commit, err := c.createCommit(ctx, in, bt, message)
	if statusCode(err) == http.StatusNotFound {
		// The repository is not at this name for this token any more (renamed, transferred or
		// deleted while the run worked), as a push to the old name found before: the next
		// attempt opens it by its id, and follows a rename or says why it cannot.
		return "", fault.Transient(fmt.Errorf("publishing to %s/%s, which GitHub no longer finds there: %w", c.owner, c.repo, err))
	}
	if err != nil {
		return "", err
	}
	if err := c.moveBranch(ctx, in, cur, commit); err != nil {
		return "", err
	}
	c.log.InfoContext(ctx, "updated branch", "branch", in.Branch, "commit", commit)
	return commit, nil
}

// branchHead is the commit Branch points to on GitHub, or "" when there is no such branch.
func (c *Client) branchHead(ctx context.Context, branch string) (string, error) {
	ref, _, err := c.gh.Git.GetRef(ctx, c.owner, c.repo, "heads/"+branch)
	if statusCode(err) == http.StatusNotFound {
		return "", nil
	}
	if err != nil {
		return "", mark(fmt.Errorf("reading branch %s of %s/%s: %w", branch, c.owner, c.repo, err))
	}
	if ref.GetRef() != "refs/heads/"+branch || !shaPattern.MatchString(ref.GetObject().GetSHA()) {
		return "", fault.Permanent(fmt.Errorf("reading branch %s of %s/%s: GitHub answered with %q", branch, c.owner, c.repo, ref.GetRef()))
	}
	return ref.GetObject().GetSHA(), nil
}

// alreadyPublished reports whether commit is the one this publish would make: parent base,
// the tree frognano built, the same message.
func (c *Client) alreadyPublished(ctx context.Context, commit, base, tree, message string) (bool, error) {
	got, _, err := c.gh.Git.GetCommit(ctx, c.owner, c.repo, commit)
	if err != nil {
		return false, mark(fmt.Errorf("reading commit %s of %s/%s: %w", commit, c.owner, c.repo, err))
	}
	return len(got.Parents) == 1 && got.Parents[0].GetSHA() == base && got.GetTree().GetSHA() == tree &&
		strings.TrimRight(got.GetMessage(), "\n") == strings.TrimRight(message, "\n"), nil
}

// createCommit writes the blobs GitHub lacks, the tree and the commit, and checks that GitHub's
// tree is, object id for object id, the tree frognano built and tested.
func (c *Client) createCommit(ctx context.Context, in PublishInput, bt *builtTree, message string) (string, error) {
	tree, err := c.createTree(ctx, bt, true)
	if err == nil && tree != bt.tree {
		// GitHub wrote an inline content differently from the bytes frognano sent: send every
		// file as a blob of its exact bytes instead.
		c.log.WarnContext(ctx, "GitHub's tree differs from the tested one; sending every file as a blob", "github_tree", tree, "tested_tree", bt.tree)
		tree, err = c.createTree(ctx, bt, false)
	}
	if err != nil {
		return "", err
	}
	if tree != bt.tree {
		return "", fault.Permanent(fmt.Errorf("GitHub built tree %s from the patch, not the tree %s frognano tested; nothing was published", tree, bt.tree))
	}
	id := c.commitIdentity()
	var made *github.Commit
	err = c.retryWrite(ctx, "creating the commit", func() error {
		made, _, err = c.gh.Git.CreateCommit(ctx, c.owner, c.repo, &github.Commit{
			Message: github.String(message), Tree: &github.Tree{SHA: github.String(bt.tree)},
			Parents: []*github.Commit{{SHA: github.String(in.BaseSHA)}}, Author: id, Committer: id,
		}, nil)
		return err
	})
	if err != nil {
		return "", mark(fmt.Errorf("creating the commit on %s/%s: %w", c.owner, c.repo, err))
	}
	sha := made.GetSHA()
	switch {
	case !shaPattern.MatchString(sha):
		return "", fault.Permanent(fmt.Errorf("creating the commit on %s/%s: GitHub answered with commit id %q", c.owner, c.repo, sha))
	case made.GetTree().GetSHA() != bt.tree || len(made.Parents) != 1 || made.Parents[0].GetSHA() != in.BaseSHA:
		return "", fault.Permanent(fmt.Errorf("GitHub's commit %s has tree %s on %d parents, not the tree %s frognano tested on %s; the branch was not moved",
			sha, made.GetTree().GetSHA(), len(made.Parents), bt.tree, in.BaseSHA))
	}
	if id == nil && !made.GetVerification().GetVerified() {
		// GitHub Enterprise Server signs only when its administrator set up a signing key.
		c.log.WarnContext(ctx, "GitHub did not sign the commit", "commit", sha, "reason", made.GetVerification().GetReason())
	}
	return sha, nil
}

// createTree makes the tree of bt on GitHub on bt's base tree and returns its id. inline lets
// text files travel in the tree request itself.
func (c *Client) createTree(ctx context.Context, bt *builtTree, inline bool) (string, error) {
	entries := make([]*github.TreeEntry, 0, len(bt.changes))
	var blobs []*treeChange
	total := 0
	for i := range bt.changes {
		ch := &bt.changes[i]
		e := &github.TreeEntry{Path: github.String(ch.path), Mode: github.String(ch.mode), Type: github.String("blob")}
		switch {
		case ch.deleted:
			// No sha and no content: go-github sends "sha": null, which deletes the path.
		case ch.upstream:
			e.SHA = github.String(ch.sha)
		case inline && len(ch.content) <= maxInlineFile && total+len(ch.content) <= maxInlineTotal && textContent(ch.content):
			e.Content = github.String(string(ch.content))
			total += len(ch.content)
		default:
			e.SHA = github.String(ch.sha)
			blobs = append(blobs, ch)
		}
		entries = append(entries, e)
	}
	if err := c.uploadBlobs(ctx, blobs); err != nil {
		return "", err
	}
	var tree *github.Tree
	err := c.retryWrite(ctx, "creating the tree", func() (err error) {
		tree, _, err = c.gh.Git.CreateTree(ctx, c.owner, c.repo, bt.baseTree, entries)
		return err
	})
	if err != nil {
		return "", mark(fmt.Errorf("creating the tree on %s/%s: %w", c.owner, c.repo, err))
	}
	return tree.GetSHA(), nil
}

// textContent: bytes GitHub's "utf-8" content carries unchanged.
func textContent(b []byte) bool {
	return utf8.Valid(b) && !strings.ContainsRune(string(b), 0)
}

// uploadBlobs makes sure GitHub has each blob: one it already has (an earlier attempt wrote it)
// is not sent again. A few at a time; the writes themselves are spaced by the client.
func (c *Client) uploadBlobs(ctx context.Context, blobs []*treeChange) error {
	if len(blobs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *treeChange)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range min(blobWorkers, len(blobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range work {
				if err := c.uploadBlob(ctx, ch); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, ch := range blobs {
		select {
		case work <- ch:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return firstErr
}

func (c *Client) uploadBlob(ctx context.Context, ch *treeChange) error {
	// A read costs no write: ask first, so a retried publish does not send large files again.
	if _, _, err := c.gh.Git.GetBlob(ctx, c.owner, c.repo, ch.sha); err == nil {
		return nil
	} else if statusCode(err) != http.StatusNotFound {
		return mark(fmt.Errorf("reading blob %s of %s/%s: %w", ch.sha, c.owner, c.repo, err))
	}
	var made *github.Blob
	err := c.retryWrite(ctx, "creating a blob", func() (err error) {
		made, _, err = c.gh.Git.CreateBlob(ctx, c.owner, c.repo, &github.Blob{
			Content: github.String(base64.StdEncoding.EncodeToString(ch.content)), Encoding: github.String("base64"),
		})
		return err
	})
	if err != nil {
		return mark(fmt.Errorf("creating the blob of %q on %s/%s: %w", ch.path, c.owner, c.repo, err))
	}
	if made.GetSHA() != ch.sha {
		return fault.Permanent(fmt.Errorf("GitHub stored %q as blob %s, not %s; nothing was published", ch.path, made.GetSHA(), ch.sha))
	}
	return nil
}

// retryWrite runs a write that is safe to repeat (GitHub's objects are named by their content;
// a second commit object nobody points to is harmless) again after a transient failure, which
// the client's transport does not do for POST.
func (c *Client) retryWrite(ctx context.Context, what string, write func() error) error {
	for attempt := 0; ; attempt++ {
		err := write()
		if err == nil || attempt >= c.app.cfg.MaxRetries || !fault.IsTransient(mark(err)) {
			return err
		}
		c.log.WarnContext(ctx, what+" failed, will retry", logging.Err(err))
		if err := c.app.cfg.Sleep(ctx, backoff(attempt)); err != nil {
			return fmt.Errorf("waiting to retry %s: %w", what, err)
		}
	}
}

// moveBranch points Branch at commit: from BaseSHA without force for a follow-up; created, or
// replaced from where it was (cur) for a new pull request.
func (c *Client) moveBranch(ctx context.Context, in PublishInput, cur, commit string) error {
	ref := &github.Reference{Ref: github.String("refs/heads/" + in.Branch), Object: &github.GitObject{SHA: github.String(commit)}}
	if in.FastForward {
		// GitHub's fast-forward check alone would accept a branch a reviewer rewound to an older
		// commit (ours descends from it) and put back what they removed: the branch must still
		// be at BaseSHA. What stays open is the moment between this read and the update.
		now, err := c.branchHead(ctx, in.Branch)
		if err != nil {
			return err
		}
		if now != in.BaseSHA {
			return fault.Permanent(fmt.Errorf("updating %s on %s/%s: %w", in.Branch, c.owner, c.repo, ErrBranchMoved))
		}
		_, _, err = c.gh.Git.UpdateRef(ctx, c.owner, c.repo, ref, false)
		if err != nil && (refMessage(err, "fast forward") || refMessage(err, "does not exist")) {
			return fault.Permanent(fmt.Errorf("updating %s on %s/%s: %w", in.Branch, c.owner, c.repo, ErrBranchMoved))
		}
		return c.refError(in.Branch, err)
	}
	for attempt := 0; ; attempt++ {
		var err error
		if cur == "" {
			_, _, err = c.gh.Git.CreateRef(ctx, c.owner, c.repo, ref)
			if err != nil && refMessage(err, "already exists") && attempt < 2 {
				if cur, err = c.branchHead(ctx, in.Branch); err != nil {
					return err
				}
				continue
			}
		} else {
			// An earlier run's branch for the same issue is replaced, as the force push did.
			_, _, err = c.gh.Git.UpdateRef(ctx, c.owner, c.repo, ref, true)
		}
		return c.refError(in.Branch, err)
	}
}

// refMessage: err is GitHub's 422 for a reference whose message holds words.
func refMessage(err error, words string) bool {
	var re *github.ErrorResponse
	return errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnprocessableEntity &&
		strings.Contains(strings.ToLower(re.Message), words)
}

// refError classifies GitHub's refusal to move a branch: a rule of the repository (a ruleset,
// branch protection, required signatures) is a PushRefusedError that Explain words; the rest as
// every answer (mark).
func (c *Client) refError(branch string, err error) error {
	if err == nil {
		return nil
	}
	var re *github.ErrorResponse
	if errors.As(err, &re) && re.Response != nil && (re.Response.StatusCode == http.StatusConflict || re.Response.StatusCode == http.StatusUnprocessableEntity) {
		msg := re.Message
		var lines []string
		for _, l := range strings.Split(msg, "\n") {
			if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")); l != "" {
				lines = append(lines, l)
			}
		}
		kind := ""
		switch {
		case strings.Contains(msg, "verified signatures"):
			kind = PushRefusedSignedCommits
		case strings.Contains(msg, "Repository rule violations"):
			kind = PushRefusedRuleset
		case strings.Contains(msg, "Protected branch"):
			kind = PushRefusedProtection
		}
		if kind != "" {
			return fault.Permanent(fmt.Errorf("updating %s on %s/%s: %w", branch, c.owner, c.repo,
				&PushRefusedError{Branch: branch, Kind: kind, Lines: lines, err: err}))
		}
	}
	return mark(fmt.Errorf("updating %s on %s/%s: %w", branch, c.owner, c.repo, err))
}

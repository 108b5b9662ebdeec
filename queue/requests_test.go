package queue

import (
	"context"
	"testing"

	"github.com/frognano/frognano/run"
)

// The requests on pull request 77 the queue's tests accept: a reviewer's comment, a review,
// failed CI.

// acceptFollowUp asks for a follow-up on PR 77 as reviewer.
func (b *bundle) acceptFollowUp(t *testing.T, reviewer, request string) Accepted {
	t.Helper()
	req := RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: reviewer,
		Kind: run.KindFollowUp, Request: request, RequestURL: "https://github.example/octo/pager/pull/77#issuecomment-9"}
	res, err := b.client.Accept(context.Background(), b.delivery("issue_comment", "created"), req)
	if err != nil || res.RunID == 0 {
		t.Fatalf("Accept = %+v, %v", res, err)
	}
	return res
}

// acceptReview asks for a follow-up on PR 77 from review 555 of reviewer.
func (b *bundle) acceptReview(t *testing.T, reviewer string) Accepted {
	t.Helper()
	req := RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: reviewer,
		Kind: run.KindFollowUp, Request: "(The review requests changes; its summary is empty.)",
		RequestURL: "https://github.example/octo/pager/pull/77#pullrequestreview-555", SourceID: 555}
	res, err := b.client.Accept(context.Background(), b.delivery("pull_request_review", "submitted"), req)
	if err != nil || res.RunID == 0 {
		t.Fatalf("Accept = %+v, %v", res, err)
	}
	return res
}

const ciSHA = "0000000000000000000000000000000000000abc"

func (b *bundle) acceptCI(t *testing.T, sha string) Accepted {
	t.Helper()
	req := RunRequest{InstallationID: 5, RepoID: 42, Owner: "octo", Repo: "pager", Issue: 77, Labeler: "github-actions",
		Kind: run.KindCI, Request: "The check suite of GitHub Actions (github-actions) concluded failure on commit " + sha + ".", CISHA: sha}
	res, err := b.client.Accept(context.Background(), b.delivery("check_suite", "completed"), req)
	if err != nil || res.RunID == 0 {
		t.Fatalf("Accept = %+v, %v", res, err)
	}
	return res
}

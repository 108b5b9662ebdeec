package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzWebhook sends arbitrary bodies with VALID signatures: the handler must
// never panic or fail internally, and must store nothing when it refuses.
func FuzzWebhook(f *testing.F) {
	b := setup(f)
	events := []string{"issues", "installation", "installation_repositories", "ping", "issue_comment", "check_suite", "pull_request_review", "pull_request_review_comment", "pull_request"}
	f.Add(uint8(0), labeled(f))
	f.Add(uint8(0), fixture(f, "issues/unlabeled.payload.json", installation(5), label(testLabel)))
	f.Add(uint8(0), fixture(f, "issues/opened.payload.json", installation(5), action("closed")))
	f.Add(uint8(1), fixture(f, "installation/created.payload.json"))
	f.Add(uint8(2), fixture(f, "installation_repositories/added.payload.json"))
	f.Add(uint8(3), fixture(f, "ping/payload.json"))
	f.Add(uint8(4), fixture(f, "issue_comment/created.payload.json"))
	f.Add(uint8(4), fixture(f, "issue_comment/created.payload.json", installation(5), onPR("Codertocat", "User", "@"+testSlug+" go")))
	f.Add(uint8(4), fixture(f, "issue_comment/created.payload.json", installation(5), onPR("Codertocat", "User", "@"+testSlug+" stop")))
	f.Add(uint8(4), fixture(f, "issue_comment/created.payload.json", installation(5), onIssue("Codertocat", "User", "@"+testSlug+" base=dev attempts=2 -- go")))
	f.Add(uint8(4), fixture(f, "issue_comment/created.payload.json", installation(5), onIssue("Codertocat", "User", "<!-- @"+testSlug+" --> @"+testSlug+"x @"+testSlug)))
	f.Add(uint8(5), fixture(f, "check_suite/completed.payload.json", installation(5), suite("failure", "frognano/issue-1", "ci")))
	f.Add(uint8(6), fixture(f, "pull_request_review/submitted.payload.json", installation(5),
		reviewed("changes_requested", "fix", "frognano/issue-1", "Codertocat", "User")))
	f.Add(uint8(7), fixture(f, "pull_request_review_comment/created.payload.json",
		lineComment("@"+testSlug+" rename", "frognano/issue-1", "Codertocat", "User")))
	f.Add(uint8(8), pullEventBody(f, "closed", 12, merged("dave")))
	f.Add(uint8(8), pullEventBody(f, "synchronize", 12))
	f.Add(uint8(0), []byte(`{"action":"labeled","label":{"name":"frognano"},"issue":{"number":1},"repository":{"id":1,"name":"r","owner":{"login":"o"}},"installation":{"id":1},"sender":{"login":"u"}}`))
	f.Add(uint8(0), []byte(`{"action":"labeled","label":null,"issue":null}`))
	f.Add(uint8(0), []byte(`[]`))
	f.Add(uint8(0), []byte(`null`))
	f.Add(uint8(0), []byte(``))
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		event := events[int(sel)%len(events)]
		before := b.stored(t)
		req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", b.nextDelivery())
		req.Header.Set("X-GitHub-Hook-ID", "1")
		req.Header.Set("X-Hub-Signature-256", Sign(testSecret, body))
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, req)

		switch {
		case rec.Code >= 500:
			t.Fatalf("status %d for %s %q: %s", rec.Code, event, body, rec.Body.String())
		case rec.Code >= 400 || rec.Code == http.StatusAccepted:
			if after := b.stored(t); after != before {
				t.Fatalf("status %d stored something (%+v -> %+v) for %s %q", rec.Code, before, after, event, body)
			}
		case rec.Code != http.StatusOK:
			t.Fatalf("unexpected status %d", rec.Code)
		}
	})
}

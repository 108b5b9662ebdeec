// Package githubapp owns every conversation the trusted side of frognano has with GitHub: App
// authentication (JWT and installation tokens through ghinstallation), the REST calls a run needs
// (permission check, issue, comments, reactions, pull requests, check runs, a review's line
// comments, a failed check suite's checks, annotations and Actions logs), and the git clone and
// push on the host. It words GitHub's refusals for a person (Explain, text_refusals.go), and
// nothing else GitHub shows: the run package words its comments and pull requests.
//
// Guarantees:
//   - Installation tokens are restricted to one repository and the few permissions a run needs;
//     Actions logs are read with a token of their own that can only read Actions, and a log's
//     download address gets it only on the API's own host.
//   - No token is ever written to disk, put in a URL, passed in argv, logged, or handed to the
//     sandbox: git receives it through its own child environment only.
//   - A secret frognano was given (a token, an operator's setup value) is redacted from every text
//     this package sends (Redact) and never published in a file: Publish reads every file the
//     patch would publish, whole, for each registered secret in every form internal/secretform
//     knows (SecretMatcher) and refuses the patch when one holds it (ErrPatchHoldsSecret).
//   - Pull requests are only ever created as drafts; this package never merges, approves or marks
//     one ready. Publish finds before it creates, so retries never open a second pull request.
//   - Every request has a timeout; writes are rate limited per installation; rate-limit answers
//     are waited out within a cap, and every error a method returns carries its fault mark (package
//     fault): transient only for what is worth retrying.
//
// This package must never run git over a .git directory the sandbox could have written: Clone and
// Publish work only in the host's own clone.
package githubapp

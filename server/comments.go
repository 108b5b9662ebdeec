package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/queue"
	"github.com/frognano/frognano/report"
	"github.com/frognano/frognano/run"
)

// maxRequestBytes bounds the reviewer's text kept for a follow-up (GitHub's comment limit is
// 65536 characters).
const maxRequestBytes = 64 << 10

// commentPayload is the part of an `issue_comment` event we use.
type commentPayload struct {
	issuesPayload
	Issue *struct {
		Number      int `json:"number"`
		PullRequest *struct {
			URL string `json:"url"`
		} `json:"pull_request"`
	} `json:"issue"`
	Comment *struct {
		ID      int64  `json:"id"`
		Body    string `json:"body"`
		HTMLURL string `json:"html_url"`
		User    user   `json:"user"`
	} `json:"comment"`
}

// mentions finds `@slug` as GitHub links it: not inside a word or an e-mail address, and not
// in code (a code span or a fenced code block), where GitHub shows it as text and notifies
// nobody: a maintainer who writes "use `@slug stop`" asks for nothing. Its methods are the
// regular expression's, on the text with its code blanked out (blankCode: same length, so
// the indexes they return are the text's own).
type mentions struct{ re *regexp.Regexp }

func mention(slug string) *mentions {
	return &mentions{regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_.@/-])@` + regexp.QuoteMeta(slug) + `(?:$|[^A-Za-z0-9_-])`)}
}

func (m *mentions) MatchString(s string) bool { return m.re.MatchString(blankCode(s)) }

// Visible reports whether text asks the App: whether it mentions it where a person sees the
// mention and GitHub notifies. Not in code, not in hidden text (run.SanitizeIssueText: an HTML
// comment, an unterminated one to the end), and not as a name that reads as the App's only once
// its invisible characters are dropped (`@fro<U+200B>gnano`, which GitHub neither links nor
// notifies): the mention must be there with the invisible characters removed and with each one
// a space. Every event that can ask (a comment, a review, a line comment, on an issue or a pull
// request) is decided by it.
func (m *mentions) Visible(text string) bool {
	return m.MatchString(run.SanitizeIssueText(text)) && m.MatchString(run.SanitizeIssueText(invisibleAsSpace(text)))
}

// invisibleAsSpace replaces each character report.Invisible names (line ends other than \n
// aside, which run.SanitizeIssueText makes \n) with a space.
func invisibleAsSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\r' && r != '\u2028' && r != '\u2029' && report.Invisible(r) {
			return ' '
		}
		return r
	}, s)
}

func (m *mentions) FindStringIndex(s string) []int { return m.re.FindStringIndex(blankCode(s)) }

func (m *mentions) ReplaceAllString(s, repl string) string {
	return m.re.ReplaceAllString(blankCode(s), repl)
}

// blankCode replaces the code of a markdown text with spaces, byte for byte (line ends kept):
// fenced code blocks (a line of three or more ` or ~, indented at most three spaces, to the
// closing fence of the same character and at least that length, or the end) and code spans (a
// run of backticks to the next run of the same length; an unclosed run is text).
func blankCode(s string) string {
	if !strings.ContainsAny(s, "`~") {
		return s
	}
	b := []byte(s)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	var fence byte
	fenceLen := 0
	lineStart := 0
	inline := make([]bool, len(b)) // bytes outside fenced blocks
	for lineStart < len(b) {
		end := strings.IndexByte(s[lineStart:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += lineStart
		}
		line := s[lineStart:end]
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		run := 0
		if indent <= 3 && trimmed != "" && (trimmed[0] == '`' || trimmed[0] == '~') {
			for run < len(trimmed) && trimmed[run] == trimmed[0] {
				run++
			}
		}
		switch {
		case fence != 0:
			blank(lineStart, end)
			if run >= fenceLen && trimmed[0] == fence && strings.TrimSpace(trimmed[run:]) == "" {
				fence = 0
			}
		case run >= 3 && !(trimmed[0] == '`' && strings.Contains(trimmed[run:], "`")):
			fence, fenceLen = trimmed[0], run
			blank(lineStart, end)
		default:
			for i := lineStart; i < end; i++ {
				inline[i] = true
			}
		}
		lineStart = end + 1
	}
	// Code spans, outside fenced blocks (a span may cross a line end).
	for i := 0; i < len(b); {
		if b[i] != '`' || !inline[i] {
			i++
			continue
		}
		n := 0
		for i+n < len(b) && b[i+n] == '`' {
			n++
		}
		closed := -1
		for j := i + n; j < len(b); {
			if b[j] != '`' || !inline[j] {
				j++
				continue
			}
			m := 0
			for j+m < len(b) && b[j+m] == '`' {
				m++
			}
			if m == n {
				closed = j + m
				break
			}
			j += m
		}
		if closed < 0 {
			i += n
			continue
		}
		blank(i, closed)
		i = closed
	}
	return string(b)
}

// issueComment turns a comment that mentions the App into a run: on a pull request a
// follow-up (or, `@APP stop`, a stop request), on an issue a run of the issue as the label
// starts (askIssue). Whether the author may write (and, on a pull request, whether frognano may
// work on it) is checked by the worker, before any text reaches the model; comments by bots
// (frognano's own included) and edits are dropped here, so nothing loops.
func (s *Server) issueComment(ctx context.Context, d queue.Delivery, body []byte) (response, error) {
	var p commentPayload
	if err := decodeAction(body, &p, &d); err != nil {
		return response{}, err
	}
	c := p.Comment
	if p.Action != "created" || p.Issue == nil || c == nil || c.User.bot() || !s.mention.Visible(c.Body) {
		return ignored(), nil
	}
	t, err := p.targetPR(p.Issue.Number)
	if err != nil {
		return response{}, err
	}
	if p.Issue.PullRequest == nil {
		return s.askIssue(ctx, d, t, c.User.Login, c.Body, c.HTMLURL)
	}
	return s.ask(ctx, d, t, c.User.Login, c.Body, c.HTMLURL, 0)
}

// askIssue queues the run a mention of the App on an issue asks for: a run of the issue, as the
// label starts, with run.TriggerMention. Only a mention a human can see counts (one in hidden
// text is no request); the text after it is the request: its leading options (run.ParseOptions)
// and the requester's instructions. Options that do not parse are not guessed at: the run is
// queued without them and its worker, once it has found that the author may write, answers
// with the option's error and starts nothing. `@APP stop` stops the issue's run as on a pull
// request.
func (s *Server) askIssue(ctx context.Context, d queue.Delivery, t target, author, text, url string) (response, error) {
	visible := run.SanitizeIssueText(text)
	loc := s.mention.FindStringIndex(visible)
	if loc == nil {
		return ignored(), nil
	}
	if !loginPattern.MatchString(author) {
		return response{}, fmt.Errorf("%w: the comment's user.login is not a valid GitHub login", ErrBadRequest)
	}
	// The match may start one character before the `@` and end one after the slug.
	at := loc[0] + strings.IndexByte(visible[loc[0]:loc[1]], '@')
	rest := strings.TrimSpace(visible[at+1+len(s.cfg.AppSlug):])
	d.InstallationID = t.installationID
	if strings.EqualFold(strings.TrimRight(rest, ".!"), "stop") {
		dup, err := s.cfg.Intake.RequestStop(ctx, d, queue.StopArgs{InstallationID: t.installationID, RepoID: t.repoID,
			Owner: t.owner, Repo: t.repo, PR: t.issue, Requester: author, OnIssue: true})
		if err != nil {
			return response{}, err
		}
		logWith(ctx, t).InfoContext(ctx, "stop requested", "requester", author)
		return response{Status: pick(dup, "duplicate", "stop_requested"), code: http.StatusOK}, nil
	}
	opts, _, err := run.ParseOptions(rest)
	if err != nil {
		opts = run.Options{} // the worker says what is wrong (run.ParseOptions again)
	}
	res, err := s.cfg.Intake.Accept(ctx, d, queue.RunRequest{
		InstallationID: t.installationID, RepoID: t.repoID, Owner: t.owner, Repo: t.repo, Issue: t.issue, Labeler: author,
		Kind: run.KindIssue, Trigger: run.TriggerMention, Options: opts,
		Request: clip.Bytes(rest, maxRequestBytes), RequestURL: clip.Prefix(url, 500),
	})
	if err != nil {
		return response{}, err
	}
	return accepted(ctx, logWith(ctx, t), res, "issue already has an active run", "run queued", logging.JobID(res.JobID)), nil
}

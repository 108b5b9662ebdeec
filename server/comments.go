package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

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
// regular expression's, on the text with what GitHub notifies nobody of blanked out
// (unnotified: same length, so the indexes they return are the text's own).
type mentions struct{ re *regexp.Regexp }

func mention(slug string) *mentions {
	return &mentions{regexp.MustCompile(`(?:^|[^A-Za-z0-9_.@/-])@` + asciiFold(slug) + `(?:$|[^A-Za-z0-9_-])`)}
}

// asciiFold is a pattern that matches slug without regard to ASCII case, and only so: (?i)
// would fold Unicode too, and take the Kelvin sign for k and the long s for s (`@taſk-bot`), a
// name GitHub neither links nor notifies.
func asciiFold(slug string) string {
	var b strings.Builder
	for _, r := range slug {
		if lo, up := unicode.ToLower(r), unicode.ToUpper(r); r < utf8.RuneSelf && lo != up {
			b.WriteString("[" + string(lo) + string(up) + "]")
		} else {
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

func (m *mentions) MatchString(s string) bool { return m.re.MatchString(unnotified(s)) }

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

func (m *mentions) FindStringIndex(s string) []int { return m.re.FindStringIndex(unnotified(s)) }

func (m *mentions) ReplaceAllString(s, repl string) string {
	return m.re.ReplaceAllString(unnotified(s), repl)
}

// unnotified is s with what GitHub shows but notifies nobody of, or does not show as text,
// replaced with spaces byte for byte (line ends kept): code (blankCode) and markup
// (blankMarkup). GitHub links a mention only in text that is not in code, a link, a
// preformatted or a script's element, nor in a tag's attributes (an image's alt, a title).
func unnotified(s string) string { return blankMarkup(blankCode(s)) }

// blankCode replaces the code of a markdown text with spaces, byte for byte (line ends kept):
// fenced code blocks (a line of three or more ` or ~, indented at most three spaces, to the
// closing fence of the same character and at least that length, or the end), indented code
// blocks (lines indented four spaces or a tab, from a line that no paragraph goes on to: the
// first, one after a blank line or a fence; inside a list such a line may be a paragraph, which
// is blanked too: a mention missed, never one made up) and code spans (a run of backticks to
// the next run of the same length; an unclosed run is text).
func blankCode(s string) string {
	if !strings.ContainsAny(s, "`~") && !indented(s) {
		return s
	}
	b := []byte(s)
	blank := func(from, to int) { blankBytes(b, from, to) }
	var fence byte
	fenceLen := 0
	lineStart := 0
	// codeMayStart: no paragraph goes on at this line (the first, after a blank line, a
	// fence or indented code); inIndented: within an indented code block (blank lines too).
	codeMayStart, inIndented := true, false
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
		blankLine := strings.TrimSpace(line) == ""
		switch {
		case fence != 0:
			blank(lineStart, end)
			if run >= fenceLen && trimmed[0] == fence && strings.TrimSpace(trimmed[run:]) == "" {
				fence = 0
			}
			codeMayStart, inIndented = true, false
		case !blankLine && indented(line) && (codeMayStart || inIndented):
			blank(lineStart, end)
			codeMayStart, inIndented = true, true
		case run >= 3 && !(trimmed[0] == '`' && strings.Contains(trimmed[run:], "`")):
			fence, fenceLen = trimmed[0], run
			blank(lineStart, end)
			codeMayStart, inIndented = true, false
		default:
			for i := lineStart; i < end; i++ {
				inline[i] = true
			}
			codeMayStart = blankLine
			inIndented = inIndented && blankLine
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

// indented reports whether s has a line that begins with four spaces or a tab (after at most
// three spaces): a line an indented code block may hold.
func indented(s string) bool {
	for line := range strings.SplitSeq(s, "\n") {
		if t := strings.TrimLeft(line, " "); len(line)-len(t) >= 4 || (len(line)-len(t) < 4 && strings.HasPrefix(t, "\t")) {
			if strings.TrimSpace(line) != "" {
				return true
			}
		}
	}
	return false
}

// notText are the HTML elements whose content GitHub does not link mentions in (code,
// preformatted text, links, scripts and styles, which it drops): blankMarkup blanks each from
// its opening tag to its closing one, or to the end.
var notText = []string{"a", "code", "pre", "script", "style", "textarea", "kbd", "samp", "tt"}

// blankMarkup replaces with spaces, byte for byte (line ends kept), what of a markdown text (its
// code already blanked) is not text GitHub links a mention in: a link's or an image's text
// ([text](...), [text][ref], ![alt](...)), the elements of notText, and every HTML tag
// (`<...>`: its attributes, an image's alt or a title, are not text).
func blankMarkup(s string) string {
	if !strings.ContainsAny(s, "<[") {
		return s
	}
	b := []byte(s)
	blank := func(from, to int) { blankBytes(b, from, to) }
	lower := asciiLower(s)
	// The next ] and > from a position (-1: not looked for yet; len(s): none), so that a text
	// of many [ or < is read once, not once for each.
	nextClose, nextGT := -1, -1
	next := func(cached *int, from int, c byte) int {
		if *cached < from {
			if k := strings.IndexByte(s[from:], c); k >= 0 {
				*cached = from + k
			} else {
				*cached = len(s)
			}
		}
		return *cached
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			// A link's text: [ to its ], followed at once by ( or [.
			close := next(&nextClose, i+1, ']')
			if close+1 < len(s) && (s[close+1] == '(' || s[close+1] == '[') {
				blank(i, close+1)
			}
		case '<':
			if i+1 >= len(s) || !(isLetter(s[i+1]) || s[i+1] == '/' || s[i+1] == '!' || s[i+1] == '?') {
				continue
			}
			gt := next(&nextGT, i+1, '>')
			if gt >= len(s) {
				continue
			}
			tagEnd := gt + 1
			end := tagEnd
			rest := lower[i+1:]
			for _, name := range notText {
				if len(rest) > len(name) && strings.HasPrefix(rest, name) && strings.IndexByte(" \t\r\n/>", rest[len(name)]) >= 0 {
					k := strings.Index(lower[tagEnd:], "</"+name)
					if k < 0 {
						blank(i, len(s)) // unclosed: to the end
						return string(b)
					}
					end = tagEnd + k
					break
				}
			}
			blank(i, end)
			i = end - 1
		}
	}
	return string(b)
}

// blankBytes replaces b[from:to] (cut at b's end) with spaces, keeping line ends.
func blankBytes(b []byte, from, to int) {
	for i := from; i < to && i < len(b); i++ {
		if b[i] != '\n' {
			b[i] = ' '
		}
	}
}

// asciiLower is s with its ASCII letters in lower case, byte for byte.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

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

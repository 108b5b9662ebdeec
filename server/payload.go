package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/queue"
)

// issuesPayload is the part of an `issues` event we use. GitHub signs the
// body, but we still validate every field we act on.
type issuesPayload struct {
	Action string `json:"action"`
	Issue  *struct {
		Number int `json:"number"`
	} `json:"issue"`
	Label *struct {
		Name string `json:"name"`
	} `json:"label"`
	Repository *struct {
		ID    int64  `json:"id"`
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
	Sender *struct {
		Login string `json:"login"`
	} `json:"sender"`
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
}

// user is the author of a comment or review as an event names it.
type user struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

// bot reports whether GitHub marks the author as a bot (frognano's own comments included):
// what bots write never starts a run, so nothing loops.
func (u user) bot() bool {
	return u.Type == "Bot" || strings.HasSuffix(u.Login, "[bot]")
}

// pullRequestRef is the pull request a review event is about.
type pullRequestRef struct {
	Number int `json:"number"`
	Head   struct {
		Ref string `json:"ref"`
	} `json:"head"`
}

// frognanos reports whether the event names a pull request and its branch is one frognano
// opens.
func (pr *pullRequestRef) frognanos() bool {
	return pr != nil && frognanoBranch(pr.Head.Ref)
}

// installationPayload is the part of installation events we record.
type installationPayload struct {
	Action       string `json:"action"`
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
}

var (
	namePattern  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	loginPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$`)
)

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: decoding JSON: %v", ErrBadRequest, err)
	}
	return nil
}

// actioner is a payload that names its action.
type actioner interface{ action() string }

func (p *issuesPayload) action() string       { return p.Action }
func (p *installationPayload) action() string { return p.Action }

// decodeAction decodes an event's body into p and records its action on the delivery.
func decodeAction(body []byte, p actioner, d *queue.Delivery) error {
	if err := decode(body, p); err != nil {
		return err
	}
	d.Action = clip.Prefix(p.action(), 100)
	return nil
}

// target is the validated issue an event is about.
type target struct {
	installationID int64
	repoID         int64
	owner, repo    string
	issue          int
	sender         string
}

func (p *issuesPayload) target(needInstallation bool) (target, error) {
	bad := func(what string) (target, error) {
		return target{}, fmt.Errorf("%w: %s", ErrBadRequest, what)
	}
	if p.Issue == nil || p.Issue.Number <= 0 {
		return bad("issue.number missing")
	}
	if p.Repository == nil || p.Repository.ID <= 0 {
		return bad("repository.id missing")
	}
	if !namePattern.MatchString(p.Repository.Name) || !namePattern.MatchString(p.Repository.Owner.Login) {
		return bad("repository name or owner is not a valid GitHub name")
	}
	t := target{repoID: p.Repository.ID, owner: p.Repository.Owner.Login, repo: p.Repository.Name, issue: p.Issue.Number}
	if p.Installation != nil {
		t.installationID = p.Installation.ID
	}
	if needInstallation && t.installationID <= 0 {
		return bad("installation.id missing (is this a GitHub App delivery?)")
	}
	if p.Sender != nil {
		t.sender = p.Sender.Login
	}
	if needInstallation && !loginPattern.MatchString(t.sender) {
		return bad("sender.login is not a valid GitHub login")
	}
	return t, nil
}

// targetPR is the target of a follow-up event, whose pull request the payload names elsewhere
// than in issue.number.
func (p *issuesPayload) targetPR(number int) (target, error) {
	p.Issue = &struct {
		Number int `json:"number"`
	}{number}
	return p.target(true)
}

// hookTarget names who sent a delivery, from the headers GitHub sends, so
// deliveries from two Apps or hooks sharing a GUID space never collide.
func hookTarget(h http.Header) string {
	typ, id := h.Get("X-GitHub-Hook-Installation-Target-Type"), h.Get("X-GitHub-Hook-Installation-Target-ID")
	if typ != "" && id != "" {
		return clip.Prefix(typ, 64) + ":" + clip.Prefix(id, 64)
	}
	if id := h.Get("X-GitHub-Hook-ID"); id != "" {
		return "hook:" + clip.Prefix(id, 64)
	}
	return "unknown"
}

package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/run"
)

// MaxBodyBytes caps a request's body: enough for MaxInstructionsBytes of instructions, however
// JSON escapes them, and the rest.
const MaxBodyBytes = 6*MaxInstructionsBytes + 4<<10

// MaxInstructionsBytes caps the instructions, as a follow-up's request is capped (64 KiB).
const MaxInstructionsBytes = 64 << 10

// StartRequest is the body of POST /api/v1/runs: the issue to work on, the options (run.Options:
// the names a mention writes) and the requester's instructions, added to the task as a
// mention's text is.
type StartRequest struct {
	Repository string `json:"repository"` // OWNER/REPO
	Issue      int    `json:"issue"`
	run.Options
	Instructions string `json:"instructions,omitempty"`
}

// Owner and Repo split Repository (valid once DecodeStart accepted it).
func (s StartRequest) Owner() string { o, _, _ := strings.Cut(s.Repository, "/"); return o }

// Repo is the repository's name, without its owner.
func (s StartRequest) Repo() string { _, r, _ := strings.Cut(s.Repository, "/"); return r }

// RequestError is a request the API refuses with 400: its message names what is wrong.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return e.Msg }

func badRequest(format string, args ...any) error {
	return &RequestError{Msg: fmt.Sprintf(format, args...)}
}

// DecodeStart reads one StartRequest from body and checks it: one JSON object, no unknown
// field, OWNER/REPO, an issue number, options as run.Options.Check takes them (the error names
// the option), instructions of valid UTF-8 within MaxInstructionsBytes. Every refusal is a
// *RequestError. It does not bound body: the caller does (http.MaxBytesReader).
func DecodeStart(body io.Reader) (StartRequest, error) {
	var req StartRequest
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return StartRequest{}, err
		}
		return StartRequest{}, badRequest("the body is not a run request (JSON): %s", jsonReason(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return StartRequest{}, badRequest("the body holds more than one JSON value")
	}
	if !repoName.MatchString(req.Repository) {
		return StartRequest{}, badRequest(`"repository" must be OWNER/REPO`)
	}
	if req.Issue <= 0 || req.Issue > 1<<31-1 {
		return StartRequest{}, badRequest(`"issue" must be an issue number`)
	}
	if err := req.Options.Check(); err != nil {
		return StartRequest{}, &RequestError{Msg: err.Error()}
	}
	switch {
	case len(req.Instructions) > MaxInstructionsBytes:
		return StartRequest{}, badRequest(`"instructions" is longer than %d bytes`, MaxInstructionsBytes)
	case !utf8.ValidString(req.Instructions):
		return StartRequest{}, badRequest(`"instructions" is not valid UTF-8`)
	}
	req.Instructions = strings.TrimSpace(req.Instructions)
	return req, nil
}

// jsonReason is a decoding error's message without what would echo the body at length.
func jsonReason(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return fmt.Sprintf("%q has the wrong type (want %s)", ute.Field, ute.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("a syntax error at byte %d", se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "it ends too early"
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "json: unknown field ") {
		return "unknown field " + clip.Prefix(strings.TrimPrefix(msg, "json: unknown field "), 80)
	}
	return "it cannot be read"
}

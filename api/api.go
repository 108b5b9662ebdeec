// Package api owns frognano's API for automation (issue 30): POST /api/v1/runs asks for a run on
// an issue, GET /api/v1/runs/{id} reads one, both with an operator-made token (`frognano
// tokens`), and the api_tokens table those tokens live in (tokens.go, its one writer).
//
// A token is an operator's credential, not a person's: the run it asks for is worked as a
// labelled issue's, without GitHub's permission check of a person (the worker checks instead
// that the token is still live: run.issuePlan's admit), and the run records which token asked
// (runs.token_id, the run's "started by"). A token reaches only the installations and
// repositories of its scope; every refusal of a token itself (none, unknown, revoked) is the
// same 401, so that the answer tells nothing about which tokens exist.
package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/logging"
	"github.com/frognano/frognano/queue"
	"github.com/frognano/frognano/run"
)

// HookTarget is the deliveries' hook_target of the runs the API asks for: each request is a
// delivery of its own (a random id), so the intake's deduplication never merges two.
const HookTarget = "api"

// Intake is the queue as the API uses it; *queue.Client implements it.
type Intake interface {
	Accept(ctx context.Context, d queue.Delivery, req queue.RunRequest) (queue.Accepted, error)
}

// Repositories finds the installation and id of a repository named in a request;
// *githubapp.App implements it.
type Repositories interface {
	FindRepository(ctx context.Context, owner, repo string) (githubapp.Repository, error)
}

// Runs reads a run; run.Reader (a *run.Store) implements it.
type Runs interface {
	Run(ctx context.Context, id int64) (run.Record, error)
}

// Config holds the API's dependencies, all required but Logger and PublicURL.
type Config struct {
	Tokens *Tokens
	Intake Intake
	Repos  Repositories
	Runs   Runs
	// PublicURL is the run pages' base address (FROGNANO_PUBLIC_URL): an answer's "url" is the
	// run's page under it ("" without it).
	PublicURL string
	Logger    *slog.Logger
}

// API serves /api/v1.
type API struct {
	cfg Config
}

// New checks cfg.
func New(cfg Config) (*API, error) {
	if cfg.Tokens == nil || cfg.Intake == nil || cfg.Repos == nil || cfg.Runs == nil {
		return nil, errors.New("creating the API: Tokens, Intake, Repos and Runs are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &API{cfg: cfg}, nil
}

// Routes mounts the API's routes on r, under /api/v1.
func (a *API) Routes(r chi.Router) {
	r.Route("/api/v1", func(r chi.Router) {
		r.Post("/runs", a.handleStart)
		r.Get("/runs/{id:[0-9]+}", a.handleGet)
	})
}

// RunAnswer is what the API answers about a run: POST's 201 holds ID, URL and State; GET all.
type RunAnswer struct {
	ID             int64      `json:"id"`
	URL            string     `json:"url,omitempty"`
	State          string     `json:"state"`
	Kind           string     `json:"kind,omitempty"`
	Repository     string     `json:"repository,omitempty"`
	Issue          int        `json:"issue,omitempty"`
	ExitReason     string     `json:"exit_reason,omitempty"`
	PullRequestURL string     `json:"pull_request_url,omitempty"`
	CreatedAt      *time.Time `json:"created_at,omitempty"`
	StartedAt      *time.Time `json:"started_at,omitempty"`
	EndedAt        *time.Time `json:"ended_at,omitempty"`
}

// ErrorAnswer is every refusal's body; RunID names the active run of a 409.
type ErrorAnswer struct {
	Error string `json:"error"`
	RunID int64  `json:"run_id,omitempty"`
	URL   string `json:"url,omitempty"`
}

// unauthorized is the one answer to a missing, malformed, unknown or revoked token.
const unauthorized = "a valid API token is required (Authorization: Bearer fna_...)"

// authenticate returns the request's live token, or answers 401 and returns false.
func (a *API) authenticate(w http.ResponseWriter, r *http.Request) (Token, bool) {
	scheme, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		a.refuse(w, http.StatusUnauthorized, unauthorized)
		return Token{}, false
	}
	tok, err := a.cfg.Tokens.Authenticate(r.Context(), strings.TrimSpace(secret))
	if errors.Is(err, ErrNoToken) {
		a.refuse(w, http.StatusUnauthorized, unauthorized)
		return Token{}, false
	}
	if err != nil {
		a.cfg.Logger.ErrorContext(r.Context(), "API: authenticating a token", logging.Err(err))
		a.refuse(w, http.StatusServiceUnavailable, "the token could not be checked; try again")
		return Token{}, false
	}
	return tok, true
}

// handleStart is POST /api/v1/runs.
func (a *API) handleStart(w http.ResponseWriter, r *http.Request) {
	tok, ok := a.authenticate(w, r)
	if !ok {
		return
	}
	ctx, log := r.Context(), a.cfg.Logger.With("token_id", tok.ID, "token", tok.Name)
	req, err := DecodeStart(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var mb *http.MaxBytesError
	var re *RequestError
	switch {
	case errors.As(err, &mb):
		a.refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", MaxBodyBytes))
		return
	case errors.As(err, &re):
		a.refuse(w, http.StatusBadRequest, re.Msg)
		return
	case err != nil:
		a.refuse(w, http.StatusBadRequest, "the body could not be read")
		return
	}
	// A token scoped to repositories only is refused by name before GitHub is asked: a token
	// holder cannot spend the App's rate limit on names it may not use.
	if len(tok.Scope.Installations) == 0 && !tok.Scope.Allows(0, req.Owner(), req.Repo()) {
		log.InfoContext(ctx, "API: a request outside the token's scope", "repository", req.Repository)
		a.refuse(w, http.StatusForbidden, "the token's scope does not include "+req.Repository)
		return
	}
	repo, err := a.cfg.Repos.FindRepository(ctx, req.Owner(), req.Repo())
	if errors.Is(err, githubapp.ErrNoRepository) {
		// Said only of a repository the token names: to a token that reaches it only through
		// an installation, 404 here and 403 below would tell which repositories (private ones
		// too) other installations of the App have.
		if !tok.Scope.Allows(0, req.Owner(), req.Repo()) {
			log.InfoContext(ctx, "API: a request outside the token's scope", "repository", req.Repository)
			a.refuse(w, http.StatusForbidden, "the token's scope does not include "+req.Repository)
			return
		}
		a.refuse(w, http.StatusNotFound, "no installation of the App has the repository "+req.Repository)
		return
	}
	// Past its installation, a failure is said only to a token that reaches that installation
	// or names the repository: to any other, 502 here and 403 for a repository no installation
	// has would tell that another installation has it (a suspended one, say).
	if ie := (*githubapp.InstalledError)(nil); errors.As(err, &ie) && !tok.Scope.Allows(ie.InstallationID, req.Owner(), req.Repo()) {
		log.InfoContext(ctx, "API: a request outside the token's scope", "repository", req.Repository, logging.Err(err))
		a.refuse(w, http.StatusForbidden, "the token's scope does not include "+req.Repository)
		return
	}
	if err != nil {
		log.ErrorContext(ctx, "API: finding a repository", "repository", req.Repository, logging.Err(err))
		a.refuse(w, http.StatusBadGateway, "GitHub did not say which installation has "+req.Repository+"; try again")
		return
	}
	if !tok.Scope.Allows(repo.InstallationID, repo.Owner, repo.Name) {
		log.InfoContext(ctx, "API: a request outside the token's scope", "repository", req.Repository)
		a.refuse(w, http.StatusForbidden, "the token's scope does not include "+req.Repository)
		return
	}
	delivery, err := newDeliveryID()
	if err != nil {
		log.ErrorContext(ctx, "API: making a delivery id", logging.Err(err))
		a.refuse(w, http.StatusInternalServerError, "the run could not be recorded")
		return
	}
	acc, err := a.cfg.Intake.Accept(ctx,
		queue.Delivery{HookTarget: HookTarget, ID: delivery, Event: "api", Action: "start", InstallationID: repo.InstallationID},
		queue.RunRequest{
			InstallationID: repo.InstallationID, RepoID: repo.ID, Owner: repo.Owner, Repo: repo.Name, Issue: req.Issue,
			Labeler: run.TokenRequester(tok.Name), Kind: run.KindIssue, Request: req.Instructions,
			Trigger: run.TriggerAPI, Options: req.Options, TokenID: tok.ID,
		})
	if err != nil {
		log.ErrorContext(ctx, "API: recording a run", logging.Err(err))
		a.refuse(w, http.StatusServiceUnavailable, "the run could not be recorded; try again")
		return
	}
	url := run.RunPageURL(a.cfg.PublicURL, acc.RunID)
	if acc.AlreadyActive || acc.Waiting {
		writeJSON(w, http.StatusConflict, ErrorAnswer{
			Error: fmt.Sprintf("%s#%d already has an active run, %d; no second run was started", req.Repository, req.Issue, acc.RunID),
			RunID: acc.RunID, URL: url,
		})
		return
	}
	log.InfoContext(ctx, "API: run queued", "run_id", acc.RunID, "repository", repo.Owner+"/"+repo.Name, "issue", req.Issue)
	writeJSON(w, http.StatusCreated, RunAnswer{ID: acc.RunID, URL: url, State: run.StateQueued})
}

// handleGet is GET /api/v1/runs/{id}: a run in the token's scope, 404 for any other.
func (a *API) handleGet(w http.ResponseWriter, r *http.Request) {
	tok, ok := a.authenticate(w, r)
	if !ok {
		return
	}
	const missing = "no run with this id in the token's scope"
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		a.refuse(w, http.StatusNotFound, missing)
		return
	}
	rec, err := a.cfg.Runs.Run(r.Context(), id)
	if errors.Is(err, run.ErrNoRun) {
		a.refuse(w, http.StatusNotFound, missing)
		return
	}
	if err != nil {
		a.cfg.Logger.ErrorContext(r.Context(), "API: reading a run", "run_id", id, logging.Err(err))
		a.refuse(w, http.StatusServiceUnavailable, "the run could not be read; try again")
		return
	}
	in, err := a.reaches(r.Context(), tok, rec)
	if err != nil {
		a.cfg.Logger.ErrorContext(r.Context(), "API: finding a run's repository", "run_id", id, logging.Err(err))
		a.refuse(w, http.StatusBadGateway, "GitHub did not say which repository the run's is; try again")
		return
	}
	if !in {
		a.refuse(w, http.StatusNotFound, missing)
		return
	}
	writeJSON(w, http.StatusOK, answerOf(rec, a.cfg.PublicURL))
}

// reaches reports whether rec is a run of tok's scope: of one of its installations (by id), or
// of a repository it names, which is the repository that name is now, by id. The name a run
// was recorded under is not enough: a name is freed when a repository or its owner is renamed,
// or the repository deleted, and the one that takes it is another repository (with another id,
// and the old one's runs may be private); a token for the new one reads its runs only. GitHub
// is asked only for a run whose recorded name the token names.
func (a *API) reaches(ctx context.Context, tok Token, rec run.Record) (bool, error) {
	if slices.Contains(tok.Scope.Installations, rec.InstallationID) {
		return true, nil
	}
	if !tok.Scope.Allows(0, rec.Owner, rec.Repo) {
		return false, nil
	}
	repo, err := a.cfg.Repos.FindRepository(ctx, rec.Owner, rec.Repo)
	if errors.Is(err, githubapp.ErrNoRepository) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return repo.ID == rec.RepoID && tok.Scope.Allows(0, repo.Owner, repo.Name), nil
}

// answerOf is rec as GET answers it.
func answerOf(rec run.Record, publicURL string) RunAnswer {
	created := rec.CreatedAt
	return RunAnswer{
		ID: rec.ID, URL: run.RunPageURL(publicURL, rec.ID), State: rec.State, Kind: rec.Kind,
		Repository: rec.Owner + "/" + rec.Repo, Issue: rec.Issue, ExitReason: rec.ExitReason, PullRequestURL: rec.PRURL,
		CreatedAt: &created, StartedAt: rec.StartedAt, EndedAt: rec.FinishedAt,
	}
}

// newDeliveryID is a random id for one request's delivery.
func newDeliveryID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func (a *API) refuse(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, ErrorAnswer{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // an encoding error means the client went away
}

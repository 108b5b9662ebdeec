package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TokenPrefix begins every API token, so that a token pasted where it should not be (a log, a
// commit, a chat) is recognisable as frognano's, by people and by secret scanners.
const TokenPrefix = "fna_"

// secretBytes is the randomness of a token: 256 bits.
const secretBytes = 32

var (
	// tokenForm is the only form a token has: the prefix and 64 lower-case hex digits.
	tokenForm = regexp.MustCompile(`^` + TokenPrefix + `[0-9a-f]{64}$`)
	// tokenName is a token's name: what `frognano tokens list`, the run's record and the audit
	// trail call it.
	tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// repoName is OWNER/REPO as GitHub allows them.
	repoName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
)

// Scope is what a token may ask runs of: any repository of the installations, and the
// repositories named (OWNER/REPO, compared without case, as GitHub compares them).
type Scope struct {
	Installations []int64
	Repos         []string
}

// Allows reports whether a run on repository owner/repo of installation installationID is in s.
func (s Scope) Allows(installationID int64, owner, repo string) bool {
	if slices.Contains(s.Installations, installationID) {
		return true
	}
	return slices.Contains(s.Repos, strings.ToLower(owner+"/"+repo))
}

// String is the scope as `frognano tokens list` shows it.
func (s Scope) String() string {
	var parts []string
	for _, id := range s.Installations {
		parts = append(parts, "installation "+strconv.FormatInt(id, 10))
	}
	parts = append(parts, s.Repos...)
	return strings.Join(parts, ", ")
}

// Check refuses an empty scope, an installation id that is not one and a repository that is
// not OWNER/REPO; it returns the scope with repositories in lower case, sorted and without
// repeats.
func (s Scope) Check() (Scope, error) {
	if len(s.Installations) == 0 && len(s.Repos) == 0 {
		return Scope{}, errors.New("a token needs a scope: at least one --installation ID or --repo OWNER/REPO")
	}
	out := Scope{}
	for _, id := range s.Installations {
		if id <= 0 {
			return Scope{}, fmt.Errorf("installation %d is not an installation id", id)
		}
		out.Installations = append(out.Installations, id)
	}
	for _, r := range s.Repos {
		if !repoName.MatchString(r) {
			return Scope{}, fmt.Errorf("repository %q is not OWNER/REPO", r)
		}
		out.Repos = append(out.Repos, strings.ToLower(r))
	}
	slices.Sort(out.Installations)
	slices.Sort(out.Repos)
	out.Installations, out.Repos = slices.Compact(out.Installations), slices.Compact(out.Repos)
	return out, nil
}

// Token is an API token as stored: never its secret.
type Token struct {
	ID         int64
	Name       string
	Scope      Scope
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// Tokens is the api_tokens table's one writer (internal/layout checks it): tokens are made,
// listed, revoked and authenticated here only.
type Tokens struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

// NewTokens returns the token store on pool.
func NewTokens(pool *pgxpool.Pool) *Tokens { return &Tokens{pool: pool, now: time.Now} }

// ErrNoToken: no token has this id (Revoke), or the secret is no live token's (Authenticate).
var ErrNoToken = errors.New("no such API token")

// hashOf is what is stored of a secret. A plain SHA-256 is enough here, unlike for passwords:
// the secret is 256 random bits, so there is nothing to guess and no dictionary to slow down,
// and a fast hash lets every request be checked by an indexed lookup.
func hashOf(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Create makes a token called name with scope and returns it with its secret, which is shown
// once and never stored. A live token of the same name is an error: names identify tokens in
// the audit trail.
func (t *Tokens) Create(ctx context.Context, name string, scope Scope) (Token, string, error) {
	if !tokenName.MatchString(name) {
		return Token{}, "", fmt.Errorf("token name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	scope, err := scope.Check()
	if err != nil {
		return Token{}, "", err
	}
	raw := make([]byte, secretBytes)
	if _, err := rand.Read(raw); err != nil {
		return Token{}, "", fmt.Errorf("making a token: %w", err)
	}
	secret := TokenPrefix + hex.EncodeToString(raw)
	tok := Token{Name: name, Scope: scope}
	err = t.pool.QueryRow(ctx, `INSERT INTO api_tokens (name, hash, installation_ids, repos)
		VALUES ($1, $2, $3, $4) RETURNING id, created_at`,
		name, hashOf(secret), nonNil(scope.Installations), nonNil(scope.Repos)).Scan(&tok.ID, &tok.CreatedAt)
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "api_tokens_live_name" {
		return Token{}, "", fmt.Errorf("a token named %q exists: revoke it first, or choose another name", name)
	}
	if err != nil {
		return Token{}, "", fmt.Errorf("storing token %q: %w", name, err)
	}
	return tok, secret, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

const tokenColumns = `id, name, installation_ids, repos, created_at, last_used_at, revoked_at`

func scanToken(row pgx.Row) (Token, error) {
	var tok Token
	err := row.Scan(&tok.ID, &tok.Name, &tok.Scope.Installations, &tok.Scope.Repos, &tok.CreatedAt, &tok.LastUsedAt, &tok.RevokedAt)
	return tok, err
}

// List returns every token, revoked ones too, oldest first.
func (t *Tokens) List(ctx context.Context) ([]Token, error) {
	rows, err := t.pool.Query(ctx, `SELECT `+tokenColumns+` FROM api_tokens ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("listing API tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		tok, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("listing API tokens: %w", err)
		}
		out = append(out, tok)
	}
	return out, rows.Err()
}

// Revoke revokes token id from now on; revoking a revoked token keeps its first revocation.
func (t *Tokens) Revoke(ctx context.Context, id int64) (Token, error) {
	tok, err := scanToken(t.pool.QueryRow(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, $2)
		WHERE id = $1 RETURNING `+tokenColumns, id, t.now()))
	if errors.Is(err, pgx.ErrNoRows) {
		return Token{}, fmt.Errorf("token %d: %w", id, ErrNoToken)
	}
	if err != nil {
		return Token{}, fmt.Errorf("revoking token %d: %w", id, err)
	}
	return tok, nil
}

// Authenticate returns the live token whose secret this is and records its use; ErrNoToken
// for anything else (malformed, unknown or revoked: the caller answers all three alike).
func (t *Tokens) Authenticate(ctx context.Context, secret string) (Token, error) {
	if !tokenForm.MatchString(secret) {
		return Token{}, ErrNoToken
	}
	tok, err := scanToken(t.pool.QueryRow(ctx, `UPDATE api_tokens SET last_used_at = $2
		WHERE hash = $1 AND revoked_at IS NULL RETURNING `+tokenColumns, hashOf(secret), t.now()))
	if errors.Is(err, pgx.ErrNoRows) {
		return Token{}, ErrNoToken
	}
	if err != nil {
		return Token{}, fmt.Errorf("authenticating an API token: %w", err)
	}
	return tok, nil
}

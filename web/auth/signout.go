package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/frognano/frognano/internal/logging"
)

// signOutTimeout bounds one read or write of the record of sign-outs: a request waits no
// longer than that for the database, and is refused (or its sign-out reported failed) after.
const signOutTimeout = 5 * time.Second

// signOutGrace is how long past its session's expiry a sign-out is kept: the clocks of several
// frognano processes may differ by that much without one of them deleting a sign-out that
// another still needs.
const signOutGrace = time.Hour

// signOuts is the record of ended sessions, in PostgreSQL (table ended_sessions, migration
// 0010): every frognano process on the database reads the same record, and it survives
// restarts, so a signed-out session stays refused until it would have expired whatever
// anyone else does (nothing but its expiry takes a sign-out out of the record). It holds the
// SHA-256 of a session's random id: never the cookie, nor the token inside it.
type signOuts struct {
	pool *pgxpool.Pool
}

// idHash is what the record keeps of a session id.
func idHash(id string) []byte {
	sum := sha256.Sum256([]byte(id))
	return sum[:]
}

// end records that session id has ended; exp is when its cookie stops being valid anyway.
// The same statement deletes the sign-outs of sessions past their expiry (and signOutGrace),
// so the table holds only sign-outs whose cookies could still be used.
func (s signOuts) end(ctx context.Context, id string, exp, now time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, signOutTimeout)
	defer cancel()
	_, err := s.pool.Exec(ctx, `WITH expired AS (DELETE FROM ended_sessions WHERE expires_at < $3)
		INSERT INTO ended_sessions (id_hash, expires_at) VALUES ($1, $2)
		ON CONFLICT (id_hash) DO UPDATE SET expires_at = greatest(ended_sessions.expires_at, excluded.expires_at)`,
		idHash(id), exp, now.Add(-signOutGrace))
	if err != nil {
		return fmt.Errorf("recording a sign-out in ended_sessions: %w", err)
	}
	return nil
}

// ended reports whether session id was signed out.
func (s signOuts) ended(ctx context.Context, id string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, signOutTimeout)
	defer cancel()
	var gone bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM ended_sessions WHERE id_hash = $1)`, idHash(id)).Scan(&gone); err != nil {
		return false, fmt.Errorf("reading ended_sessions: %w", err)
	}
	return gone, nil
}

// revokeToken asks GitHub to revoke the GitHub token of a session that was just signed out
// (DELETE /applications/{client_id}/token, as the App), so that the token inside every copy of
// the cookie is dead at GitHub too, not only refused here. The recorded sign-out is what ends
// the session; a revocation that fails is logged, and the token then lasts until its own
// expiry, inside cookies that frognano refuses.
func (o *OAuth) revokeToken(ctx context.Context, s session) {
	if s.Mode != "oauth" || s.Token == "" {
		return
	}
	// The person may close the page at once: the request still goes.
	ctx = context.WithoutCancel(ctx)
	body, err := json.Marshal(map[string]string{"access_token": s.Token})
	if err != nil {
		o.log.WarnContext(ctx, "signed out; the GitHub token could not be revoked", "login", s.Login, logging.Err(err))
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, o.api+"applications/"+url.PathEscape(o.cfg.ClientID)+"/token", bytes.NewReader(body))
	if err != nil {
		o.log.WarnContext(ctx, "signed out; the GitHub token could not be revoked", "login", s.Login, logging.Err(err))
		return
	}
	req.SetBasicAuth(o.cfg.ClientID, o.cfg.ClientSecret)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		o.log.WarnContext(ctx, "signed out; asking GitHub to revoke the GitHub token", "login", s.Login, logging.Err(err))
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		o.log.WarnContext(ctx, "signed out; GitHub did not revoke the GitHub token", "login", s.Login, "status", resp.StatusCode)
		return
	}
	o.log.InfoContext(ctx, "signed out of the run pages; GitHub revoked the session's token", "login", s.Login)
}

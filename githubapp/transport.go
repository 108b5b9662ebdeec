package githubapp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/frognano/frognano/internal/fault"
)

// retryTransport sits between go-github and ghinstallation. It gives every attempt its own
// timeout, spaces writes per installation, waits out rate limits, and retries 5xx and network
// errors for requests that are safe to repeat. It sits outside ghinstallation so that a retry
// after a long wait picks up a refreshed token.
type retryTransport struct {
	next   http.RoundTripper
	cfg    Config
	writes *writeBucket
}

// maxErrorBody bounds how much of an error answer is read to recognise a secondary rate limit.
const maxErrorBody = 64 << 10

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	write := isWrite(req.Method)
	for attempt := 0; ; attempt++ {
		if write {
			if err := t.writes.wait(ctx, t.cfg.Now, t.cfg.Sleep); err != nil {
				return nil, fmt.Errorf("waiting for the write rate limit: %w", err)
			}
		}
		try, err := rewind(req, attempt)
		if err != nil {
			return nil, err
		}
		resp, err := t.once(try)
		last := attempt >= t.cfg.MaxRetries
		if err != nil {
			// A write that failed in transit may have been applied; only the caller can tell
			// (Publish looks for the PR before creating it again).
			if last || !idempotent(req.Method) || !fault.IsTransient(mark(err)) || ctx.Err() != nil {
				return nil, err
			}
			if err := t.pause(ctx, req, backoff(attempt), "network error", err.Error()); err != nil {
				return nil, err
			}
			continue
		}
		if wait, limited := rateLimitWait(resp, t.cfg.Now(), attempt); limited {
			// A rate-limited request was not executed, so any method may be repeated.
			if last || wait > t.cfg.MaxRateLimitWait {
				return resp, nil // go-github turns it into a RateLimitError / AbuseRateLimitError
			}
			drain(resp)
			if err := t.pause(ctx, req, wait, "rate limited", resp.Status); err != nil {
				return nil, err
			}
			continue
		}
		if resp.StatusCode >= 500 && idempotent(req.Method) && !last {
			drain(resp)
			if err := t.pause(ctx, req, backoff(attempt), "server error", resp.Status); err != nil {
				return nil, err
			}
			continue
		}
		return resp, nil
	}
}

// once sends one attempt with its own timeout, which ends when the body is closed.
func (t *retryTransport) once(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.cfg.HTTPTimeout)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

func (t *retryTransport) pause(ctx context.Context, req *http.Request, d time.Duration, why, detail string) error {
	t.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "github request will be retried",
		slog.String("method", req.Method), slog.String("path", req.URL.Path),
		slog.String("reason", why), slog.String("detail", detail), slog.Duration("wait", d))
	if err := t.cfg.Sleep(ctx, d); err != nil {
		return fmt.Errorf("waiting to retry %s %s: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// rewind returns the request to send for this attempt, with a fresh body after the first.
func rewind(req *http.Request, attempt int) (*http.Request, error) {
	if attempt == 0 || req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, fmt.Errorf("retrying %s %s: request body cannot be replayed", req.Method, req.URL.Path)
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, fmt.Errorf("retrying %s %s: replaying body: %w", req.Method, req.URL.Path, err)
	}
	clone := req.Clone(req.Context())
	clone.Body = body
	return clone, nil
}

// rateLimitWait recognises GitHub's primary and secondary rate-limit answers and says how long
// to wait: Retry-After, else until x-ratelimit-reset, else an exponential back-off from 60 s
// (what GitHub's documentation asks for when it gives no hint).
func rateLimitWait(resp *http.Response, now time.Time, attempt int) (time.Duration, bool) {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	h := resp.Header
	limited := resp.StatusCode == http.StatusTooManyRequests ||
		h.Get("X-Ratelimit-Remaining") == "0" || h.Get("Retry-After") != ""
	if !limited {
		// A plain 403 ("Resource not accessible by integration") must not be retried; only the
		// message tells it apart from a secondary rate limit without headers.
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return 0, false
		}
		text := strings.ToLower(string(body))
		limited = strings.Contains(text, "secondary rate limit") || strings.Contains(text, "abuse")
	}
	if !limited {
		return 0, false
	}
	// Header values are clamped to a day so absurd ones cannot overflow; anything over
	// MaxRateLimitWait is refused by the caller anyway.
	const ceiling = 24 * time.Hour
	if s := h.Get("Retry-After"); s != "" {
		if secs, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && secs >= 0 {
			return time.Duration(min(secs, int64(ceiling/time.Second))) * time.Second, true
		}
		if at, err := http.ParseTime(s); err == nil {
			return min(max(at.Sub(now), 0), ceiling), true
		}
	}
	if h.Get("X-Ratelimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			// One extra second: the reset instant is rounded down to whole seconds.
			return min(max(time.Unix(reset, 0).Sub(now), 0), ceiling-time.Second) + time.Second, true
		}
	}
	return time.Minute << min(attempt, 6), true
}

// backoff is the wait before retrying a 5xx or network error: 1 s, 2 s, 4 s, ...
func backoff(attempt int) time.Duration {
	return time.Second << min(attempt, 6)
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// idempotent reports whether repeating the request after an unknown outcome is harmless. PATCH is
// included because every PATCH this package sends sets fields to absolute values.
func idempotent(method string) bool {
	return method != http.MethodPost
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// writeBucket lets one write through per interval: a token bucket of depth one, which is what
// GitHub's guidance ("at least one second between mutative requests") asks for.
type writeBucket struct {
	mu       sync.Mutex
	next     time.Time
	interval time.Duration
}

func newWriteBucket(perSecond float64) *writeBucket {
	return &writeBucket{interval: time.Duration(float64(time.Second) / perSecond)}
}

// wait reserves the next slot and sleeps until it. Reservations are taken in call order, so
// concurrent writers are spaced too.
func (b *writeBucket) wait(ctx context.Context, now func() time.Time, sleep func(context.Context, time.Duration) error) error {
	b.mu.Lock()
	n := now()
	at := b.next
	if at.Before(n) {
		at = n
	}
	b.next = at.Add(b.interval)
	b.mu.Unlock()
	if d := at.Sub(n); d > 0 {
		return sleep(ctx, d)
	}
	return ctx.Err()
}

package githubapp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v66/github"

	"github.com/frognano/frognano/internal/fault"
)

const issuePath = "/repos/" + testOwner + "/" + testRepo + "/issues/12"

func TestRateLimitIsWaitedOut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		inject  func(b *bundle)
		min     time.Duration // the wait observed, within [min, max]
		max     time.Duration
		retried int // requests sent
	}{
		{"RetryAfter", func(b *bundle) {
			b.gh.FailNext("GET", issuePath, http.StatusForbidden, map[string]string{"Retry-After": "7"}, 1)
		}, 7 * time.Second, 7 * time.Second, 2},
		{"PrimaryLimitUntilReset", func(b *bundle) {
			reset := strconv.FormatInt(b.clock.Now().Unix()+30, 10)
			b.gh.FailNext("GET", issuePath, http.StatusForbidden, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": reset}, 1)
		}, 30 * time.Second, 31 * time.Second, 2},
		{"TooManyRequestsWithoutHint", func(b *bundle) {
			b.gh.FailNext("GET", issuePath, http.StatusTooManyRequests, nil, 1)
		}, time.Minute, time.Minute, 2},
		{"SecondaryLimitMessageOnly", func(b *bundle) {
			b.gh.FailNext("GET", issuePath, http.StatusForbidden, nil, 2)
		}, 3 * time.Minute, 3 * time.Minute, 3}, // 60 s, then 120 s
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tt.inject(b)
			if _, _, _, err := b.client.Issue(context.Background(), 12); err != nil {
				t.Fatalf("Issue: %v", err)
			}
			var total time.Duration
			for _, d := range b.clock.Sleeps() {
				total += d
			}
			if total < tt.min || total > tt.max {
				t.Errorf("waited %v (%v), want within [%v, %v]", total, b.clock.Sleeps(), tt.min, tt.max)
			}
			if n := b.gh.CountRequests("GET", issuePath); n != tt.retried {
				t.Errorf("sent %d requests, want %d", n, tt.retried)
			}
		})
	}
}

func TestRateLimitedWriteIsRetriedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.FailNext("POST", issuePath+"/comments", http.StatusForbidden, map[string]string{"Retry-After": "2"}, 1)
	if _, err := b.client.Comment(context.Background(), 12, "hi"); err != nil {
		t.Fatalf("Comment: %v", err)
	}
	if got := b.clock.Sleeps(); !slices.Equal(got, []time.Duration{2 * time.Second}) {
		t.Errorf("sleeps = %v, want [2s]", got)
	}
	if n := len(b.gh.Comments(b.repo, 12)); n != 1 {
		t.Errorf("%d comments, want 1", n)
	}
}

func TestRateLimitBeyondCapFails(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *Config) { c.MaxRateLimitWait = time.Minute })
	b.gh.FailNext("GET", issuePath, http.StatusForbidden, map[string]string{"Retry-After": "3600"}, 1)
	_, _, _, err := b.client.Issue(context.Background(), 12)
	if err == nil || !fault.IsTransient(err) {
		t.Fatalf("Issue error = %v, want a transient rate-limit error", err)
	}
	if s := b.clock.Sleeps(); len(s) != 0 {
		t.Errorf("slept %v; a wait over the cap must not be started", s)
	}
}

func TestForbiddenIsNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.gh.RespondNext("GET", issuePath, http.StatusForbidden, `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest","status":"403"}`, 1)
	_, _, _, err := b.client.Issue(context.Background(), 12)
	if err == nil || fault.IsTransient(err) {
		t.Errorf("error = %v, want permanent", err)
	}
	if n := b.gh.CountRequests("GET", issuePath); n != 1 {
		t.Errorf("sent %d requests, want 1", n)
	}
}

func TestServerErrors(t *testing.T) {
	t.Parallel()
	t.Run("IdempotentRetried", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.gh.FailNext("GET", issuePath, http.StatusBadGateway, nil, 2)
		if _, _, _, err := b.client.Issue(context.Background(), 12); err != nil {
			t.Fatalf("Issue: %v", err)
		}
		if got := b.clock.Sleeps(); !slices.Equal(got, []time.Duration{time.Second, 2 * time.Second}) {
			t.Errorf("sleeps = %v, want [1s 2s]", got)
		}
	})
	t.Run("RetriesAreBounded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.gh.FailNext("GET", issuePath, http.StatusServiceUnavailable, nil, 100)
		_, _, _, err := b.client.Issue(context.Background(), 12)
		if err == nil || !fault.IsTransient(err) {
			t.Errorf("error = %v, want transient", err)
		}
		if n := b.gh.CountRequests("GET", issuePath); n != DefaultMaxRetries+1 {
			t.Errorf("sent %d requests, want %d", n, DefaultMaxRetries+1)
		}
	})
	t.Run("PostNotRepeated", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.gh.LoseNextResponse("POST", issuePath+"/comments", http.StatusBadGateway, 1)
		_, err := b.client.Comment(context.Background(), 12, "once")
		if err == nil || !fault.IsTransient(err) {
			t.Errorf("error = %v, want transient", err)
		}
		if n := len(b.gh.Comments(b.repo, 12)); n != 1 {
			t.Errorf("%d comments, want exactly 1 (a POST with an unknown outcome is not repeated)", n)
		}
	})
}

func TestWriteRateLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		perSecond float64
		want      []time.Duration
	}{
		{"Default", 0, []time.Duration{time.Second, time.Second}},
		{"TwoPerSecond", 2, []time.Duration{500 * time.Millisecond, 500 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(c *Config) { c.WritesPerSecond = tt.perSecond })
			ctx := context.Background()
			// Reads never wait.
			for range 3 {
				if _, _, _, err := b.client.Issue(ctx, 12); err != nil {
					t.Fatal(err)
				}
			}
			// A second Client of the same installation shares the bucket.
			other, err := b.app.ForRepo(ctx, testInstallation, testOwner, testRepo)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []*Client{b.client, other, b.client} {
				if _, err := c.Comment(ctx, 12, "x"); err != nil {
					t.Fatal(err)
				}
			}
			if got := b.clock.Sleeps(); !slices.Equal(got, tt.want) {
				t.Errorf("sleeps = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWriteWaitRespectsContext(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := b.client.Comment(ctx, 12, "first"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := b.client.Comment(ctx, 12, "second"); !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

// TestMark: GitHub's answers get their fault mark; what is not an answer keeps the fault
// package's own rule.
func TestMark(t *testing.T) {
	t.Parallel()
	resp := func(code int) *http.Response { return &http.Response{StatusCode: code, Request: &http.Request{}} }
	errResp := func(code int) error { return &github.ErrorResponse{Response: resp(code)} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"Nil", nil, false},
		{"NotFound", errResp(404), false},
		{"Unprocessable", errResp(422), false},
		{"Unauthorized", errResp(401), false},
		{"BadGateway", errResp(502), true},
		{"WrappedServerError", fmt.Errorf("getting issue: %w", errResp(500)), true},
		{"TooMany", errResp(429), true},
		{"PrimaryRateLimit", &github.RateLimitError{Response: resp(403)}, true},
		{"SecondaryRateLimit", &github.AbuseRateLimitError{Response: resp(403)}, true},
		{"TokenNoAnswer", &ghinstallation.HTTPError{RootCause: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, true},
		{"TokenRequestCancelled", &ghinstallation.HTTPError{RootCause: context.Canceled}, false},
		{"TokenUnauthorized", &ghinstallation.HTTPError{Response: resp(401)}, false},
		{"TokenServerError", fmt.Errorf("refresh: %w", &ghinstallation.HTTPError{Response: resp(503)}), true},
		{"Network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"Deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{"Cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"Git", fault.Transient(errors.New("git push: exit 128")), true},
		{"PatchDoesNotApply", fault.Permanent(errors.New("applying patch")), false},
		{"PermanentWinsOverTransientCause", fault.Permanent(errResp(502)), false},
		{"Unknown", errors.New("something"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := mark(tt.err)
			if got := fault.IsTransient(err); got != tt.want {
				t.Errorf("IsTransient(mark(%v)) = %v, want %v", tt.err, got, tt.want)
			}
			if tt.err != nil && err.Error() != tt.err.Error() {
				t.Errorf("mark changed the message: %q, want %q", err, tt.err)
			}
		})
	}
}

func FuzzRateLimitWait(f *testing.F) {
	f.Add(403, "7", "", "")
	f.Add(429, "", "0", "1700000000")
	f.Add(403, "Wed, 21 Oct 2015 07:28:00 GMT", "", "")
	f.Add(403, "-5", "0", "-1")
	f.Add(200, "1", "0", "1")
	now := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, status int, retryAfter, remaining, reset string) {
		resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: http.NoBody}
		resp.Header.Set("Retry-After", retryAfter)
		resp.Header.Set("X-Ratelimit-Remaining", remaining)
		resp.Header.Set("X-Ratelimit-Reset", reset)
		wait, limited := rateLimitWait(resp, now, 0)
		if wait < 0 {
			t.Errorf("negative wait %v", wait)
		}
		if limited && status != 403 && status != 429 {
			t.Errorf("status %d treated as a rate limit", status)
		}
	})
}

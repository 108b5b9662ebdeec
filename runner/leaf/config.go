package leaf

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/frognano/frognano/internal/fault"
)

// Exit reasons, as the reference harness names them.
const (
	ExitAgent            = "agent"
	ExitMaxTurns         = "max_turns"
	ExitMaxContext       = "max_context_len"
	ExitMaxTokensPerTurn = "max_tokens_per_turn"
	ExitMaxTime          = "max_time"
	ExitCancelled        = "cancelled"
	ExitLLMError         = "llm_query_error"
	ExitToolError        = "tool_error"
)

// Defaults of the reference evaluation.
const (
	DefaultModel               = "microsoft/FrogNano-4B-2609"
	DefaultMaxSteps            = 100
	DefaultMaxContextTokens    = 65536
	DefaultMaxCompletionTokens = 8192
	DefaultMaxTime             = 45 * time.Minute
	DefaultTemperature         = 0.6
	DefaultRequestTimeout      = 7200 * time.Second
	DefaultMaxRetries          = 5
	DefaultRetryBaseDelay      = time.Second

	// maxRetryDelay caps the exponential backoff between retries.
	maxRetryDelay = 30 * time.Second
	// maxRetryAfter caps a server's Retry-After so a hostile or confused server cannot
	// park a run for hours; MaxTime bounds it further.
	maxRetryAfter = 5 * time.Minute
	// maxResponseBytes caps a model response body: model output is untrusted.
	maxResponseBytes = 32 << 20
)

// Config configures one Run. Start from DefaultConfig. Zero values mean:
// Model, MaxSteps, RequestTimeout, RetryBaseDelay: the default; MaxTime: the default
// (negative: no limit); MaxContextTokens: no context limit and MaxCompletionTokens: no
// per-turn cap (both as in the reference); MaxRetries: no retry; Temperature: 0 (greedy);
// Extra nil: DefaultExtra() (a non-nil empty map sends no extra field).
type Config struct {
	// BaseURL is the OpenAI-compatible root, e.g. http://gpu:8000/v1; requests go to
	// BaseURL + "/chat/completions".
	BaseURL string
	Model   string
	// APIKey is sent as a Bearer token when set. It is never logged or stored.
	APIKey string

	Temperature         float64
	MaxCompletionTokens int
	MaxSteps            int
	MaxContextTokens    int
	MaxTime             time.Duration
	RequestTimeout      time.Duration
	MaxRetries          int
	// Extra is merged into the request body at the top level and overrides a known
	// field of the same name, as the OpenAI SDK's extra_body does.
	Extra map[string]any
	// HTTPClient is used for every request; nil means a client with RequestTimeout.
	HTTPClient *http.Client
	// RetryBaseDelay is the first backoff delay; it doubles per attempt up to maxRetryDelay.
	RetryBaseDelay time.Duration
	// Logger receives retry and exit events (never message text); nil: slog.Default(). A
	// logger the context of Run carries (internal/logging) is used instead: the run's own.
	Logger *slog.Logger
	// OnWait, when set, is told when a model request starts waiting on the model server (a
	// 429 or 503 being waited out, a failed connection being retried, no answer for
	// SlowAfter, no free slot in the process's Limiter) and, with a zero ModelWait, when
	// it stops waiting. It may be called from another goroutine than Run's, one call at a
	// time, and must not block.
	OnWait func(ModelWait)
	// SlowAfter is how long a request may go unanswered before OnWait reports it slow;
	// 0: DefaultSlowAfter, negative: never.
	SlowAfter time.Duration

	// Test hooks: waiting and the clock, so retry waits are asserted without sleeping.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

// DefaultExtra returns the extra body of the reference evaluation (a fresh map).
func DefaultExtra() map[string]any {
	return map[string]any{
		"chat_template_kwargs": map[string]any{"enable_thinking": true},
		"top_p":                0.95,
		"top_k":                20,
		"min_p":                0.0,
		"repetition_penalty":   1.0,
	}
}

// DefaultConfig returns the reference evaluation's settings; the caller sets BaseURL.
func DefaultConfig() Config {
	return Config{
		Model:               DefaultModel,
		Temperature:         DefaultTemperature,
		MaxCompletionTokens: DefaultMaxCompletionTokens,
		MaxSteps:            DefaultMaxSteps,
		MaxContextTokens:    DefaultMaxContextTokens,
		MaxTime:             DefaultMaxTime,
		RequestTimeout:      DefaultRequestTimeout,
		MaxRetries:          DefaultMaxRetries,
		Extra:               DefaultExtra(),
		RetryBaseDelay:      DefaultRetryBaseDelay,
	}
}

// withDefaults fills the zero values whose zero has no useful meaning.
func (c Config) withDefaults() Config {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.MaxSteps <= 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.MaxTime == 0 {
		c.MaxTime = DefaultMaxTime
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.RetryBaseDelay <= 0 {
		c.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if c.SlowAfter == 0 {
		c.SlowAfter = DefaultSlowAfter
	}
	if c.Extra == nil {
		c.Extra = DefaultExtra()
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.RequestTimeout}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.sleep == nil {
		c.sleep = fault.Wait
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

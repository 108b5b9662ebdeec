package leaf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/frognano/frognano/internal/clip"
	"github.com/frognano/frognano/internal/logging"
)

// maxErrorBody caps how much of an error reply we read and keep in an error text.
const maxErrorBody = 4 << 10

// toolsJSON is the encoded tool list, built once: it is identical in every request.
var toolsJSON = sync.OnceValue(func() json.RawMessage {
	b, err := json.Marshal(ToolSchemas())
	if err != nil {
		panic(fmt.Sprintf("encoding tool schemas: %v", err)) // static data: cannot happen
	}
	return b
})

// completion is one decoded model turn.
type completion struct {
	// Assistant is the message exactly as the reference appends it.
	Assistant    Message
	FinishReason string
	Usage        usage
}

type usage struct {
	Prompt, Completion, Total optInt
	// Cached is the part of Prompt the server took from its prompt cache
	// (prompt_tokens_details.cached_tokens), when it says; it is only counted, never sent.
	Cached optInt
}

// total is the reference's _usage_total: total_tokens, else prompt+completion, else 0.
func (u usage) total() int {
	if u.Total.OK {
		return u.Total.V
	}
	if u.Prompt.OK && u.Completion.OK {
		return u.Prompt.V + u.Completion.V
	}
	return 0
}

// optInt is a JSON integer that may be absent, null or of another type; like the
// reference's isinstance(x, int) checks, anything but an integer counts as absent.
type optInt struct {
	V  int
	OK bool
}

func (o *optInt) UnmarshalJSON(b []byte) error {
	v, err := strconv.Atoi(string(b))
	*o = optInt{V: v, OK: err == nil}
	return nil
}

// rawArgs keeps tool-call arguments as the raw string the model produced. A server
// that sends an object instead of a string gets its compact JSON text, kept in the
// message; the tool then gets {} (FunctionCall.notText), as the reference's json.loads
// of a non-string raises TypeError, which it turns into {}.
type rawArgs struct {
	text    string
	notText bool
}

func (a *rawArgs) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*a = rawArgs{}
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = rawArgs{text: s}
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*a = rawArgs{text: buf.String(), notText: true}
	return nil
}

type wireResponse struct {
	Choices []struct {
		Message struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string  `json:"name"`
					Arguments rawArgs `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     optInt `json:"prompt_tokens"`
		CompletionTokens optInt `json:"completion_tokens"`
		TotalTokens      optInt `json:"total_tokens"`
		// PromptTokensDetails is OpenAI's; vLLM and llama.cpp send it when prefix caching is on.
		PromptTokensDetails *struct {
			CachedTokens optInt `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// DecodeResponse reads a chat-completion body as the loop reads every model turn: the
// assistant message the reference would append (role, content, tool calls, the reasoning under
// either of its names) and the finish reason. It fails when the body is no chat completion or
// has no choice. It is the one reader of the model server's answer (doctor's probe uses it).
func DecodeResponse(body []byte) (msg Message, finishReason string, err error) {
	c, err := decodeResponse(body)
	return c.Assistant, c.FinishReason, err
}

// decodeResponse parses an untrusted chat-completion body into the assistant message
// the reference would append: role, content (null kept), tool_calls when any (type
// always "function"), the reasoning when non-empty (reasoning_content, or vLLM's newer
// "reasoning"); every other field is dropped.
func decodeResponse(body []byte) (completion, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return completion{}, fmt.Errorf("decoding model response: %w", err)
	}
	if len(w.Choices) == 0 {
		if len(w.Error) > 0 && string(w.Error) != "null" {
			return completion{}, fmt.Errorf("model response has no choices: error %s", truncate(string(w.Error), maxErrorBody))
		}
		return completion{}, errors.New("model response has no choices")
	}
	ch := w.Choices[0]
	msg := Message{Role: "assistant", Content: ch.Message.Content}
	msg.ReasoningContent, msg.ReasoningField = pickReasoning(ch.Message.ReasoningContent, ch.Message.Reasoning)
	for _, tc := range ch.Message.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{
			ID:       tc.ID,
			Type:     "function",
			Function: FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments.text, notText: tc.Function.Arguments.notText},
		})
	}
	c := completion{Assistant: msg}
	if ch.FinishReason != nil {
		c.FinishReason = *ch.FinishReason
	}
	if w.Usage != nil {
		c.Usage = usage{Prompt: w.Usage.PromptTokens, Completion: w.Usage.CompletionTokens, Total: w.Usage.TotalTokens}
		if d := w.Usage.PromptTokensDetails; d != nil {
			c.Usage.Cached = d.CachedTokens
		}
	}
	return c, nil
}

// statusError is a non-2xx reply from the model server.
type statusError struct {
	StatusCode int
	Body       string
	RetryAfter string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("model server answered HTTP %d: %s", e.StatusCode, e.Body)
}

// retryable follows the OpenAI SDK the reference uses: 408, 409, 429 and 5xx.
func (e *statusError) retryable() bool {
	return e.StatusCode == http.StatusRequestTimeout || e.StatusCode == http.StatusConflict ||
		e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// transportError is a failure to get a complete reply: connection refused or reset,
// client timeout, a body cut short. It is retried.
type transportError struct{ err error }

func (e *transportError) Error() string { return e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// isContextOverflow applies the reference's markers to an error text, and the phrasings
// of servers whose refusal the reference's markers miss, so that a run on them ends with
// max_context_len as it did on the servers the reference was used with:
//   - SGLang: "The input (N tokens) is longer than the model's context length (M tokens).";
//   - vLLM's engine check: "The decoder prompt (length N) is longer than the maximum model
//     length of M.";
//   - llama.cpp's llama-server: "request (N tokens) exceeds the available context size (M
//     tokens), try increasing it", type "exceed_context_size_error".
func isContextOverflow(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, marker := range []string{
		"context_length_exceeded", "reduce the length", "maximum context length", // the reference's
		"longer than the model's context length", "longer than the maximum model length",
		"exceed_context_size_error", "exceeds the available context size",
	} {
		if strings.Contains(msg, marker) {
			return true
		}
	}
	return strings.Contains(msg, "context length") && strings.Contains(msg, "exceed")
}

// requestBody encodes the chat-completions request: the reference's kwargs in order,
// then the extra body sorted by key; an extra key replaces a known one.
func requestBody(cfg Config, msgs []Message) ([]byte, error) {
	type kv struct {
		key string
		val any
	}
	fields := []kv{
		{"model", cfg.Model},
		{"messages", msgs},
		{"tools", toolsJSON()},
		{"tool_choice", "auto"},
		{"temperature", cfg.Temperature},
		{"parallel_tool_calls", true},
	}
	if cfg.MaxCompletionTokens > 0 {
		fields = append(fields, kv{"max_completion_tokens", cfg.MaxCompletionTokens})
	}
	fields = slices.DeleteFunc(fields, func(f kv) bool { _, over := cfg.Extra[f.key]; return over })
	extra := make([]string, 0, len(cfg.Extra))
	for k := range cfg.Extra {
		extra = append(extra, k)
	}
	slices.Sort(extra)
	for _, k := range extra {
		fields = append(fields, kv{k, cfg.Extra[k]})
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(f.key)
		val, err := json.Marshal(f.val)
		if err != nil {
			return nil, fmt.Errorf("encoding request field %q: %w", f.key, err)
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// complete sends one turn, retrying transport errors, 408/409/429 and 5xx up to
// MaxRetries times. It returns early, with ctx's error wrapped, once ctx is done.
func complete(ctx context.Context, cfg Config, msgs []Message) (completion, error) {
	body, err := requestBody(cfg, msgs)
	if err != nil {
		return completion{}, err
	}
	waits := newWaitReporter(cfg.OnWait, cfg.SlowAfter)
	defer waits.report(ModelWait{}) // the turn is over, whatever happened: it waits no more
	ctx = withWaitReporter(ctx, waits)
	for attempt := 0; ; attempt++ {
		c, err := completeOnce(ctx, cfg, body)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return completion{}, fmt.Errorf("querying model: %w", ctx.Err())
		}
		var se *statusError
		var te *transportError
		retryAfter := ""
		switch {
		case errors.As(err, &se) && se.retryable():
			retryAfter = se.RetryAfter
		case errors.As(err, &te):
		default:
			return completion{}, fmt.Errorf("querying model: %w", err)
		}
		if attempt >= cfg.MaxRetries {
			return completion{}, fmt.Errorf("querying model (%d attempts): %w", attempt+1, err)
		}
		delay, fromServer := retryDelay(cfg, attempt, retryAfter)
		if se != nil {
			waits.report(ModelWait{Status: se.StatusCode, RetryIn: delay})
		} else {
			waits.report(ModelWait{Unreachable: true, RetryIn: delay})
		}
		cfg.Logger.WarnContext(ctx, "retrying model request",
			"attempt", attempt+1, "delay", delay, "retry_after", fromServer, logging.ErrorKey, truncate(err.Error(), 300))
		if err := cfg.sleep(ctx, delay); err != nil {
			return completion{}, fmt.Errorf("waiting to retry the model request: %w", err)
		}
	}
}

func completeOnce(ctx context.Context, cfg Config, body []byte) (completion, error) {
	url := strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return completion{}, fmt.Errorf("building model request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "frognano-leaf")
	if cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	// An answer, whatever it says, ends the slow watch the request's writing started
	// (wait.go); a retry of it is reported by the caller.
	defer waitReporterFrom(ctx).disarm()
	resp, err := cfg.HTTPClient.Do(req)
	if err != nil {
		return completion{}, &transportError{fmt.Errorf("sending model request: %w", err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return completion{}, &statusError{
			StatusCode: resp.StatusCode,
			Body:       strings.ToValidUTF8(strings.TrimSpace(string(b)), "\uFFFD"),
			RetryAfter: resp.Header.Get("Retry-After"),
		}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return completion{}, &transportError{fmt.Errorf("reading model response: %w", err)}
	}
	if len(b) > maxResponseBytes {
		return completion{}, fmt.Errorf("model response is larger than %d MiB", maxResponseBytes>>20)
	}
	return decodeResponse(b)
}

// retryDelay is the server's Retry-After when usable, else exponential backoff from
// RetryBaseDelay capped at maxRetryDelay, less up to 25% jitter so that many workers
// do not retry in step.
func retryDelay(cfg Config, attempt int, retryAfter string) (d time.Duration, fromServer bool) {
	if d, ok := parseRetryAfter(retryAfter, cfg.now()); ok {
		return d, true
	}
	d = cfg.RetryBaseDelay
	for i := 0; i < attempt && d < maxRetryDelay; i++ {
		d *= 2
	}
	d = min(d, maxRetryDelay)
	return d - rand.N(d/4+1), false
}

// parseRetryAfter reads delay-seconds (fractions accepted) or an HTTP date, capped at
// maxRetryAfter. A missing, past or unreadable value reports false.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(secs) || secs <= 0 {
			return 0, false
		}
		if secs >= maxRetryAfter.Seconds() {
			return maxRetryAfter, true
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d <= 0 {
		return 0, false
	}
	return min(d, maxRetryAfter), true
}

// truncate is s cut to n bytes, never inside a character, with an ellipsis when cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return clip.Prefix(s, n) + clip.Ellipsis
}

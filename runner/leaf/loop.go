package leaf

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/frognano/frognano/internal/logging"
)

// Tools executes one tool call. A non-nil error means the sandbox itself broke (exit
// reason tool_error); tool failures are observations, not errors. arguments is the raw
// string the model produced, possibly malformed: the executor treats that as {}.
type Tools interface {
	Call(ctx context.Context, name, arguments string) (string, error)
}

// lengthFinishReasons are the finish reasons that mean a turn was cut short.
var lengthFinishReasons = map[string]bool{"length": true, "max_tokens": true, "max_new_tokens": true}

// Run drives the Leaf loop for one task (the user message) until an exit reason. It
// always returns a Result (never nil), also on cancellation or model errors. onStep,
// when not nil, is called synchronously after every completed step. Run returns
// promptly once ctx is cancelled (exit cancelled: an in-flight request or tool call is
// aborted through its context); MaxTime bounds the whole run (exit max_time).
func Run(ctx context.Context, cfg Config, task string, tools Tools, onStep func(Step)) *Result {
	cfg = cfg.withDefaults()
	cfg.Logger = logging.FromContextOr(ctx, cfg.Logger) // the run's, when the caller put it there
	started := time.Now()
	runCtx := ctx
	if cfg.MaxTime > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, cfg.MaxTime)
		defer cancel()
	}
	r := &Result{
		Messages: []Message{textMessage("system", SystemPrompt), textMessage("user", task)},
		Steps:    []Step{},
	}
	// stopped names the exit when the run's context is done: the caller's
	// cancellation wins over our own deadline.
	stopped := func() string {
		switch {
		case ctx.Err() != nil:
			return ExitCancelled
		case runCtx.Err() != nil:
			return ExitMaxTime
		}
		return ""
	}

	r.ExitReason = ExitMaxTurns
	for step := 0; step < cfg.MaxSteps; step++ {
		if reason := stopped(); reason != "" {
			r.ExitReason = reason
			break
		}
		r.NSteps++
		modelStart := time.Now()
		c, err := complete(runCtx, cfg, r.Messages)
		modelTime := time.Since(modelStart)
		r.ModelTime += modelTime
		if err != nil {
			if reason := stopped(); reason != "" {
				r.ExitReason = reason
			} else if isContextOverflow(err) {
				r.ExitReason = ExitMaxContext
				cfg.Logger.WarnContext(ctx, "leaf reached the model context limit", logging.ErrorKey, truncate(err.Error(), 300))
			} else {
				r.ExitReason = ExitLLMError
				r.Error = err.Error()
			}
			break
		}
		assistant := c.Assistant
		r.Messages = append(r.Messages, assistant)
		if c.Usage.Prompt.OK {
			r.PromptTokens += c.Usage.Prompt.V
		}
		if c.Usage.Completion.OK {
			r.CompletionTokens += c.Usage.Completion.V
		}
		if c.Usage.Cached.OK && c.Usage.Cached.V > 0 {
			r.CachedTokens += c.Usage.Cached.V
		}
		r.ContextTokens = c.Usage.total()
		if r.ContextTokens == 0 {
			r.ContextTokens = estimateTokens(r.Messages)
		}
		st := Step{Index: step, Assistant: assistant, Observations: []Observation{}, ModelTime: modelTime}

		truncated := lengthFinishReasons[strings.ToLower(c.FinishReason)]
		if len(assistant.ToolCalls) == 0 || truncated {
			r.FinalMessage = assistant.Text()
			r.ExitReason = ExitAgent
			if truncated {
				r.ExitReason = lengthExitReason(cfg, c.Usage)
			}
			r.addStep(st, started, onStep)
			break
		}

		toolStart := time.Now()
		firstTool := len(r.Messages)
		var toolErr error
		for _, call := range assistant.ToolCalls {
			obs, err := callTool(runCtx, tools, call)
			if err != nil {
				toolErr = err
				break
			}
			r.Messages = append(r.Messages, Message{Role: "tool", ToolCallID: call.ID, Content: &obs})
			st.Observations = append(st.Observations, Observation{Tool: call.Function.Name, Observation: obs})
		}
		st.ToolTime = time.Since(toolStart)
		r.ToolTime += st.ToolTime
		if toolErr != nil {
			// As in the reference: the tool messages already appended stay, the step
			// is not recorded.
			if reason := stopped(); reason != "" {
				r.ExitReason = reason
			} else {
				r.ExitReason = ExitToolError
				r.Error = toolErr.Error()
			}
			break
		}
		r.ContextTokens += estimateTokens(r.Messages[firstTool:])
		r.addStep(st, started, onStep)
		if cfg.MaxContextTokens > 0 && r.ContextTokens >= cfg.MaxContextTokens {
			r.ExitReason = ExitMaxContext
			break
		}
	}
	r.Elapsed = time.Since(started)
	cfg.Logger.InfoContext(ctx, "leaf run ended", "exit_reason", r.ExitReason, "n_steps", r.NSteps,
		"context_tokens", r.ContextTokens, "elapsed", r.Elapsed)
	return r
}

func (r *Result) addStep(st Step, started time.Time, onStep func(Step)) {
	st.ContextTokens = r.ContextTokens
	st.Elapsed = time.Since(started)
	r.Steps = append(r.Steps, st)
	if onStep != nil {
		onStep(st)
	}
}

func callTool(ctx context.Context, tools Tools, call ToolCall) (string, error) {
	if tools == nil {
		return "", errors.New("running tool: no tool executor")
	}
	obs, err := tools.Call(ctx, call.Function.Name, call.Function.ToolArguments())
	if err != nil {
		return "", fmt.Errorf("running tool %s: %w", call.Function.Name, err)
	}
	return obs, nil
}

// lengthExitReason classifies a turn cut short as the reference does: the context
// filled up (prompt+completion reached MaxContextTokens), or the per-turn cap was hit;
// without usage, the cap when there is one.
func lengthExitReason(cfg Config, u usage) string {
	if u.Prompt.OK && u.Completion.OK {
		if cfg.MaxContextTokens > 0 && u.Prompt.V+u.Completion.V >= cfg.MaxContextTokens {
			return ExitMaxContext
		}
		if cfg.MaxCompletionTokens > 0 && u.Completion.V >= cfg.MaxCompletionTokens {
			return ExitMaxTokensPerTurn
		}
		return ExitMaxContext
	}
	if cfg.MaxCompletionTokens > 0 {
		return ExitMaxTokensPerTurn
	}
	return ExitMaxContext
}

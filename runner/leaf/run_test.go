package leaf

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/frognano/frognano/runner/leaf/leaftest"
)

func TestRunExitReasons(t *testing.T) {
	t.Parallel()
	sandboxBroke := func(context.Context, string, string) (string, error) {
		return "", errors.New("container is gone")
	}
	tests := []struct {
		name      string
		script    string
		configure func(*Config)
		tool      func(context.Context, string, string) (string, error)
		exit      string
		errPart   string // "" means Result.Error must be empty
		nSteps    int
		steps     int
		toolCalls int
		final     string
	}{
		{name: "AgentFinishesAtOnce", script: "finish-immediately.json", exit: ExitAgent, nSteps: 1, steps: 1,
			final: "Nothing to change: the behaviour described is intended."},
		{name: "AgentAfterATool", script: "read-then-finish.json", exit: ExitAgent, nSteps: 2, steps: 2, toolCalls: 1,
			final: "The file looks right."},
		{name: "MaxTurns", script: "loop-forever.json", configure: func(c *Config) { c.MaxSteps = 3 },
			exit: ExitMaxTurns, nSteps: 3, steps: 3, toolCalls: 3},
		{name: "MaxContextFromUsage", script: "context-usage.json", exit: ExitMaxContext, nSteps: 1, steps: 1, toolCalls: 1},
		{name: "MaxContextFromRejection", script: "context-rejected.json", exit: ExitMaxContext, nSteps: 2, steps: 1, toolCalls: 1},
		{name: "MaxTokensPerTurn", script: "length-per-turn.json", exit: ExitMaxTokensPerTurn, nSteps: 1, steps: 1,
			final: "I will now"},
		{name: "LengthWhenContextFull", script: "length-context.json", exit: ExitMaxContext, nSteps: 1, steps: 1,
			final: "partial"},
		{name: "LLMErrorNotRetried", script: "llm-error.json", exit: ExitLLMError, errPart: "HTTP 401", nSteps: 1},
		{name: "LLMErrorBadBody", script: "bad-response.json", exit: ExitLLMError, errPart: "decoding model response", nSteps: 1},
		{name: "LLMErrorRetriesExhausted", script: "retry-exhausted.json", configure: func(c *Config) { c.MaxRetries = 2 },
			exit: ExitLLMError, errPart: "bad gateway", nSteps: 1},
		{name: "ToolError", script: "context-usage.json", tool: sandboxBroke, exit: ExitToolError,
			errPart: "container is gone", nSteps: 1, toolCalls: 1},
		{name: "MaxTime", script: "tool-then-slow.json", configure: func(c *Config) { c.MaxTime = 300 * time.Millisecond },
			exit: ExitMaxTime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, leaftest.LoadModel(t, tt.script))
			b.tools.fn = tt.tool
			if tt.configure != nil {
				tt.configure(&b.cfg)
			}
			r := Run(context.Background(), b.cfg, "Fix the failing test.", b.tools, nil)
			if r.ExitReason != tt.exit {
				t.Fatalf("exit reason = %q (error %q), want %q", r.ExitReason, r.Error, tt.exit)
			}
			if tt.errPart == "" && r.Error != "" {
				t.Errorf("error = %q, want none", r.Error)
			}
			if !strings.Contains(r.Error, tt.errPart) {
				t.Errorf("error = %q, want it to contain %q", r.Error, tt.errPart)
			}
			if tt.exit == ExitMaxTime {
				return // how far the run got before its deadline depends on the machine
			}
			if r.NSteps != tt.nSteps || len(r.Steps) != tt.steps {
				t.Errorf("n_steps = %d, steps = %d; want %d, %d", r.NSteps, len(r.Steps), tt.nSteps, tt.steps)
			}
			if got := len(b.tools.Calls()); got != tt.toolCalls {
				t.Errorf("tool calls = %d, want %d", got, tt.toolCalls)
			}
			if r.FinalMessage != tt.final {
				t.Errorf("final message = %q, want %q", r.FinalMessage, tt.final)
			}
		})
	}
}

func TestRunContextRejectionKeepsWork(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "context-rejected.json"))
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitMaxContext || r.Error != "" {
		t.Fatalf("exit %q error %q, want max_context_len without error", r.ExitReason, r.Error)
	}
	if last := r.Messages[len(r.Messages)-1]; last.Role != "tool" {
		t.Errorf("last message role = %q, want tool (the work is kept)", last.Role)
	}
	if len(b.srv.Requests()) != 2 {
		t.Errorf("requests = %d, want 2: a context rejection is not retried", len(b.srv.Requests()))
	}
	if len(b.Waits()) != 0 {
		t.Errorf("waited %v, want no retry", b.Waits())
	}
}

func TestRunCancelledMidRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "tool-then-slow.json"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *Result, 1)
	go func() { done <- Run(ctx, b.cfg, "task", b.tools, nil) }()

	waitCtx, waitCancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer waitCancel()
	if err := b.srv.WaitRequests(waitCtx, 2); err != nil {
		t.Fatal(err)
	}
	cancel()
	var r *Result
	select {
	case r = <-done:
	case <-waitCtx.Done():
		t.Fatal("Run did not return after cancellation while the server held its reply for 10 minutes")
	}
	if r.ExitReason != ExitCancelled || r.Error != "" {
		t.Fatalf("exit %q error %q, want cancelled without error", r.ExitReason, r.Error)
	}
	if r.NSteps != 2 || len(r.Steps) != 1 {
		t.Errorf("n_steps = %d, steps = %d; want 2, 1", r.NSteps, len(r.Steps))
	}
	// The server sees the aborted request as a closed connection (external state).
	for b.srv.Cancelled() != 1 {
		if waitCtx.Err() != nil {
			t.Fatal("the server never saw the in-flight request aborted")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRunCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.Script{AllowUnused: true, Turns: []leaftest.Turn{{Content: "never sent"}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Run(ctx, b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitCancelled || r.NSteps != 0 || len(r.Steps) != 0 {
		t.Fatalf("exit %q n_steps %d steps %d, want cancelled, 0, 0", r.ExitReason, r.NSteps, len(r.Steps))
	}
	if n := len(b.srv.Requests()); n != 0 {
		t.Errorf("requests = %d, want none", n)
	}
	if len(r.Messages) != 2 || r.Messages[0].Text() != SystemPrompt || r.Messages[1].Text() != "task" {
		t.Errorf("messages = %+v, want system prompt and task", r.Messages)
	}
}

func TestRunToolCancelledIsNotToolError(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "context-usage.json"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.tools.fn = func(tctx context.Context, _, _ string) (string, error) {
		cancel() // the worker is shut down while a tool runs
		<-tctx.Done()
		return "", tctx.Err()
	}
	r := Run(ctx, b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitCancelled || r.Error != "" {
		t.Fatalf("exit %q error %q, want cancelled", r.ExitReason, r.Error)
	}
}

func TestRunParallelToolCallsInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "parallel-tools.json"))
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	var names []string
	for _, c := range b.tools.Calls() {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "Glob,Read,Bash" {
		t.Errorf("tools ran as %s, want Glob,Read,Bash", got)
	}
	var ids []string
	for _, m := range r.Messages[3:6] {
		if m.Role != "tool" {
			t.Fatalf("message role %q, want tool", m.Role)
		}
		ids = append(ids, m.ToolCallID)
	}
	if got := strings.Join(ids, ","); got != "call_a,call_b,call_c" {
		t.Errorf("tool messages answer %s, want call_a,call_b,call_c", got)
	}
	obs := r.Steps[0].Observations
	if len(obs) != 3 || obs[2].Tool != "Bash" || !strings.HasPrefix(obs[2].Observation, "Bash: ") {
		t.Errorf("observations = %+v", obs)
	}
}

func TestRunMalformedArguments(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "malformed-arguments.json"))
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	const raw = `{"file_path": "x.py"`
	if calls := b.tools.Calls(); len(calls) != 1 || calls[0].Arguments != raw {
		t.Fatalf("tools got %+v, want the raw arguments %q", calls, raw)
	}
	second := b.srv.Requests()[1]
	got := second.Messages[2].ToolCalls[0].Function.Arguments
	if got != raw {
		t.Errorf("assistant message sent back with arguments %q, want the raw %q", got, raw)
	}
}

func TestRunKeepsReasoningContent(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "read-then-finish.json"))
	r := Run(context.Background(), b.cfg, "task", b.tools, nil)
	if r.ExitReason != ExitAgent {
		t.Fatalf("exit %q (%s)", r.ExitReason, r.Error)
	}
	// The script's second turn asserts the reasoning came back; check our side too.
	a := r.Messages[2]
	if a.ReasoningContent != "Let me look at the file first." || a.Content != nil {
		t.Errorf("assistant = %+v, want reasoning kept and null content", a)
	}
	if got := b.srv.Requests()[1].Messages[2].ReasoningContent; got != a.ReasoningContent {
		t.Errorf("second request reasoning_content = %q", got)
	}
}

func TestRunOnStep(t *testing.T) {
	t.Parallel()
	b := setup(t, leaftest.LoadModel(t, "read-then-finish.json"))
	var seen []Step
	r := Run(context.Background(), b.cfg, "task", b.tools, func(s Step) { seen = append(seen, s) })
	if len(seen) != 2 || len(r.Steps) != 2 {
		t.Fatalf("onStep saw %d steps, result has %d; want 2, 2", len(seen), len(r.Steps))
	}
	for i, s := range seen {
		if s.Index != i || s.ContextTokens != r.Steps[i].ContextTokens || s.Elapsed <= 0 {
			t.Errorf("step %d = %+v", i, s)
		}
	}
	if len(seen[0].Observations) != 1 || seen[0].Observations[0].Tool != "Read" {
		t.Errorf("first step observations = %+v", seen[0].Observations)
	}
	if r.PromptTokens != 900+980 || r.CompletionTokens != 30+8 {
		t.Errorf("usage sums = %d, %d", r.PromptTokens, r.CompletionTokens)
	}
}

package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/frognano/frognano/runner/leaf"
)

// probeMaxTokens leaves a reasoning model room to think before its tool call.
const probeMaxTokens = 2048

// Model asks the model server for its model list (GET /models) and checks that the
// configured model is served.
func Model(ctx context.Context, cfg leaf.Config) Result {
	const name = "model"
	return timed(ctx, 20*time.Second, func(ctx context.Context) Result {
		url := strings.TrimRight(cfg.BaseURL, "/") + "/models"
		body, status, err := modelRequest(ctx, cfg, http.MethodGet, url, nil)
		if err != nil {
			return fail(name, fmt.Sprintf("model server at %s: %s", cfg.BaseURL, clip(err.Error(), 200)), "start vLLM or SGLang, or fix FROGNANO_MODEL_URL (it ends in /v1)")
		}
		if status != http.StatusOK {
			return fail(name, fmt.Sprintf("GET %s answered %d: %s", url, status, clip(string(body), 200)), "check FROGNANO_MODEL_URL and FROGNANO_MODEL_API_KEY")
		}
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return fail(name, "GET /models did not answer an OpenAI model list", "point FROGNANO_MODEL_URL at an OpenAI-compatible server")
		}
		var ids []string
		for _, m := range list.Data {
			ids = append(ids, m.ID)
		}
		if !slices.Contains(ids, cfg.Model) {
			return fail(name, fmt.Sprintf("%s does not serve %s (it serves %s)", cfg.BaseURL, cfg.Model, clip(strings.Join(ids, ", "), 200)),
				"set FROGNANO_MODEL to the served name, or serve the model under that name (vLLM --served-model-name)")
		}
		return pass(name, fmt.Sprintf("%s serves %s", cfg.BaseURL, cfg.Model))
	})
}

// ModelToolCall sends one request with one Leaf tool (Bash, the reference's schema) and the
// reference's sampling settings, and checks that a tool call comes back: a server started
// without tool calling (vLLM --enable-auto-tool-choice --tool-call-parser) answers in prose.
// It reports the latency and whether reasoning_content came back (vLLM --reasoning-parser).
func ModelToolCall(ctx context.Context, cfg leaf.Config) Result {
	const name = "model-tools"
	return timed(ctx, 3*time.Minute, func(ctx context.Context) Result {
		var bash leaf.ToolSchema
		for _, t := range leaf.ToolSchemas() {
			if t.Function.Name == "Bash" {
				bash = t
			}
		}
		req := map[string]any{}
		extra := cfg.Extra
		if extra == nil {
			extra = leaf.DefaultExtra()
		}
		maps.Copy(req, extra)
		req["model"] = cfg.Model
		req["messages"] = []map[string]string{
			{"role": "system", "content": "You are a coding agent. Use the tools to act."},
			{"role": "user", "content": "Run the shell command `true` with the Bash tool. Do nothing else."},
		}
		req["tools"] = []leaf.ToolSchema{bash}
		req["temperature"] = cfg.Temperature
		req["max_completion_tokens"] = probeMaxTokens
		payload, err := json.Marshal(req)
		if err != nil {
			return fail(name, err.Error(), "")
		}
		start := time.Now()
		body, status, err := modelRequest(ctx, cfg, http.MethodPost, strings.TrimRight(cfg.BaseURL, "/")+"/chat/completions", payload)
		took := time.Since(start).Round(time.Millisecond)
		if err != nil {
			return fail(name, "the probe request failed: "+clip(err.Error(), 200), "check that the model server answers chat completions")
		}
		if status != http.StatusOK {
			return fail(name, fmt.Sprintf("the probe request answered %d: %s", status, clip(string(body), 200)), "check the server's log; tool calling needs vLLM --enable-auto-tool-choice --tool-call-parser")
		}
		// Read as a run reads every turn: what passes here is what the loop gets.
		msg, finishReason, err := leaf.DecodeResponse(body)
		if err != nil {
			return fail(name, "the probe's answer is not a chat completion", "point FROGNANO_MODEL_URL at an OpenAI-compatible server")
		}
		reasoning := "no reasoning_content"
		if msg.ReasoningContent != "" { // reasoning_content, or vLLM's newer "reasoning"
			reasoning = "reasoning_content came back"
		}
		if len(msg.ToolCalls) == 0 {
			return fail(name, fmt.Sprintf("no tool call in %s (finish_reason %q, %s)", took, finishReason, reasoning),
				"start vLLM with --enable-auto-tool-choice --tool-call-parser hermes (SGLang: --tool-call-parser), see docs/operations.md")
		}
		call := msg.ToolCalls[0].Function
		var args map[string]any
		if call.Name != "Bash" || json.Unmarshal([]byte(call.ToolArguments()), &args) != nil || args["command"] == nil {
			return fail(name, fmt.Sprintf("the tool call is %s(%s), not Bash with a command", clip(call.Name, 40), clip(call.Arguments, 80)), "check the server's tool-call parser")
		}
		return pass(name, fmt.Sprintf("tool call Bash in %s, %s", took, reasoning))
	})
}

func modelRequest(ctx context.Context, cfg leaf.Config, method, url string, payload []byte) ([]byte, int, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, 0, err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return b, resp.StatusCode, err
}

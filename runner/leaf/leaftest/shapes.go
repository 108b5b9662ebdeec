package leaftest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The servers frognano is run against answer in different shapes, and a server upgrade can
// change the shape under a user's feet. Script.Server picks the shape a scripted server
// answers in, taken from each server's own sources:
//
//   - "vllm" (the default): vLLM before it renamed the reasoning field. The message carries
//     reasoning_content beside OpenAI's refusal, annotations, audio and function_call; the
//     choice has logprobs and stop_reason. Errors are {"object":"error","message",...}
//     at the top level; a prompt over the context: "This model's maximum context length is
//     M tokens. However, you requested N tokens (...). Please reduce the length of the
//     messages or completion."
//   - "vllm-both": vLLM between the rename and the removal of the old name: the message
//     carries both reasoning and reasoning_content.
//   - "vllm-reasoning": vLLM since the old name was removed: the reasoning comes only as
//     reasoning, and reasoning is also the only field of an assistant message it reads back
//     into the chat template. Errors are wrapped in {"error":{...}}, and the context
//     refusal says "... However, your request has N input tokens plus K 'max_tokens'.
//     Please reduce one or the other. ...".
//   - "sglang": reasoning_content; tool calls carry an index; the choice has matched_stop;
//     a prompt over the context: {"object":"error","message":"The input (N tokens) is
//     longer than the model's context length (M tokens).","type":"BadRequestError",...}.
//   - "llama-server" (llama.cpp): reasoning_content; the reply has timings and a
//     system_fingerprint; a prompt over the context: {"error":{"code":400,"message":
//     "request (N tokens) exceeds the available context size (M tokens), try increasing
//     it","type":"exceed_context_size_error","n_prompt_tokens":N,"n_ctx":M}}.
var serverShapes = map[string]bool{"": true, "vllm": true, "vllm-both": true, "vllm-reasoning": true, "sglang": true, "llama-server": true}

// reasoningReadKey is the field of an incoming assistant message the server reads the
// reasoning from.
func reasoningReadKey(server string) string {
	if server == "vllm-reasoning" {
		return "reasoning"
	}
	return "reasoning_content"
}

// shapeMessage adds the server's own fields to a completion message.
func shapeMessage(server string, msg map[string]any, reasoning string) {
	var r any
	if reasoning != "" {
		r = reasoning
	}
	switch server {
	case "", "vllm":
		msg["refusal"], msg["annotations"], msg["audio"], msg["function_call"] = nil, nil, nil, nil
		msg["reasoning_content"] = r
	case "vllm-both":
		msg["refusal"], msg["annotations"], msg["audio"], msg["function_call"] = nil, nil, nil, nil
		msg["reasoning"], msg["reasoning_content"] = r, r
	case "vllm-reasoning":
		msg["refusal"], msg["annotations"], msg["audio"], msg["function_call"] = nil, nil, nil, nil
		msg["reasoning"] = r
	case "sglang", "llama-server":
		if reasoning != "" {
			msg["reasoning_content"] = reasoning
		}
	}
	if _, ok := msg["tool_calls"]; !ok {
		switch server {
		case "sglang":
			msg["tool_calls"] = nil
		case "llama-server":
		default: // vLLM
			msg["tool_calls"] = []any{}
		}
	}
	if server == "sglang" {
		if calls, ok := msg["tool_calls"].([]map[string]any); ok {
			for i, c := range calls {
				c["index"] = i
			}
		}
	}
}

// shapeReply adds the server's own fields to a completion and its choice.
func shapeReply(server string, out, choice map[string]any) {
	switch server {
	case "", "vllm", "vllm-both", "vllm-reasoning":
		choice["logprobs"], choice["stop_reason"] = nil, nil
		out["service_tier"], out["system_fingerprint"], out["prompt_logprobs"], out["kv_transfer_params"] = nil, nil, nil, nil
	case "sglang":
		choice["logprobs"], choice["matched_stop"] = nil, nil
	case "llama-server":
		out["system_fingerprint"] = "b6000-leaftest"
		out["timings"] = map[string]any{"prompt_n": 1, "prompt_ms": 1.0, "predicted_n": 1, "predicted_ms": 1.0}
	}
}

// overflowReply is the status and body the server answers a prompt over its context with.
func overflowReply(server string, prompt, ctx, maxTokens int) (int, string) {
	var v any
	switch server {
	case "", "vllm", "vllm-both":
		v = map[string]any{"object": "error", "type": "BadRequestError", "param": nil, "code": 400,
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", ctx, prompt+maxTokens, prompt, maxTokens)}
	case "vllm-reasoning":
		v = map[string]any{"error": map[string]any{"type": "BadRequestError", "param": "input_tokens, max_tokens", "code": 400,
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your request has %d input tokens plus %d 'max_tokens'. Please reduce one or the other. (parameter=input_tokens, max_tokens, value=(%d, %d))", ctx, prompt, maxTokens, prompt, maxTokens)}}
	case "sglang":
		v = map[string]any{"object": "error", "type": "BadRequestError", "param": nil, "code": 400,
			"message": fmt.Sprintf("The input (%d tokens) is longer than the model's context length (%d tokens).", prompt, ctx)}
	case "llama-server":
		v = map[string]any{"error": map[string]any{"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": ctx,
			"message": fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", prompt, ctx)}}
	}
	b, _ := json.Marshal(v)
	return http.StatusBadRequest, string(b)
}

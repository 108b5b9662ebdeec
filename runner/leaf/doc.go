// Package leaf owns the Leaf agent loop that FrogNano-4B was trained in: the system
// prompt, the five tool schemas, the chat-completions request, context accounting,
// exit reasons and the trajectory record, all as docs/leaf-protocol.md states them
// (read from the reference harness, microsoft/FrogNano frognano/harness/leaf/).
//
// leaf talks to the model server and to a Tools implementation, nothing else. It must
// never hold a GitHub token, never execute a tool itself (the sandbox does), never log
// the API key or message text, and never change the protocol's wording: a small model
// is sensitive to its harness, so any deviation must be opt-in and measured.
//
// Client choice: leaf uses a small typed client over net/http rather than an OpenAI
// SDK. The protocol needs exact message shapes (assistant content that may be null,
// reasoning_content sent back to the server, a whitelist of assistant fields), vLLM /
// SGLang extra body fields at the top level (chat_template_kwargs, top_k, min_p,
// repetition_penalty), tool schemas whose property order is preserved byte for byte,
// and a capped read of an untrusted response body. The Go OpenAI SDKs model none of
// the vendor fields as typed data, so each would need raw-JSON escape hatches that
// hide the very shapes we must control; one file of net/http is clearer and has no
// dependency.
package leaf

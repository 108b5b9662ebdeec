package leaf

import (
	"math"
	"unicode/utf8"
)

// estimateTokens mirrors the reference's fallback when no tokenizer is installed
// (the case for its own deployments without transformers): ceil(bytes / 4) of the
// messages serialised as Python's json.dumps(messages, separators=(",", ":"),
// ensure_ascii=False). We compute that length directly instead of marshalling, so it
// matches Python byte for byte (Go's encoder escapes <, >, & and U+2028/9; Python
// does not) and costs no allocation. Loading a Hugging Face tokenizer in Go is not
// worth it: the server's usage total, which dominates the count, is exact.
func estimateTokens(msgs []Message) int {
	if len(msgs) == 0 {
		return 0
	}
	return int(math.Ceil(float64(pythonJSONLen(msgs)) / 4))
}

// pythonJSONLen is the byte length of the compact Python JSON list of msgs.
func pythonJSONLen(msgs []Message) int {
	n := 2 // [ ]
	for i, m := range msgs {
		if i > 0 {
			n++ // ,
		}
		n += messageJSONLen(m)
	}
	return n
}

// messageJSONLen is the compact Python JSON length of the dict the reference builds.
func messageJSONLen(m Message) int {
	n := 2 // { }
	n += field("role") + strLen(m.Role)
	if m.Role == "tool" {
		n += 1 + field("tool_call_id") + strLen(m.ToolCallID)
		return n + 1 + field("content") + optStrLen(m.Content)
	}
	n += 1 + field("content") + optStrLen(m.Content)
	if len(m.ToolCalls) > 0 {
		n += 1 + field("tool_calls") + 2
		for i, c := range m.ToolCalls {
			if i > 0 {
				n++
			}
			// {"id":..,"type":..,"function":{"name":..,"arguments":..}}
			n += 2 + field("id") + strLen(c.ID) + 1 + field("type") + strLen(c.Type) +
				1 + field("function") + 2 + field("name") + strLen(c.Function.Name) +
				1 + field("arguments") + strLen(c.Function.Arguments)
		}
	}
	if m.ReasoningContent != "" {
		n += 1 + field(m.reasoningKey()) + strLen(m.ReasoningContent)
	}
	return n
}

// field is the length of `"key":`.
func field(key string) int { return strLen(key) + 1 }

func optStrLen(s *string) int {
	if s == nil {
		return len("null")
	}
	return strLen(*s)
}

// strLen is the UTF-8 length of s as a Python JSON string with ensure_ascii=False:
// quotes, backslash escapes for " \ \b \f \n \r \t, \u00XX for other control
// characters, everything else raw. Invalid bytes count as U+FFFD (3 bytes), which is
// what a Python str decoded with errors="replace" would hold.
func strLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			n += 3
		} else {
			n += size
		}
		i += size
	}
	return n
}

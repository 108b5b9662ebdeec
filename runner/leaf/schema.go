package leaf

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SystemPrompt is the reference system prompt, three lines joined by "\n".
const SystemPrompt = "You are a software-engineering agent working in a checked-out repository.\n" +
	"Use the available tools to inspect files, make focused edits, and run commands.\n" +
	"Solve the task, validate when practical, then give a brief final answer."

// ToolSchema is one OpenAI function tool. It encodes as {"type":"function","function":{...}}.
type ToolSchema struct {
	Type     string         `json:"type"`
	Function FunctionSchema `json:"function"`
}

// FunctionSchema names and describes one tool.
type FunctionSchema struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Parameters  ParametersSchema `json:"parameters"`
}

// ParametersSchema is the JSON-schema object of a tool's arguments. Properties is a
// slice, not a map, because the chat template renders them in order and the model
// was trained on this order.
type ParametersSchema struct {
	Type       string     `json:"type"`
	Properties Properties `json:"properties"`
	Required   []string   `json:"required"`
}

// Property is one argument of a tool.
type Property struct {
	Name        string
	Type        string
	Description string
}

// Properties encodes as a JSON object whose keys keep the slice order.
type Properties []Property

// MarshalJSON writes {"name":{"type":...,"description":...},...} in slice order.
func (ps Properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(p.Name)
		if err != nil {
			return nil, fmt.Errorf("encoding property name: %w", err)
		}
		body, err := json.Marshal(struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		}{p.Type, p.Description})
		if err != nil {
			return nil, fmt.Errorf("encoding property %s: %w", p.Name, err)
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(body)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object MarshalJSON writes, keeping the keys in document order,
// so that a stored trajectory decodes back into a Trajectory.
func (ps *Properties) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("decoding tool properties: not an object")
	}
	var out Properties
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("decoding tool properties: %w", err)
		}
		name, _ := t.(string)
		var body struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		}
		if err := dec.Decode(&body); err != nil {
			return fmt.Errorf("decoding tool property %q: %w", name, err)
		}
		out = append(out, Property{Name: name, Type: body.Type, Description: body.Description})
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("decoding tool properties: %w", err)
	}
	*ps = out
	return nil
}

func tool(name, description string, props Properties, required ...string) ToolSchema {
	return ToolSchema{Type: "function", Function: FunctionSchema{
		Name:        name,
		Description: description,
		Parameters:  ParametersSchema{Type: "object", Properties: props, Required: required},
	}}
}

// ToolSchemas returns the five Leaf tools in the reference order (a fresh slice).
// Their JSON encoding is byte-identical to the reference's compact encoding.
func ToolSchemas() []ToolSchema {
	return []ToolSchema{
		tool("Read", "Read a text file. Returns numbered lines.", Properties{
			{"file_path", "string", "Path to the file to read."},
			{"offset", "integer", "Optional 1-based starting line."},
			{"limit", "integer", "Optional maximum number of lines."},
		}, "file_path"),
		tool("Write", "Write a complete file, creating parent directories when needed.", Properties{
			{"file_path", "string", "Path to write."},
			{"content", "string", "Full file contents."},
		}, "file_path", "content"),
		tool("Edit", "Replace an exact string in a text file.", Properties{
			{"file_path", "string", "Path to edit."},
			{"old_string", "string", "Exact text to replace."},
			{"new_string", "string", "Replacement text."},
			{"replace_all", "boolean", "Replace every occurrence instead of requiring one match."},
		}, "file_path", "old_string", "new_string"),
		tool("Glob", "Find files by glob pattern.", Properties{
			{"pattern", "string", "Glob pattern, e.g. **/*.py."},
			{"path", "string", "Optional directory to search from."},
		}, "pattern"),
		tool("Bash", "Run a shell command in the repository workdir.", Properties{
			{"command", "string", "Command to run."},
			{"description", "string", "Short description of the command."},
			{"timeout", "number", "Optional timeout in seconds."},
		}, "command"),
	}
}

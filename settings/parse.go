package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one thing wrong in a settings file, at a line and column (both from 1; Col is 0
// when the YAML parser does not say).
type Problem struct {
	File    string
	Line    int
	Col     int
	Message string
}

// String is FILE:LINE:COL: message, or FILE:LINE: message without a column.
func (p Problem) String() string {
	if p.Col == 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
}

// Where is FILE:LINE:COL, or FILE:LINE without a column: the problem's place alone.
func (p Problem) Where() string {
	if p.Col == 0 {
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// InvalidError is a settings file that Parse refused: its problems, in the file's order.
type InvalidError struct {
	Problems []Problem
}

// Error is one problem a line.
func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// schema is the compiled Schema; it is compiled once, at init, and a broken embedded schema is
// a bug that panics there (TestSchema* prove it compiles).
var schema = func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
	if err != nil {
		panic(fmt.Sprintf("settings: embedded schema: %v", err))
	}
	c := jsonschema.NewCompiler()
	const url = "frognano.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("settings: embedded schema: %v", err))
	}
	return c.MustCompile(url)
}()

var printer = message.NewPrinter(language.English)

// yamlLine finds the line in go.yaml.in/yaml/v3's syntax errors ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// Parse reads one settings file, named name in its problems, and checks it against the
// schema. An empty file (or one holding only comments) sets nothing. The error is an
// *InvalidError listing every problem found (a YAML syntax error stops at the first).
func Parse(name string, data []byte) (Settings, error) {
	invalid := func(line, col int, format string, args ...any) error {
		return &InvalidError{Problems: []Problem{{File: name, Line: line, Col: col, Message: fmt.Sprintf(format, args...)}}}
	}
	if len(data) > MaxSize {
		return Settings{}, invalid(1, 1, "the file is larger than the %d bytes a settings file may have", MaxSize)
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Settings{}, nil
		}
		return Settings{}, syntaxProblem(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return Settings{}, invalid(extra.Line, extra.Column, "a second YAML document: a settings file holds one")
	} else if !errors.Is(err, io.EOF) {
		return Settings{}, syntaxProblem(name, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return Settings{}, nil
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return Settings{}, nil
	}
	var problems []Problem
	value := toJSON(root, name, &problems)
	if len(problems) > 0 {
		return Settings{}, sorted(problems)
	}
	// The globs are checked on the file's own nodes, also when the schema refuses something
	// else, so that one `frognano config check` names every problem.
	if globs := find(root, "protected_paths"); globs != nil && globs.Kind == yaml.SequenceNode {
		for _, n := range globs.Content {
			if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
				continue // the schema names it
			}
			p := n.Value
			switch {
			case !validGlob(p):
				problems = append(problems, Problem{name, n.Line, n.Column, fmt.Sprintf("protected_paths: %q is not a valid glob (an unclosed [ or a trailing \\)", p)})
			case !rootedGlob(p):
				problems = append(problems, Problem{name, n.Line, n.Column, fmt.Sprintf("protected_paths: %q has an empty, \".\" or \"..\" part, which no path from the repository's root has: write the path from the root, such as deploy/**", p)})
			}
		}
	}
	if err := schema.Validate(value); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return Settings{}, fmt.Errorf("settings: validate %s: %w", name, err)
		}
		for _, leaf := range leaves(ve) {
			problems = append(problems, schemaProblem(name, root, leaf))
		}
	}
	if len(problems) > 0 {
		return Settings{}, sorted(problems)
	}
	return decode(value)
}

func syntaxProblem(name string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if !scannerProblem(m[2]) {
			// yaml/v3 reports a parser's error at its 0-based context mark (the line where
			// the construct it could not finish began), a scanner's at its 1-based line.
			line++
		}
		return &InvalidError{Problems: []Problem{{File: name, Line: line, Message: "YAML: " + m[2]}}}
	}
	return &InvalidError{Problems: []Problem{{File: name, Line: 1, Message: "YAML: " + strings.TrimPrefix(msg, "yaml: ")}}}
}

// scannerProblems are the messages of go.yaml.in/yaml/v3's scanner errors (scannerc.go), whose
// line it reports from 1; every other syntax error is its parser's.
var scannerProblems = []string{
	"block sequence entries are not allowed", "could not find expected", "did not find expected alphabetic",
	"did not find expected comment", "did not find expected digit", "did not find expected hexdecimal",
	"did not find expected version", "did not find expected whitespace", "did not find the expected '>'",
	"exceeded max depth", "found a tab character", "found an indentation indicator", "found character that cannot",
	"found extremely long", "found invalid Unicode", "found unexpected document indicator",
	"found unexpected end of stream", "found unexpected non-alphabetical", "found unknown", "mapping keys are not allowed",
	"mapping values are not allowed",
}

func scannerProblem(msg string) bool {
	return slices.ContainsFunc(scannerProblems, func(p string) bool { return strings.HasPrefix(msg, p) })
}

func sorted(problems []Problem) error {
	sort.SliceStable(problems, func(i, j int) bool {
		if problems[i].Line != problems[j].Line {
			return problems[i].Line < problems[j].Line
		}
		return problems[i].Col < problems[j].Col
	})
	return &InvalidError{Problems: slices.Compact(problems)}
}

// toJSON turns a YAML node into the JSON value the schema validates. It refuses what JSON has
// no word for and what a settings file has no use for: anchors and aliases (so no alias can
// multiply the document), custom tags, keys that are not strings, keys set twice.
func toJSON(n *yaml.Node, name string, problems *[]Problem) any {
	add := func(n *yaml.Node, format string, args ...any) {
		*problems = append(*problems, Problem{name, n.Line, n.Column, fmt.Sprintf(format, args...)})
	}
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		add(n, "anchors and aliases (&, *) are not allowed in a settings file")
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
				add(k, "a key must be a string")
				continue
			}
			if _, dup := out[k.Value]; dup {
				add(k, "%s is set twice", k.Value)
				continue
			}
			out[k.Value] = toJSON(v, name, problems)
		}
		return out
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, toJSON(c, name, problems))
		}
		return out
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "!!timestamp", "!!binary":
			return n.Value
		case "!!null":
			return nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				add(n, "%q is not a boolean", n.Value)
			}
			return b
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil || i > math.MaxInt32 || i < math.MinInt32 {
				add(n, "%s is not a number a setting can hold", n.Value)
				return nil
			}
			return i
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxInt32 {
				add(n, "%s is not a number a setting can hold", n.Value)
				return nil
			}
			return f
		}
		add(n, "the tag %s is not allowed in a settings file", n.Tag)
		return nil
	}
	add(n, "unexpected YAML node")
	return nil
}

// leaves returns the validation errors that name a problem (the causes of the schema's
// wrapper errors), in a stable order.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// schemaProblem words one schema error at the line of its node: an unknown key at the key, any
// other error at the value it is about.
func schemaProblem(name string, root *yaml.Node, ve *jsonschema.ValidationError) Problem {
	where := strings.Join(ve.InstanceLocation, ".")
	node, key := locate(root, ve.InstanceLocation)
	if ap, ok := ve.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
		// One problem for the first unknown key; its siblings, if any, are named too.
		names := slices.Clone(ap.Properties)
		sort.Strings(names)
		k := keyNode(node, names[0])
		if k == nil {
			k = node
		}
		msg := fmt.Sprintf("unknown key %s", strings.Join(quoteAll(names), ", "))
		if where != "" {
			msg = where + ": " + msg
		}
		return Problem{name, k.Line, k.Column, msg + allowedKeys(ve.InstanceLocation)}
	}
	n := node
	if n == nil {
		n = key
	}
	if n == nil {
		n = root
	}
	msg := ve.ErrorKind.LocalizedString(printer)
	if where != "" {
		msg = where + ": " + msg
	}
	return Problem{name, n.Line, n.Column, msg}
}

// allowedKeys names the keys the schema allows at an object's location, for an unknown key's
// message.
func allowedKeys(loc []string) string {
	var keys []string
	switch strings.Join(loc, "/") {
	case "":
		keys = topKeys
	case "pull_request":
		keys = []string{"labels", "reviewers", "team_reviewers"}
	default:
		return ""
	}
	return " (allowed: " + strings.Join(keys, ", ") + ")"
}

var topKeys = []string{"label", "permission", "teams", "base_branch", "attempts", "model", "follow_ups", "ci_feedback", "protected_paths", "pull_request", "runs_per_day"}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

// locate follows a JSON pointer's tokens from the root node: it returns the value node and,
// for a location inside a mapping, the key node.
func locate(root *yaml.Node, tokens []string) (value, key *yaml.Node) {
	n := root
	for _, t := range tokens {
		switch n.Kind {
		case yaml.MappingNode:
			k := keyNode(n, t)
			if k == nil {
				return nil, nil
			}
			key = k
			n = valueOf(n, k)
		case yaml.SequenceNode:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil, key
			}
			n = n.Content[i]
		default:
			return nil, key
		}
	}
	return n, key
}

func keyNode(m *yaml.Node, name string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i]
		}
	}
	return nil
}

func valueOf(m, key *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i] == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// find returns the value node of a top-level key when it is a sequence, or nil.
func find(root *yaml.Node, name string) *yaml.Node {
	v, _ := locate(root, []string{name})
	if v == nil || v.Kind != yaml.SequenceNode {
		return nil
	}
	return v
}

// LabelOf is the trigger label a settings file names, read leniently: also from a file the
// schema refuses for another reason, so that a run its label asked for still starts and
// names the file's problems instead of being ignored. "": the file names none, or names one
// that is not a string of 1 to 50 characters, or cannot be read as YAML at all.
func LabelOf(data []byte) string {
	if len(data) > MaxSize {
		return ""
	}
	if s, err := Parse("", data); err == nil {
		if s.Label == nil {
			return ""
		}
		return *s.Label
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return ""
	}
	v, _ := locate(doc.Content[0], []string{"label"})
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		return ""
	}
	if n := utf8.RuneCountInString(v.Value); n < 1 || n > 50 {
		return ""
	}
	return v.Value
}

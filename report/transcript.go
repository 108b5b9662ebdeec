package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/frognano/frognano/internal/clip"
)

// knownTools are Leaf's five tools; any other name the model writes is shown as an
// unknown tool, its name in a code span.
var knownTools = map[string]bool{"Read": true, "Write": true, "Edit": true, "Glob": true, "Bash": true}

// CallArgument returns what a tool call acts on, exactly as the model wrote it: the
// command of a Bash call, the file of a Read, Write or Edit, the pattern of a Glob (and in
// where, the folder it searched, when given). For any other tool, or arguments without
// that field, it returns the raw arguments string.
func CallArgument(tool, arguments string) (arg, where string) {
	var m map[string]any
	if err := json.Unmarshal([]byte(arguments), &m); err != nil {
		return arguments, ""
	}
	str := func(keys ...string) (string, bool) {
		for _, k := range keys {
			if v, ok := m[k].(string); ok {
				return v, true
			}
		}
		return "", false
	}
	var ok bool
	switch tool {
	case "Read", "Write", "Edit":
		arg, ok = str("file_path", "path")
	case "Glob":
		arg, ok = str("pattern")
		where, _ = str("path")
	case "Bash":
		arg, ok = str("command")
	}
	if !ok {
		return arguments, ""
	}
	return arg, where
}

// ArgSummary is a one-line, plain-text form of a tool call's arguments for progress lines
// on a terminal: at most 80 characters, invisible characters written as code points. It is
// not markdown; renderers for GitHub use RenderCall.
func ArgSummary(tool, arguments string) string {
	if !knownTools[tool] {
		var m map[string]any
		if err := json.Unmarshal([]byte(arguments), &m); err == nil {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return plain(strings.Join(keys, ","), 80)
		}
	}
	arg, where := CallArgument(tool, arguments)
	if where != "" {
		arg += " in " + where
	}
	return plain(arg, 80)
}

// maxSpanArg is the longest argument shown in an inline code span; longer ones, and any
// with a line break or a tab, go into a code block.
const maxSpanArg = 160

// RenderCall renders one tool call as markdown for GitHub: the tool's name in bold (an
// unknown tool's name in a code span) and its argument (see CallArgument) exactly as the
// model wrote it, in a code span when it is one short line, else in a code block. An
// argument over max characters is cut, and the cut is said outside the code. redact, when
// not nil, is applied to the argument before anything is cut.
func RenderCall(tool, arguments string, max int, redact func(string) string) string {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	var b strings.Builder
	arg, where := CallArgument(tool, arguments)
	arg, where = redact(arg), redact(where)
	info := "text"
	if knownTools[tool] {
		fmt.Fprintf(&b, "**%s**", tool)
		if tool == "Bash" {
			info = "sh"
		}
	} else {
		b.WriteString("**Unknown tool** " + codeSpan(redact(tool), 60) + " with arguments")
		where = ""
	}
	if !knownTools[tool] || strings.ContainsAny(arg, "\n\r\t") || runeLen(arg) > maxSpanArg || arg == "" {
		cut, more := cutVisible(arg, max)
		b.WriteString("\n\n" + exactBlock(cut, info))
		if more > 0 {
			fmt.Fprintf(&b, "\n_… %d more characters; the whole call is in the trajectory kept with the run._\n", more)
		}
	} else {
		b.WriteString(" " + codeSpan(arg, 0))
		if where != "" {
			b.WriteString(" in " + codeSpan(where, 300))
			where = ""
		}
		b.WriteString("\n")
	}
	if where != "" {
		b.WriteString("\nin " + codeSpan(where, 300) + "\n")
	}
	return b.String()
}

// The transcript's parts, counted against the room the PR body leaves for it.
const (
	transcriptOpen  = "<details>\n<summary>Transcript (step by step)</summary>\n\n"
	transcriptClose = "\n</details>\n"
	transcriptCut   = "\n_The transcript was cut here to fit GitHub's 65,536-character limit; the full trajectory is kept with the run._\n"
	// maxCallArg is the most of one tool call's argument the transcript shows.
	maxCallArg = 3000
)

// transcript renders the steps as markdown within room characters; each observation is
// cut to a share of the room so that every step shows. When the steps do not all fit, it
// ends with a note saying where it was cut. Every untrusted string is redacted before it is
// cut.
func (x *render) transcript(room int) string {
	r := x.r
	if r.Leaf == nil || len(r.Leaf.Steps) == 0 {
		return "_(no steps)_\n"
	}
	steps := r.Leaf.Steps
	per := room / len(steps)
	obsCap := min(max(per-400, 200), 4000)
	var b strings.Builder
	used := 0 // characters written to b so far
	for _, s := range steps {
		var sb strings.Builder
		fmt.Fprintf(&sb, "**Step %d**", s.Index+1)
		if len(s.Assistant.ToolCalls) == 0 {
			sb.WriteString(" (final answer)")
		}
		sb.WriteString("\n\n")
		if c := strings.TrimSpace(s.Assistant.Text()); c != "" {
			c, more := cutVisible(x.redact(c), 1500)
			sb.WriteString(codeBlock(c, "text"))
			if more > 0 {
				fmt.Fprintf(&sb, "_… %d more characters._\n", more)
			}
			sb.WriteString("\n")
		}
		for i, tc := range s.Assistant.ToolCalls {
			sb.WriteString(RenderCall(tc.Function.Name, tc.Function.Arguments, maxCallArg, x.redact))
			sb.WriteString("\n")
			if i < len(s.Observations) {
				sb.WriteString(codeBlock(cutObservation(x.redact(s.Observations[i].Observation), obsCap), "text"))
				sb.WriteString("\n")
			}
		}
		step := sb.String()
		n := runeLen(step)
		if used+n+runeLen(transcriptCut) > room {
			b.WriteString(transcriptCut)
			return b.String()
		}
		b.WriteString(step)
		used += n
	}
	return b.String()
}

// cutObservation keeps the start of an observation that is too long for the PR body and
// says how much was left out.
func cutObservation(s string, n int) string {
	head, more := clip.Runes(s, n)
	if more == 0 {
		return s
	}
	return head + fmt.Sprintf("\n[… %d more characters cut to fit GitHub's limit; the full trajectory is kept with the run]", more)
}

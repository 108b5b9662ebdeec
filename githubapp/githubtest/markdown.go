package githubtest

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	rhtml "github.com/yuin/goldmark/renderer/html"
)

// gfm is a GitHub-flavoured markdown renderer: CommonMark with GitHub's extensions (tables,
// strikethrough, autolinks, task lists), raw HTML passed through as GitHub's renderer does
// before its sanitizer runs.
var gfm = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify, extension.TaskList),
	goldmark.WithRendererOptions(rhtml.WithUnsafe()),
)

// RenderMarkdown renders md as GitHub's markdown renderer would, before sanitizing: any raw
// HTML in md is still in the result, so a test can prove that none came from untrusted text.
func RenderMarkdown(md string) string {
	var b bytes.Buffer
	if err := gfm.Convert([]byte(md), &b); err != nil {
		panic("goldmark: " + err.Error()) // goldmark fails only on a failing writer
	}
	return b.String()
}

// ShowAsGitHub renders md and then sanitizes the HTML the way GitHub does, near enough for
// tests: comments are removed, elements outside GitHub's allowlist lose their tags (script,
// style and the like lose their content too), and attributes outside the allowlist, or
// links with a scheme other than http, https and mailto, are dropped. What is left is what
// a reader of the pull request or comment sees.
func ShowAsGitHub(md string) string { return sanitize(RenderMarkdown(md)) }

// TokenKind is the kind of one HTMLToken.
type TokenKind int

// The kinds of HTML token.
const (
	TextToken TokenKind = iota
	StartTagToken
	EndTagToken
	CommentToken
	DeclarationToken // <!DOCTYPE ...>, <?...?>, <![CDATA[...]]>
)

// HTMLToken is one token of an HTML fragment. Name is the lower-case tag name of a tag,
// Raw the token as written, and Text the unescaped text of a text token.
type HTMLToken struct {
	Kind       TokenKind
	Name, Raw  string
	Text       string
	Attributes map[string]string
}

var attrRE = regexp.MustCompile(`([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>` + "`" + `]+)))?`)

// Tokenize splits an HTML fragment into tags, comments and text, as a browser's tokenizer
// would for the HTML that markdown renderers write.
func Tokenize(s string) []HTMLToken {
	var out []HTMLToken
	text := func(t string) {
		if t == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Kind == TextToken {
			out[n-1].Raw += t
			out[n-1].Text = html.UnescapeString(out[n-1].Raw)
			return
		}
		out = append(out, HTMLToken{Kind: TextToken, Raw: t, Text: html.UnescapeString(t)})
	}
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			text(s)
			break
		}
		text(s[:i])
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "<!--"):
			end := strings.Index(s[4:], "-->")
			raw := s
			if end >= 0 {
				raw = s[:4+end+3]
			}
			out = append(out, HTMLToken{Kind: CommentToken, Raw: raw})
			s = s[len(raw):]
		case strings.HasPrefix(s, "<!") || strings.HasPrefix(s, "<?"):
			raw := s
			if end := strings.IndexByte(s, '>'); end >= 0 {
				raw = s[:end+1]
			}
			out = append(out, HTMLToken{Kind: DeclarationToken, Raw: raw})
			s = s[len(raw):]
		case len(s) > 1 && isLetter(s[1]) || len(s) > 2 && s[1] == '/' && isLetter(s[2]):
			end := tagEnd(s)
			raw := s[:end]
			t := HTMLToken{Kind: StartTagToken, Raw: raw}
			body := strings.TrimSuffix(strings.TrimPrefix(raw, "<"), ">")
			if strings.HasPrefix(body, "/") {
				t.Kind = EndTagToken
				body = body[1:]
			}
			n := 0
			for n < len(body) && !strings.ContainsRune(" \t\n\r\f/>", rune(body[n])) {
				n++
			}
			t.Name = strings.ToLower(body[:n])
			t.Attributes = map[string]string{}
			for _, m := range attrRE.FindAllStringSubmatch(body[n:], -1) {
				t.Attributes[strings.ToLower(m[1])] = html.UnescapeString(m[2] + m[3] + m[4])
			}
			out = append(out, t)
			s = s[end:]
		default:
			text("<")
			s = s[1:]
		}
	}
	return out
}

// tagEnd returns the length of the tag at the start of s, quoted attribute values
// included.
func tagEnd(s string) int {
	var quote byte
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return i + 1
		}
	}
	return len(s)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// allowedElements is GitHub's sanitizer allowlist (html-pipeline's), and the attributes it
// keeps on each (plus allowedAttributes on every element).
var allowedElements = map[string][]string{
	"a": {"href"}, "img": {"src", "longdesc"}, "div": {"itemscope", "itemtype"}, "blockquote": {"cite"},
	"del": {"cite"}, "ins": {"cite"}, "q": {"cite"}, "input": {"type", "checked", "disabled"},
	"h1": nil, "h2": nil, "h3": nil, "h4": nil, "h5": nil, "h6": nil, "h7": nil, "h8": nil, "br": nil,
	"b": nil, "i": nil, "strong": nil, "em": nil, "pre": nil, "code": nil, "tt": nil, "sup": nil,
	"sub": nil, "p": nil, "ol": nil, "ul": nil, "table": nil, "thead": nil, "tbody": nil, "tfoot": nil,
	"dl": nil, "dt": nil, "dd": nil, "kbd": nil, "samp": nil, "var": nil, "hr": nil, "ruby": nil,
	"rt": nil, "rp": nil, "li": nil, "tr": nil, "td": nil, "th": nil, "s": nil, "strike": nil,
	"summary": nil, "details": nil, "caption": nil, "figure": nil, "figcaption": nil, "abbr": nil,
	"bdo": nil, "cite": nil, "dfn": nil, "mark": nil, "small": nil, "span": nil, "time": nil, "wbr": nil,
}

var allowedAttributes = []string{"abbr", "align", "alt", "class", "colspan", "dir", "height", "id", "lang",
	"name", "open", "rowspan", "start", "summary", "title", "valign", "width"}

// droppedWithContent are removed together with everything inside them.
var droppedWithContent = map[string]bool{"script": true, "style": true, "textarea": true, "title": true,
	"iframe": true, "object": true, "embed": true, "template": true, "noscript": true, "select": true}

// sanitize approximates GitHub's HTML sanitizer on rendered markdown; see ShowAsGitHub.
func sanitize(s string) string {
	var b strings.Builder
	skip := ""
	for _, t := range Tokenize(s) {
		if skip != "" {
			if t.Kind == EndTagToken && t.Name == skip {
				skip = ""
			}
			continue
		}
		switch t.Kind {
		case TextToken:
			b.WriteString(t.Raw)
		case StartTagToken, EndTagToken:
			if droppedWithContent[t.Name] {
				if t.Kind == StartTagToken {
					skip = t.Name
				}
				continue
			}
			keep, ok := allowedElements[t.Name]
			if !ok {
				continue
			}
			if t.Kind == EndTagToken {
				b.WriteString("</" + t.Name + ">")
				continue
			}
			b.WriteString("<" + t.Name)
			for _, a := range append(append([]string{}, allowedAttributes...), keep...) {
				v, ok := t.Attributes[a]
				if !ok || (a == "href" || a == "src" || a == "longdesc" || a == "cite") && !safeURL(v) {
					continue
				}
				b.WriteString(" " + a + `="` + html.EscapeString(v) + `"`)
			}
			b.WriteString(">")
		}
	}
	return b.String()
}

func safeURL(u string) bool {
	l := strings.ToLower(strings.TrimSpace(u))
	i := strings.IndexAny(l, ":/?#")
	if i < 0 || l[i] != ':' {
		return true // relative
	}
	switch l[:i] {
	case "http", "https", "mailto":
		return true
	}
	return false
}

// VisibleText returns the text a reader sees in an HTML fragment: every text token,
// unescaped, without the tags.
func VisibleText(s string) string {
	var b strings.Builder
	for _, t := range Tokenize(s) {
		if t.Kind == TextToken {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// ElementTexts returns the visible text of every element named name in the fragment, in
// document order (an element nested in another of the same name is part of the outer one).
func ElementTexts(s, name string) []string {
	var out []string
	depth := 0
	var cur strings.Builder
	for _, t := range Tokenize(s) {
		switch {
		case t.Kind == StartTagToken && t.Name == name:
			depth++
		case t.Kind == EndTagToken && t.Name == name && depth > 0:
			depth--
			if depth == 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		case t.Kind == TextToken && depth > 0:
			cur.WriteString(t.Text)
		}
	}
	return out
}

// Labeled is the text of a bold label and of the first code element after it.
type Labeled struct {
	Label, Code string
	InBlock     bool // the code is a <pre> block (its text then ends with a newline)
	HasCode     bool
}

// LabeledCode returns every <strong> element's text with the text of the first <code>
// element that follows it before the next <strong>: how a renderer that writes "**Tool**"
// and then the tool's argument in code looks to a reader.
func LabeledCode(s string) []Labeled {
	var out []Labeled
	toks := Tokenize(s)
	for i := 0; i < len(toks); i++ {
		if toks[i].Kind != StartTagToken || toks[i].Name != "strong" {
			continue
		}
		var l Labeled
		j := i + 1
		for ; j < len(toks) && !(toks[j].Kind == EndTagToken && toks[j].Name == "strong"); j++ {
			if toks[j].Kind == TextToken {
				l.Label += toks[j].Text
			}
		}
		for k := j + 1; k < len(toks); k++ {
			t := toks[k]
			if t.Kind == StartTagToken && t.Name == "strong" {
				break
			}
			if t.Kind == StartTagToken && t.Name == "code" {
				l.HasCode = true
				l.InBlock = k > 0 && toks[k-1].Kind == StartTagToken && toks[k-1].Name == "pre"
				for m := k + 1; m < len(toks) && !(toks[m].Kind == EndTagToken && toks[m].Name == "code"); m++ {
					if toks[m].Kind == TextToken {
						l.Code += toks[m].Text
					}
				}
				break
			}
		}
		out = append(out, l)
	}
	return out
}

package web

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/frognano/frognano/githubapp"
	"github.com/frognano/frognano/internal/logging"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/style.css
var styleCSS []byte

// Observations longer than these are shown collapsed (<details>) with their first line.
const (
	collapseBytes = 1500
	collapseLines = 25
)

func parseTemplates() (*template.Template, error) {
	t, err := template.New("").Funcs(template.FuncMap{
		"inert":    inert,
		"dur":      durMS,
		"when":     when,
		"lines":    countLines,
		"long":     isLong,
		"firstln":  firstLine,
		"prettyjs": prettyJSON,
		"acc":      acceptanceCell,
		"ttm":      timeToMergeCell,
		"share":    shareCell,
		"perpr":    perPullCell,
		"tokens":   tokensCell,
		"capital":  capital,
		"labelx":   func() int { return labelWidth - 8 },
		"barx":     func() int { return labelWidth },
	}).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parsing the run page templates: %w", err)
	}
	return t, nil
}

func serveStyle(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, _ = w.Write(styleCSS)
}

// page is what every template gets.
type page struct {
	Title  string
	Nonce  string // the content security policy's nonce for this response's script
	Viewer string
	Data   any
}

// render writes template name with p, under a content security policy that allows the
// stylesheet and the script carrying p.Nonce only.
func (p *Pages) render(w http.ResponseWriter, r *http.Request, status int, name string, pg page) {
	if pg.Nonce == "" {
		pg.Nonce = nonce()
	}
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, pg); err != nil {
		p.cfg.Logger.ErrorContext(r.Context(), "rendering a run page", "template", name, logging.Err(err))
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; connect-src 'self'; "+
		"script-src 'nonce-"+pg.Nonce+"'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fragment renders template name with data to a string, for an event stream.
func (p *Pages) fragment(name string, data any) (string, error) {
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		return "", fmt.Errorf("rendering %s: %w", name, err)
	}
	return buf.String(), nil
}

func nonce() string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return base64.RawStdEncoding.EncodeToString(b[:])
}

// inert is untrusted text as a page shows it: secrets redacted, invalid UTF-8 replaced, and
// the characters that could make it read differently from what it is shown as visible
// markers: bidirectional controls (the "Trojan Source" trick), zero-width characters, and
// control characters other than newline and tab. html/template escapes the rest.
func inert(s string) string {
	s = githubapp.Redact(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	clean := true
	for _, c := range s {
		if hidden(c) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		if hidden(c) {
			fmt.Fprintf(&b, "[U+%04X]", c)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func hidden(c rune) bool {
	switch {
	case c == '\n' || c == '\t':
		return false
	case c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0):
		return true
	case c >= 0x202a && c <= 0x202e, c >= 0x2066 && c <= 0x2069, c == 0x200e, c == 0x200f, c == 0x061c:
		return true // bidirectional controls
	case c == 0x200b || c == 0x200c || c == 0x200d || c == 0x2060 || c == 0xfeff:
		return true // zero-width
	}
	return unicode.Is(unicode.Cf, c) && c != 0xad
}

func durMS(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d <= 0:
		return "0 s"
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func when(t any) string {
	switch v := t.(type) {
	case time.Time:
		if v.IsZero() {
			return ""
		}
		return v.UTC().Format("2006-01-02 15:04:05 UTC")
	case *time.Time:
		if v == nil {
			return ""
		}
		return v.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return ""
}

// capital is s with its first letter in upper case: a fact's label as a heading.
func capital(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func countLines(s string) int { return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1 }

func isLong(s string) bool { return len(s) > collapseBytes || countLines(s) > collapseLines }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
		s = strings.ToValidUTF8(s, "")
	}
	return s
}

// prettyJSON indents a tool call's arguments when they are a JSON object, else returns them
// as the model wrote them.
func prettyJSON(s string) string {
	var buf bytes.Buffer
	if json.Valid([]byte(s)) && json.Indent(&buf, []byte(s), "", "  ") == nil {
		// json.Indent keeps \u escapes as written, so hidden characters stay escaped.
		return buf.String()
	}
	return s
}

// diffLine is one line of the patch with its kind for the stylesheet.
type diffLine struct {
	Class, Text string
}

// maxDiffLines bounds the patch shown on the page; the rest is counted.
const maxDiffLines = 5000

func diffLines(patch []byte) (lines []diffLine, more int) {
	if len(patch) == 0 {
		return nil, 0
	}
	all := strings.Split(strings.TrimRight(string(patch), "\n"), "\n")
	if len(all) > maxDiffLines {
		more = len(all) - maxDiffLines
		all = all[:maxDiffLines]
	}
	for _, l := range all {
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "diff --git"), strings.HasPrefix(l, "index "), strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
			c = "file"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		lines = append(lines, diffLine{Class: c, Text: l})
	}
	return lines, more
}

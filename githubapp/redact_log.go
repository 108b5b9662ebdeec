package githubapp

import (
	"context"
	"fmt"
	"log/slog"
)

// RedactLogs returns a handler that hands every record to h with Redact applied to its
// message and to the text of each attribute (RedactRun to an error's) (strings, errors, Stringers, byte slices, groups
// and whatever else prints), so that no log line carries a secret, whatever a caller put in
// it. It is the one place log lines are redacted: a log call never calls Redact itself. A
// handler RedactLogs already made is returned as it is (its records are not redacted twice).
func RedactLogs(h slog.Handler) slog.Handler {
	if r, ok := h.(redactingHandler); ok {
		return r
	}
	return redactingHandler{h}
}

type redactingHandler struct{ h slog.Handler }

func (r redactingHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redactingHandler{r.h.WithAttrs(red)}
}

func (r redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{r.h.WithGroup(name)}
}

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		red := make([]slog.Attr, len(group))
		for i, g := range group {
			red[i] = redactAttr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			// An error may quote what the sandbox printed (git's, the tests', a scanner's
			// output): gitleaks' rules too, as for every text of a run (RedactRun). Errors
			// are few among log lines; the rest keep the cheaper Redact.
			return slog.String(a.Key, RedactRun(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, Redact(x.String()))
		case []byte:
			s = string(x) // the text handler prints a byte slice as its text
		default:
			s = fmt.Sprintf("%+v", x)
		}
		// Other values (structs, maps, slices) keep their shape unless their text holds a
		// secret; then only their redacted text is logged.
		if r := Redact(s); r != s {
			return slog.String(a.Key, r)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

package config

import (
	"fmt"
	"reflect"
	"strings"
)

// Var is what the declaration of one variable says of it, for the documents and their test.
type Var struct {
	// Name is the environment variable.
	Name string
	// Default is the default as docs/configuration.md's table writes it: a value in
	// backquotes, which the variable's parser reads as exactly its default (IsDefault), or
	// words for a default that is not one value ("(required)", "the host name"), or "" for
	// none (unset means not set: no key, no scanners).
	Default string
	// Doc is one line saying what the variable sets.
	Doc string
	// Secret: the value is a credential, never quoted in an error or a log line.
	Secret bool

	isDefault func(value string) error // nil unless Default is a value
}

// IsDefault reports whether value, read by the variable's own parser, gives exactly its
// default: nil, or what it gives instead. It fails for a variable whose default is not one
// value.
func (v Var) IsDefault(value string) error {
	if v.isDefault == nil {
		return fmt.Errorf("%s's default is not a value (%q)", v.Name, v.Default)
	}
	return v.isDefault(value)
}

// setting is a declared variable and how to read it: its typed default and its parser, which
// falls back to the default, and records the problem, when the value is bad.
type setting[T any] struct {
	*Var
	def  T
	read func(e *env, name string, def T) T
}

// get reads the variable, or gives its declared default.
func (s setting[T]) get(e *env) T { return s.read(e, s.Name, s.def) }

// or reads the variable, or gives def: for a default that is worked out at start (words in
// the documents), such as the host name or what the host's memory holds.
func (s setting[T]) or(e *env, def T) T { return s.read(e, s.Name, def) }

// raw is the value exactly as set: for the callers that only ask whether it is set, and for
// docker-proxy, which reads FROGNANO_SETUP_NETWORK as a list of its own.
func (s setting[T]) raw(e *env) string { return e.Raw(s.Name) }

// declared is every variable, in the order of their declarations (vars.go).
var declared []*Var

// declare records a variable once: its name, its default (typed, and as the documents write
// it), its parser and its line of documentation.
func declare[T any](name string, def T, docDefault, doc string, read func(e *env, name string, def T) T) setting[T] {
	return declareApplied(name, def, def, docDefault, doc, read)
}

// declareApplied is declare for a variable whose unset value (def, the zero value) is passed
// on as it is, and the package that takes it applies its own default, applied: the documents
// give that one (GITHUB_URL, githubapp.DefaultURL), and IsDefault compares with it.
func declareApplied[T any](name string, def, applied T, docDefault, doc string, read func(e *env, name string, def T) T) setting[T] {
	v := &Var{Name: name, Default: docDefault, Doc: doc}
	if isValue(docDefault) {
		v.isDefault = func(value string) error {
			e := newEnv(func(k string) string {
				if k == name {
					return value
				}
				return ""
			})
			got := read(e, name, def)
			if err := e.Err(); err != nil {
				return err
			}
			if !reflect.DeepEqual(got, applied) {
				return fmt.Errorf("%s=%s reads as %v; its default is %v", name, value, got, applied)
			}
			return nil
		}
	}
	declared = append(declared, v)
	return setting[T]{Var: v, def: def, read: read}
}

// isValue reports whether a documented default is one value in backquotes, not words.
func isValue(doc string) bool {
	return len(doc) >= 2 && doc[0] == '`' && doc[len(doc)-1] == '`' && !strings.Contains(doc[1:len(doc)-1], "`")
}

// secret marks a declared variable as a credential.
func secret[T any](s setting[T]) setting[T] {
	s.Secret = true
	return s
}

// Vars is every declared variable, in the order of their declarations.
func Vars() []Var {
	out := make([]Var, len(declared))
	for i, v := range declared {
		out[i] = *v
	}
	return out
}

// Lookup is name's declaration.
func Lookup(name string) (Var, bool) {
	for _, v := range declared {
		if v.Name == name {
			return *v, true
		}
	}
	return Var{}, false
}

package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// env reads variables through a getenv function passed in (os.Getenv, or a map's lookup in
// tests) and collects their problems, so that one start reports all of them. Only the readers
// of numbers, durations, booleans and sizes quote what they were given, and no secret is one
// of those; String, Raw and Secret never complain about a value. A reader that finds a problem
// itself adds it with Add, and must hold to the same rule. The zero value is not usable: use
// newEnv.
type env struct {
	getenv func(string) string
	errs   []error
}

func newEnv(getenv func(string) string) *env { return &env{getenv: getenv} }

// Raw is name's value exactly as set, "" when unset.
func (e *env) Raw(name string) string { return e.getenv(name) }

// Secret is Raw for a secret (a token, a key, a webhook secret): its value is never quoted.
func (e *env) Secret(name string) string { return e.getenv(name) }

// String is name's value without surrounding white space, or def when that is empty.
func (e *env) String(name, def string) string {
	if v := strings.TrimSpace(e.getenv(name)); v != "" {
		return v
	}
	return def
}

// Int is name's value as a non-negative integer, or def when unset; a bad value is a problem.
func (e *env) Int(name string, def int) int {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		e.Add(fmt.Errorf("%s=%q is not a non-negative integer", name, v))
		return def
	}
	return n
}

// Int64 is Int for a 64-bit value (an id).
func (e *env) Int64(name string, def int64) int64 {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		e.Add(fmt.Errorf("%s=%q is not a non-negative integer", name, v))
		return def
	}
	return n
}

// Float is name's value as a non-negative number, or def when unset.
func (e *env) Float(name string, def float64) float64 {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 {
		e.Add(fmt.Errorf("%s=%q is not a non-negative number", name, v))
		return def
	}
	return f
}

// Duration is name's value as a non-negative duration such as 45m, or def when unset.
func (e *env) Duration(name string, def time.Duration) time.Duration {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		e.Add(fmt.Errorf("%s=%q is not a duration such as 45m or 90s", name, v))
		return def
	}
	return d
}

// Bool is name's value as true or false (strconv.ParseBool's spellings), or def when unset.
func (e *env) Bool(name string, def bool) bool {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		e.Add(fmt.Errorf("%s=%q is not true or false", name, v))
		return def
	}
	return b
}

// Bytes is name's value as a size (ParseBytes), or def when unset.
func (e *env) Bytes(name string, def int64) int64 {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := ParseBytes(v)
	if err != nil {
		e.Add(fmt.Errorf("%s=%q: %v", name, v, err))
		return def
	}
	return n
}

// Add records a problem the caller found; it must not quote a secret.
func (e *env) Add(err error) {
	if err != nil {
		e.errs = append(e.errs, err)
	}
}

// Err is every problem found so far, joined; nil when there is none.
func (e *env) Err() error { return errors.Join(e.errs...) }

// ParseBytes reads sizes such as 4g, 512m, 1GiB or a plain byte count (positive).
func ParseBytes(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gib", 1 << 30}, {"mib", 1 << 20}, {"kib", 1 << 10}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"b", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("not a size such as 4g, 512m or a byte count")
	}
	return n * mult, nil
}

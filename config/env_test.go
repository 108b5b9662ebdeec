package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func lookup(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestReadersAndDefaults(t *testing.T) {
	t.Parallel()
	e := newEnv(lookup(map[string]string{
		"S": "  text ", "I": " 7", "I64": "12", "F": "0.5", "D": "90s", "B": "true", "SZ": "4g",
		"TOKEN": " secret ",
	}))
	if got := e.String("S", "def"); got != "text" {
		t.Errorf("String = %q", got)
	}
	if got := e.String("UNSET", "def"); got != "def" {
		t.Errorf("String of an unset variable = %q, want its default", got)
	}
	if got := e.Secret("TOKEN"); got != " secret " {
		t.Errorf("Secret = %q, want the value as set", got)
	}
	if got := e.Int("I", 1); got != 7 {
		t.Errorf("Int = %d", got)
	}
	if got := e.Int64("I64", 1); got != 12 {
		t.Errorf("Int64 = %d", got)
	}
	if got := e.Float("F", 1); got != 0.5 {
		t.Errorf("Float = %v", got)
	}
	if got := e.Duration("D", time.Second); got != 90*time.Second {
		t.Errorf("Duration = %v", got)
	}
	if got := e.Bool("B", false); !got {
		t.Errorf("Bool = %v", got)
	}
	if got := e.Bytes("SZ", 1); got != 4<<30 {
		t.Errorf("Bytes = %d", got)
	}
	if got := e.Int("UNSET", 3); got != 3 {
		t.Errorf("Int of an unset variable = %d, want its default", got)
	}
	if err := e.Err(); err != nil {
		t.Errorf("Err = %v, want none", err)
	}
}

// TestEveryProblemAtOnce: one start names every bad value, each falling back to its default.
func TestEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(lookup(map[string]string{
		"I": "two", "I64": "-1", "F": "-0.5", "D": "soon", "B": "maybe", "SZ": "lots",
	}))
	if e.Int("I", 1) != 1 || e.Int64("I64", 2) != 2 || e.Float("F", 3) != 3 || e.Duration("D", 4) != 4 || e.Bool("B", true) != true || e.Bytes("SZ", 5) != 5 {
		t.Error("a bad value did not fall back to the default")
	}
	e.Add(errors.New("X is wrong"))
	e.Add(nil)
	err := e.Err()
	for _, want := range []string{
		`I="two" is not a non-negative integer`, `I64="-1" is not a non-negative integer`,
		`F="-0.5" is not a non-negative number`, `D="soon" is not a duration`,
		`B="maybe" is not true or false`, `SZ="lots": not a size`, "X is wrong",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Err() = %v, want it to say %q", err, want)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 7 {
		t.Errorf("Err() has %d lines, want 7: %v", n, err)
	}
}

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4g", 4 << 30, true}, {"512m", 512 << 20, true}, {"1GiB", 1 << 30, true}, {" 2 kb ", 2 << 10, true},
		{"100", 100, true}, {"100b", 100, true},
		{"0", 0, false}, {"-1g", 0, false}, {"g", 0, false}, {"4t", 0, false}, {"", 0, false},
	} {
		got, err := ParseBytes(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

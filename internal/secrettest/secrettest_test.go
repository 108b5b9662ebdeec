package secrettest

import (
	"strings"
	"testing"
)

func TestMadeUp(t *testing.T) {
	a, b := MadeUp(t, "AB", 64), MadeUp(t, "AB", 64)
	if len(a) != 64 || strings.Trim(a, "AB") != "" || a == b {
		t.Errorf("MadeUp gave %q and %q: want 64 random characters of the alphabet each", a, b)
	}
}

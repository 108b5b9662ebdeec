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

func TestAWSKey(t *testing.T) {
	for range 200 {
		k := AWSKey(t)
		if len(k) != 20 || !strings.HasPrefix(k, "AKIA") || strings.Trim(k[4:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" || Entropy(k) <= 3.6 {
			t.Fatalf("AWSKey gave %q (entropy %.2f): want AKIA and 16 of A-Z, 2-7, above 3.6 bits a character", k, Entropy(k))
		}
	}
	if e := Entropy("aaaa"); e != 0 {
		t.Errorf("Entropy(aaaa) = %v, want 0", e)
	}
	if e := Entropy("abcd"); e != 2 {
		t.Errorf("Entropy(abcd) = %v, want 2", e)
	}
}

package gocmp

import "testing"

func TestSameInAnyOrder(t *testing.T) {
	if !Same([]string{"b", "a"}, []string{"a", "b"}) {
		t.Error("the same words in another order are not the same")
	}
}

func TestDifferentWords(t *testing.T) {
	if Same([]string{"a"}, []string{"b"}) {
		t.Error("different words are the same")
	}
}

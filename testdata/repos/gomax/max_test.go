package gomax

import "testing"

func TestMaxPositive(t *testing.T) {
	if got := Max([]int{3, 9, 4}); got != 9 {
		t.Fatalf("Max = %d, want 9", got)
	}
}

func TestMaxNegative(t *testing.T) {
	if got := Max([]int{-3, -1, -2}); got != -1 {
		t.Fatalf("Max = %d, want -1", got)
	}
}

func TestMin(t *testing.T) {
	if got := Min([]int{3, -9, 4}); got != -9 {
		t.Fatalf("Min = %d, want -9", got)
	}
}

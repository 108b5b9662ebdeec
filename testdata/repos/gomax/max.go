// Package gomax finds extremes of integer slices.
package gomax

// Max returns the largest element of xs. It panics on an empty slice.
func Max(xs []int) int {
	m := 0
	for _, x := range xs {
		if x > m {
			m = x
		}
	}
	return m
}

// Min returns the smallest element of xs. It panics on an empty slice.
func Min(xs []int) int {
	m := xs[0]
	for _, x := range xs[1:] {
		if x < m {
			m = x
		}
	}
	return m
}

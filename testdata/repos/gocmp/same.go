// Package gocmp compares word lists with go-cmp, a module that only setup can download.
package gocmp

import "github.com/google/go-cmp/cmp"

// Same reports whether a and b hold the same words, in any order.
func Same(a, b []string) bool {
	return cmp.Equal(a, b)
}

package auth_test

import (
	"fmt"

	"github.com/frognano/frognano/web/auth"
)

// SafeNext keeps the page to return to after sign-in on this site.
func ExampleSafeNext() {
	for _, next := range []string{"/runs/5", "", "//evil.example", "/\\evil.example", "https://evil.example/"} {
		got, err := auth.SafeNext(next)
		fmt.Printf("%q -> %q %v\n", next, got, err != nil)
	}
	// Output:
	// "/runs/5" -> "/runs/5" false
	// "" -> "/runs" false
	// "//evil.example" -> "" true
	// "/\\evil.example" -> "" true
	// "https://evil.example/" -> "" true
}

//go:build !linux

package executor

import (
	"errors"
	"os"
)

// Harden is only implemented on Linux, where the sandbox runs; see harden_linux.go.
func Harden() (in, out *os.File, err error) {
	return nil, nil, errors.New("the executor can only be hardened on Linux")
}

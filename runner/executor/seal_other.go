//go:build !linux

package executor

import (
	"context"
	"errors"
)

// run is only implemented on Linux, where setup containers run; see seal_linux.go.
func (s *sealer) run(context.Context, string) error {
	return errors.New("the seal check runs on Linux only")
}

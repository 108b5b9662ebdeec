package fault_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/frognano/frognano/internal/fault"
)

func TestWait(t *testing.T) {
	t.Parallel()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"Waited", context.Background(), time.Millisecond, nil},
		{"NothingToWait", context.Background(), 0, nil},
		{"NegativeIsNothing", context.Background(), -time.Second, nil},
		{"CancelledEndsTheWait", done, time.Hour, context.Canceled},
		{"CancelledWithNothingToWait", done, 0, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := fault.Wait(tt.ctx, tt.d); !errors.Is(err, tt.want) {
				t.Errorf("Wait(%s) = %v, want %v", tt.d, err, tt.want)
			}
		})
	}
}

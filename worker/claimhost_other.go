//go:build !unix

package worker

import "context"

// hostSlots has no lock files here: the claim bound holds within the process only.
type hostSlots struct{}

func openHostSlots(string, int) *hostSlots { return nil }

func (*hostSlots) acquire(context.Context) (func(), error) { return func() {}, nil }

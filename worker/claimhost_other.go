//go:build !unix

package worker

import "context"

// hostSlots has no lock files here: the claim bound holds within the process only.
type hostSlots struct{}

func openHostSlots(string, int) (*hostSlots, error) { return nil, nil }

func (*hostSlots) acquire(context.Context) (func(), error) { return func() {}, nil }

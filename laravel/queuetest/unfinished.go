package queuetest

import (
	"testing"

	"github.com/artisan-go/artisan-go/laravel"
)

func init() {
	// UnfinishedUntilCommitted: a job is unfinished while it waits and while it runs, and no longer once
	// its completion returned, whether the strategy deletes the row or marks it.
	register("UnfinishedUntilCommitted", Options{}, func(t *testing.T, s *Setup) {
		unfinished := func(queue string) bool {
			t.Helper()
			ok, err := s.Conn.JobUnfinishedExists(bg, &laravel.JobUnfinishedExistsParams{Queue: queue})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if unfinished("") {
			t.Fatal("an empty table has an unfinished job")
		}
		s.Push(t, "default", t0, t0, 1)
		s.Push(t, "other", t0, t0, 2)
		if !unfinished("default") || !unfinished("") {
			t.Fatal("a waiting job is not unfinished")
		}
		j := s.Claim(t, s.Queue, "default", t0, 90)
		if !unfinished("default") {
			t.Fatal("a running job is not unfinished")
		}
		if err := s.Queue.JobDelete(bg, j); err != nil {
			t.Fatal(err)
		}
		if unfinished("default") {
			t.Fatal("a job whose completion returned is still unfinished")
		}
		if !unfinished("") {
			t.Fatal("the other queue's waiting job is not unfinished")
		}
	})
}

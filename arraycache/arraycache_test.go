package arraycache

import (
	"context"
	"testing"
	"time"
)

// clock is a settable time for expiries.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestValues(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	s := New(c.now)
	if err := s.CachePut(ctx, "k", "s:1:\"v\";", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if added, _ := s.CacheAdd(ctx, "k", "i:1;", time.Second); added {
		t.Fatal("add over a live value")
	}
	c.t = c.t.Add(2 * time.Second)
	if _, ok, _ := s.CacheGet(ctx, "k"); ok {
		t.Fatal("a value read at its expiry")
	}
	if added, _ := s.CacheAdd(ctx, "k", "i:1;", 0); !added {
		t.Fatal("add over an expired value refused")
	}
	// Increment keeps the time left; an absent key starts at by, forever.
	if n, _ := s.CacheIncrement(ctx, "k", 4); n != 5 {
		t.Fatalf("increment: %d, want 5", n)
	}
	if n, _ := s.CacheIncrement(ctx, "new", 3); n != 3 {
		t.Fatalf("increment of an absent key: %d, want 3", n)
	}
	c.t = c.t.Add(time.Hour)
	if v, ok, _ := s.CacheGet(ctx, "k"); !ok || v != "i:5;" {
		t.Fatalf("forever value %q %v, want i:5;", v, ok)
	}
	// maxExceptions' count: 0 put for the ttl when nothing true is there, then one added.
	for want := int64(1); want <= 2; want++ {
		if n, _ := s.CacheCount(ctx, "job-exceptions:u", time.Minute); n != want {
			t.Fatalf("count %d, want %d", n, want)
		}
	}
	c.t = c.t.Add(time.Minute)
	if n, _ := s.CacheCount(ctx, "job-exceptions:u", time.Minute); n != 1 {
		t.Fatalf("count after its ttl %d, want 1", n)
	}
	if err := s.CacheForget(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.CacheGet(ctx, "k"); ok {
		t.Fatal("a forgotten key read")
	}
}

func TestLocks(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	s := New(c.now)
	if ok, _ := s.LockAcquire(ctx, "l", "a", 10); !ok {
		t.Fatal("a free lock refused")
	}
	if ok, _ := s.LockAcquire(ctx, "l", "b", 10); ok {
		t.Fatal("a held lock taken")
	}
	if ok, _ := s.LockRelease(ctx, "l", "b"); ok {
		t.Fatal("released by another owner")
	}
	c.t = c.t.Add(10 * time.Second)
	if held, _ := s.LockHeld(ctx, "l"); held {
		t.Fatal("an expired lock held")
	}
	if ok, _ := s.LockAcquire(ctx, "l", "b", 0); !ok {
		t.Fatal("an expired lock refused")
	}
	c.t = c.t.Add(24 * time.Hour)
	if ok, _ := s.LockAcquire(ctx, "l", "a", 10); ok {
		t.Fatal("a lock taken without expiry was taken again")
	}
	if ok, _ := s.LockRelease(ctx, "l", "b"); !ok {
		t.Fatal("its owner could not release it")
	}
	if ok, _ := s.LockAcquire(ctx, "l", "a", 10); !ok {
		t.Fatal("a released lock refused")
	}
	if err := s.ForceRelease(ctx, "l"); err != nil {
		t.Fatal(err)
	}
	if held, _ := s.LockHeld(ctx, "l"); held {
		t.Fatal("held after a force release")
	}
}

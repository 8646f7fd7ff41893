package worker

import (
	"testing"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

func TestIDSetForgetsLowestFirst(t *testing.T) {
	s := newIDSet(2)
	for _, id := range []int64{1, 5000, 4095} {
		if s.seen(id) {
			t.Fatalf("id %d seen before it was added", id)
		}
	}
	if !s.seen(1) || !s.has(5000) || s.has(2) {
		t.Fatal("set lost an id or holds one never added")
	}
	s.seen(9000) // a third chunk: the lowest (ids 0–4095) goes
	if s.has(1) || s.has(4095) || !s.has(5000) || !s.has(9000) {
		t.Fatal("the chunk of the lowest ids was not the one forgotten")
	}
}

// TestLeftAheadPages: leftAhead reads past its first page of ids to the first row the worker has not
// seen, and says allLeft only once it has read them all; on the second of two queues too.
func TestLeftAheadPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.SQLite(t))
	w := f.worker(t, func(c *Config) { c.Queues = []string{"high", "default"} })
	w.leftPage = 7
	body := envelope(t, jobClass, "", nil)
	for range 20 {
		w.leftBefore.seen(f.push(t, "high", body))
	}
	for range 20 {
		w.leftBefore.seen(f.push(t, "default", body))
	}
	if next, allLeft := w.leftAhead(bg); next != 0 || !allLeft {
		t.Fatalf("leftAhead = %d, %v over 40 rows all left; want 0, true", next, allLeft)
	}
	own := f.push(t, "default", body)
	if next, allLeft := w.leftAhead(bg); next != own || allLeft {
		t.Fatalf("leftAhead = %d, %v; want the row %d behind the 40 left, false", next, allLeft, own)
	}
}

//go:build unix

package worker

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestHostSlotsAcrossProcesses opens one scope's lock files twice, as two processes do (each opening
// has descriptors of its own, which flock tells apart): between them no more slots are held than there
// are files, a freed slot is the other's to take, and a wait ends with its context.
func TestHostSlotsAcrossProcesses(t *testing.T) {
	t.Parallel()
	scope := testenv.Name("hostslots")
	a, errA := openHostSlots(scope, 2)
	b, errB := openHostSlots(scope, 2)
	if errA != nil || errB != nil {
		t.Fatalf("open the lock files in the temporary directory: %v, %v", errA, errB)
	}
	ctx := context.Background()
	releaseA1, err := a.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	releaseA2, err := a.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.try() != nil {
		t.Fatal("a third slot was taken where there are two")
	}
	waiting, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := b.acquire(waiting); err == nil {
		t.Fatal("acquire returned a slot while both were held")
	}
	releaseA1()
	releaseB, err := b.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.try() != nil {
		t.Fatal("a slot was taken again while the other opening held it")
	}
	releaseB()
	releaseA2()
	// The wait that ended with its context takes its slot when it comes and frees it at once: each
	// opening gets both slots again, waiting for that at most.
	for _, h := range []*hostSlots{a, b} {
		var releases []func()
		for range 2 {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			r, err := h.acquire(ctx)
			cancel()
			if err != nil {
				t.Fatalf("a slot stayed taken after every release: %v", err)
			}
			releases = append(releases, r)
		}
		for _, r := range releases {
			r()
		}
	}
}

// TestClaimBoundWithoutLockFilesWarns points the temporary directory at a file, where no lock file can
// be made: the worker says so once, naming the fix, and runs every job with the bound of its process.
func TestClaimBoundWithoutLockFilesWarns(t *testing.T) {
	// Not parallel: it sets TMPDIR for the process.
	file := filepath.Join(t.TempDir(), "not-a-directory")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := newStrategyFixture(t, testenv.Apart(t, testenv.Postgres(t)), "delete-mark")
	t.Setenv("TMPDIR", file)
	seen := f.countRuns(jobClass)
	const jobs = 40
	for range jobs {
		f.push(t, "default", envelope(t, jobClass, "", nil))
	}
	var log lockedLog
	for range 2 {
		cfg := Defaults()
		cfg.Concurrency, cfg.StopWhenEmpty, cfg.Timeout = 8, true, 0
		w, err := New(Params{Queue: f.Queue, Conn: f.Conn, Registry: f.reg, Config: cfg, Clock: f.clock.Now,
			Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	seen.wantEachOnce(t, jobs)
	out := log.String()
	if n := strings.Count(out, "lock files cannot be opened"); n != 1 {
		t.Fatalf("the warning was logged %d times, want once per process and scope:\n%s", n, out)
	}
	if !strings.Contains(out, "TMPDIR") || !strings.Contains(out, "not a directory") {
		t.Fatalf("the warning names neither the fix nor the cause:\n%s", out)
	}
}

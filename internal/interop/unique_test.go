package interop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
)

// TestGoReleasesUniqueLocks runs ShouldBeUnique jobs under Go with the lock in the database cache store,
// in Redis and in files: while a job is queued PHP refuses a second dispatch; after Go ran it (or failed it),
// PHP accepts one again.
func TestGoReleasesUniqueLocks(t *testing.T) {
	t.Parallel()
	for _, store := range stores {
		t.Run(store.name, func(t *testing.T) {
			t.Parallel()
			testenv.Each(t, func(t *testing.T, db testenv.Database) {
				ctx := testContext(t)
				s := newSide(t, db, store.opts...)
				if s.cfg.Cache.Store != store.name {
					t.Fatalf("the app's cache store reads as %q, want %q", s.cfg.Cache.Store, store.name)
				}
				s.registerMirrors()
				for _, key := range []string{"a", "b"} {
					if d := s.app.MustDispatch(ctx, "unique", phpapp.Key(key)); len(d.Jobs) != 1 {
						t.Fatalf("unique %s: PHP queued %d jobs", key, len(d.Jobs))
					}
					if d := s.app.MustDispatch(ctx, "unique", phpapp.Key(key)); len(d.Jobs) != 0 {
						t.Fatalf("unique %s: PHP accepted a second dispatch while the first is queued", key)
					}
				}
				if st := s.drain(t, ctx, nil); st.Processed != 2 {
					t.Fatalf("Go stats %+v, want 2 processed", st)
				}
				for _, key := range []string{"a", "b"} {
					if d := s.app.MustDispatch(ctx, "unique", phpapp.Key(key)); len(d.Jobs) != 1 {
						t.Errorf("unique %s: after Go ran it, PHP's dispatch queued %d jobs: the lock was not released", key, len(d.Jobs))
					}
				}
			})
		})
	}
}

// TestGoReleasesPlainUniqueLock runs a ShouldBeUnique job with no uniqueId and no uniqueFor, whose
// payload does not say it is unique, under a Go handler that does not say so either, with the lock in
// each cache store: after Go ran it, PHP accepts a new dispatch, as after PHP's worker.
func TestGoReleasesPlainUniqueLock(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, s *side) {
		s.reg.Register(`App\Jobs\UniquePlain`, s.record(nil))
		for round := range 2 {
			if d := s.app.MustDispatch(ctx, "unique-plain"); len(d.Jobs) != 1 {
				t.Fatalf("round %d: PHP queued %d jobs, want 1: the lock of the job before was not released", round, len(d.Jobs))
			}
			if d := s.app.MustDispatch(ctx, "unique-plain"); len(d.Jobs) != 0 {
				t.Fatalf("round %d: PHP accepted a second dispatch while the first is queued", round)
			}
			if st := s.drain(t, ctx, nil); st.Processed != 1 {
				t.Fatalf("round %d: Go stats %+v, want 1 processed", round, st)
			}
		}
	})
}

// TestGoDispatchTakesUniqueLocks dispatches ShouldBeUnique jobs with `queue:push --unique` beside
// PHP's dispatch(), with the lock in every cache store: each refuses the other's duplicate while the
// job is queued, PHP's worker runs Go's job and releases its lock, and both may dispatch again.
func TestGoDispatchTakesUniqueLocks(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, s *side) {
		push := func(key string) string {
			t.Helper()
			out, errOut, code := goArtisan(ctx, s.app, "", "queue:push", `App\Jobs\Unique`, "--prop", "key="+key, "--prop", "uniqueFor=3600",
				"--unique", "--unique-id", key)
			if code != 0 {
				t.Fatalf("queue:push --unique %s: exit %d: %s%s", key, code, out, errOut)
			}
			return out
		}
		phpQueued := func(key string) int {
			t.Helper()
			return len(s.app.MustDispatch(ctx, "unique", phpapp.Key(key)).Jobs)
		}
		if out := push("a"); !strings.HasPrefix(out, "Pushed ") {
			t.Fatalf("first push: %s", out)
		}
		if out := push("a"); !strings.HasPrefix(out, "Not pushed: ") {
			t.Fatalf("second push while the first is queued: %s", out)
		}
		if n := phpQueued("a"); n != 0 {
			t.Fatalf("PHP queued %d jobs while Go's holds the lock", n)
		}
		if n := phpQueued("b"); n != 1 {
			t.Fatalf("PHP queued %d jobs of another key", n)
		}
		if out := push("b"); !strings.HasPrefix(out, "Not pushed: ") {
			t.Fatalf("Go pushed while PHP's job holds the lock: %s", out)
		}
		s.phpDrain(t, ctx)
		if ran := byClass(s.log(t, ctx))[`App\Jobs\Unique`]; len(ran) != 2 {
			t.Fatalf("PHP ran %d unique jobs, want Go's and its own", len(ran))
		}
		if out := push("a"); !strings.HasPrefix(out, "Pushed ") {
			t.Fatalf("push after PHP ran Go's job: %s (the lock was not released)", out)
		}
		if n := phpQueued("b"); n != 1 {
			t.Fatalf("PHP queued %d jobs after its own ran", n)
		}
	})
}

// TestGoReleasesUniqueViaLock runs a ShouldBeUnique job whose uniqueVia() keeps its lock in Redis while
// the app's default cache store is the database: with the class under unique_via, Go releases the
// lock where PHP's worker does, and PHP dispatches it again (before, the lock stayed in Redis for
// uniqueFor and PHP's next dispatch queued nothing).
func TestGoReleasesUniqueViaLock(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx := testContext(t)
		app := phpapp.New(t, db, phpapp.WithEnv("UNIQUE_VIA_STORE=redis", "REDIS_PREFIX="+testenv.Name("via")+"_"))
		config := filepath.Join(t.TempDir(), "artisan-go.yaml")
		if err := os.WriteFile(config, []byte("routes:\n  - class: 'App\\Jobs\\UniqueVia'\n    builtin: noop\n    unique_id: '{key}'\n"+
			"unique_via:\n  - class: 'App\\Jobs\\UniqueVia'\n    store: redis\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			if d := app.MustDispatch(ctx, "unique-via", phpapp.Key("a")); len(d.Jobs) != 1 {
				t.Fatalf("round %d: PHP queued %d jobs, want 1: the lock of the job before was not released", round, len(d.Jobs))
			}
			if d := app.MustDispatch(ctx, "unique-via", phpapp.Key("a")); len(d.Jobs) != 0 {
				t.Fatalf("round %d: PHP accepted a second dispatch while the first is queued", round)
			}
			if out, errOut, code := goArtisan(ctx, app, "", "queue:work", "--config", config, "--stop-when-empty", "--sleep", "0.05"); code != 0 || !strings.Contains(errOut, "processed=1") {
				t.Fatalf("round %d: queue:work exit %d:\n%s%s", round, code, out, errOut)
			}
		}
	})
}

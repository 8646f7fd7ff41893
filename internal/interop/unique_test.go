package interop

import (
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

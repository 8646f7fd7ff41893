package filecache

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clock is a settable time for the store.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newStore(t *testing.T) (*Store, *clock, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	s, err := Open(Params{Dir: dir, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, dir
}

// TestFileLayout writes a key where PHP's FileStore does, in its format: sha1("illuminate:queue:restart")
// is ee2f842aa7bb1f53edf3a2ed2c09a1807ffa6c90.
func TestFileLayout(t *testing.T) {
	s, _, dir := newStore(t)
	ctx := context.Background()
	if err := s.CacheForever(ctx, "illuminate:queue:restart", "i:1800000000;"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ee", "2f", "ee2f842aa7bb1f53edf3a2ed2c09a1807ffa6c90"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "9999999999i:1800000000;" {
		t.Errorf("file holds %q", b)
	}
	if err := s.CachePut(ctx, "k", "i:7;", 90*time.Second); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path(dir, "k")); string(b) != "1800000090i:7;" {
		t.Errorf("a value for 90 s: file holds %q", b)
	}
}

// TestExpiry reads a key until its time, then as absent with its file deleted, as PHP's getPayload
// does; an increment keeps the time the key had left.
func TestExpiry(t *testing.T) {
	s, c, dir := newStore(t)
	ctx := context.Background()
	if err := s.CachePut(ctx, "n", "i:1;", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(5 * time.Second)
	if n, err := s.CacheIncrement(ctx, "n", 2); err != nil || n != 3 {
		t.Fatalf("increment: %d, %v", n, err)
	}
	if b, _ := os.ReadFile(path(dir, "n")); string(b) != "1800000010i:3;" {
		t.Errorf("after the increment the file holds %q, want the same expiry", b)
	}
	c.t = c.t.Add(5 * time.Second)
	if v, ok, err := s.CacheGet(ctx, "n"); ok || err != nil {
		t.Errorf("at its expiry: %q %v %v, want absent", v, ok, err)
	}
	if _, err := os.Stat(path(dir, "n")); !os.IsNotExist(err) {
		t.Errorf("the expired file is still there: %v", err)
	}
	if n, err := s.CacheIncrement(ctx, "fresh", 1); err != nil || n != 1 {
		t.Fatalf("increment of an absent key: %d, %v", n, err)
	}
	if b, _ := os.ReadFile(path(dir, "fresh")); !strings.HasPrefix(string(b), "9999999999") {
		t.Errorf("an absent key incremented: %q, want it kept forever", b)
	}
}

// TestAddAndLocks adds only over nothing or an expired value, and releases a lock only for its owner.
func TestAddAndLocks(t *testing.T) {
	s, c, _ := newStore(t)
	ctx := context.Background()
	if ok, err := s.LockAcquire(ctx, "l", "owner-a", 60); !ok || err != nil {
		t.Fatalf("first acquire: %v %v", ok, err)
	}
	if ok, _ := s.LockAcquire(ctx, "l", "owner-b", 60); ok {
		t.Fatal("a held lock was acquired again")
	}
	if ok, _ := s.LockRelease(ctx, "l", "owner-b"); ok {
		t.Fatal("released by another owner")
	}
	if v, _, ok, _ := s.read(s.lockDir, "l"); !ok || v != `s:7:"owner-a";` {
		t.Fatalf("lock value %q %v", v, ok)
	}
	if o, held, err := s.LockOwner(ctx, "l"); o != "owner-a" || !held || err != nil {
		t.Fatalf("LockOwner: %q %v %v", o, held, err)
	}
	if ok, err := s.LockRelease(ctx, "l", "owner-a"); !ok || err != nil {
		t.Fatalf("release by its owner: %v %v", ok, err)
	}
	if ok, _ := s.LockAcquire(ctx, "l", "owner-b", 60); !ok {
		t.Fatal("a released lock could not be acquired")
	}
	if ok, _ := s.CacheAdd(ctx, "l", "i:1;", time.Minute); ok {
		t.Fatal("added over a lock that has not expired")
	}
	c.t = c.t.Add(time.Minute)
	if ok, _ := s.LockAcquire(ctx, "l", "owner-c", 60); !ok {
		t.Fatal("an expired lock could not be acquired")
	}
	if err := s.ForceRelease(ctx, "l"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := s.read(s.lockDir, "l"); ok {
		t.Fatal("force release left the lock")
	}
}

// TestReadLeavesAFileBeingWritten reads a lock file another process has created and not yet
// written, as PHP's add leaves it between opening and locking it: absent, and the file left, so what
// the writer then writes through its open file is the lock every reader sees.
func TestReadLeavesAFileBeingWritten(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := context.Background()
	p := path(s.lockDir, "l")
	if err := s.makeDirs(p); err != nil {
		t.Fatal(err)
	}
	writer, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if _, held, err := s.LockOwner(ctx, "l"); held || err != nil {
		t.Fatalf("an empty lock file: held %v, %v", held, err)
	}
	if _, err := writer.Write(contents(never, `s:7:"owner-a";`)); err != nil {
		t.Fatal(err)
	}
	if o, held, err := s.LockOwner(ctx, "l"); o != "owner-a" || !held || err != nil {
		t.Fatalf("the lock written after an empty read: %q %v %v, want owner-a's", o, held, err)
	}
	if ok, _ := s.LockAcquire(ctx, "l", "owner-b", 60); ok {
		t.Fatal("owner-a's lock was acquired again")
	}
}

// TestCount counts maxExceptions as Laravel's worker does: 0 put for the ttl, then incremented.
func TestCount(t *testing.T) {
	s, _, dir := newStore(t)
	ctx := context.Background()
	for want := int64(1); want <= 3; want++ {
		if n, err := s.CacheCount(ctx, "job-exceptions:u", 24*time.Hour); err != nil || n != want {
			t.Fatalf("count %d: %d, %v", want, n, err)
		}
	}
	if b, _ := os.ReadFile(path(dir, "job-exceptions:u")); string(b) != "1800086400i:3;" {
		t.Errorf("the counter's file holds %q", b)
	}
}

// TestOpenNamesTheSetting refuses a directory that belongs to no application.
func TestOpenNamesTheSetting(t *testing.T) {
	_, err := Open(Params{Dir: filepath.Join(t.TempDir(), "no", "such", "data")})
	if err == nil || !strings.Contains(err.Error(), "cache.file.path") {
		t.Fatalf("Open of a missing directory: %v", err)
	}
	if _, err := Open(Params{}); err == nil || !strings.Contains(err.Error(), "cache.file.path") {
		t.Fatalf("Open without a directory: %v", err)
	}
}

// TestPermission gives the files it writes and the directories it creates stores.file.permission,
// as FileStore's ensurePermissionsAreCorrect does, and leaves a directory it did not create alone.
func TestPermission(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(Params{Dir: dir, Permission: 0o770})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mode := func(p string) fs.FileMode {
		t.Helper()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	if err := s.CacheForever(ctx, "put", "i:1;"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.LockAcquire(ctx, "added", "o", 60); !ok || err != nil {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	for _, key := range []string{"put", "added"} {
		p := path(dir, key)
		for _, q := range []string{p, filepath.Dir(p), filepath.Dir(filepath.Dir(p))} {
			if m := mode(q); m != 0o770 {
				t.Errorf("%s: %s has mode %04o, want 0770", key, q, m)
			}
		}
	}
	// A file another process left with another mode gets the store's at the next write.
	p := path(dir, "put")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CacheIncrement(ctx, "put", 1); err != nil {
		t.Fatal(err)
	}
	if m := mode(p); m != 0o770 {
		t.Errorf("after an increment the file has mode %04o, want 0770", m)
	}
	// Without a permission, the umask decides, as for PHP.
	plain, _ := Open(Params{Dir: dir})
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := plain.CacheForever(ctx, "put", "i:1;"); err != nil {
		t.Fatal(err)
	}
	if m := mode(p); m != 0o600 {
		t.Errorf("without a permission the file's mode became %04o, want it left at 0600", m)
	}
	if _, err := Open(Params{Dir: dir, Permission: fs.ModeDir | 0o755}); err == nil {
		t.Error("Open took a directory mode as a file permission")
	}
}

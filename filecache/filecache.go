// Package filecache reaches a Laravel file cache store (CACHE_DRIVER=file, Laravel's FileStore): one
// file per key, at <sha1>[0:2]/<sha1>[2:4]/<sha1> of the key under the store's directory, holding the
// expiry as ten digits of Unix time (9999999999 for none) followed by the PHP-serialized value. Files
// are read under a shared flock and written under an exclusive one, as PHP's Filesystem does, so PHP
// processes and the worker on one host see each other's writes whole. The store has no key prefix.
//
// The worker reads queue:restart's signal and paused queues there, counts maxExceptions, releases
// unique locks, and keeps job middleware's locks and rate limiters, all in the files PHP uses.
package filecache

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/artisan-go/artisan-go/payload"
)

// never is FileStore's expiry for a value kept forever (and its cap).
const never = 9999999999

// Params says where the store's files are.
type Params struct {
	// Dir is the store's directory: config/cache.php's stores.file.path,
	// storage/framework/cache/data in every skeleton.
	Dir string
	// LockDir is where its locks live: stores.file.lock_path (Laravel 10.x on); "" is Dir, where
	// every skeleton keeps them.
	LockDir string
	// Permission is stores.file.permission: the mode FileStore gives each file it writes and the
	// two directory levels it creates. 0 leaves them as the process's umask makes them.
	Permission fs.FileMode
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Store is a file cache store. It is safe for concurrent use.
type Store struct {
	dir, lockDir string
	perm         fs.FileMode
	now          func() time.Time
}

// Open checks that the directories belong to an application (each exists, or its parent does: PHP
// creates the directory at its first write) and returns the store.
func Open(p Params) (*Store, error) {
	if p.Dir == "" {
		return nil, errors.New("the file cache store's directory is not known: set cache.file.path to the application's storage/framework/cache/data")
	}
	if p.LockDir == "" {
		p.LockDir = p.Dir
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if err := supported(); err != nil {
		return nil, err
	}
	for _, d := range []string{p.Dir, p.LockDir} {
		if err := checkDir(d); err != nil {
			return nil, err
		}
	}
	if p.Permission&^(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		return nil, fmt.Errorf("the file cache store's permission %v is not a file mode; set cache.file.permission to an octal mode such as 0664", p.Permission)
	}
	return &Store{dir: p.Dir, lockDir: p.LockDir, perm: p.Permission, now: p.Now}, nil
}

// checkDir accepts a directory that exists, or one whose parent does.
func checkDir(d string) error {
	for _, c := range []string{d, filepath.Dir(d)} {
		st, err := os.Stat(c)
		if err == nil && st.IsDir() {
			return nil
		}
		if err == nil {
			return fmt.Errorf("the file cache store's directory %s: %s is not a directory; set cache.file.path to the application's storage/framework/cache/data", d, c)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the file cache store's directory %s: %w", d, err)
		}
	}
	return fmt.Errorf("the file cache store's directory %s does not exist, nor does its parent: set cache.file.path to the application's storage/framework/cache/data (the worker must run where the application's cache files are)", d)
}

// path is FileStore::path: two levels of directories named by the key's SHA-1.
func path(dir, key string) string {
	h := sha1.Sum([]byte(key))
	x := hex.EncodeToString(h[:])
	return filepath.Join(dir, x[0:2], x[2:4], x)
}

// expiry is FileStore::expiration: now plus ttl in whole seconds, or never for 0 (and past the cap).
func (s *Store) expiry(ttl time.Duration) int64 {
	secs := int64(ttl / time.Second)
	t := s.now().Unix() + secs
	if secs <= 0 || t > never {
		return never
	}
	return t
}

// contents is a file's text: the expiry in ten digits and the value.
func contents(expiry int64, value string) []byte {
	return []byte(fmt.Sprintf("%010d", expiry) + value)
}

// expired reads a file's first ten bytes as PHP compares them with the time: an expiry that is not
// a number, or one not after now, has passed.
func (s *Store) expired(head string) bool {
	exp, err := strconv.ParseInt(strings.TrimSpace(head), 10, 64)
	return err != nil || s.now().Unix() >= exp
}

// read is FileStore::getPayload: the value of key in dir as the file keeps it (PHP-serialized) and
// its expiry. A file that has expired, or whose value does not unserialize, is deleted and reads as
// absent, as PHP deletes it; an empty one reads as absent and is left.
func (s *Store) read(dir, key string) (value string, expiry int64, ok bool, err error) {
	p := path(dir, key)
	b, err := readShared(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("read file cache key %s: %w", key, err)
	}
	if len(b) == 0 {
		// A file another process has just created and not yet locked to write (PHP's add and put
		// open it first, then lock): absent, and left for its writer. Deleting it, as PHP's own
		// reader would, loses what the writer then writes into the unlinked file.
		return "", 0, false, nil
	}
	if len(b) < 10 || s.expired(string(b[:10])) {
		return "", 0, false, remove(p)
	}
	if _, err := payload.Unserialize(b[10:]); err != nil {
		return "", 0, false, remove(p)
	}
	expiry, _ = strconv.ParseInt(string(b[:10]), 10, 64)
	return string(b[10:]), expiry, true, nil
}

// makeDirs is FileStore::ensureCacheDirectoryExists: the file's two directory levels created when
// its own is missing, and given the store's permission.
func (s *Store) makeDirs(p string) error {
	dir := filepath.Dir(p)
	if _, err := os.Stat(dir); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	if err := s.settle(dir); err != nil {
		return err
	}
	return s.settle(filepath.Dir(dir))
}

// settle is FileStore::ensurePermissionsAreCorrect: the store's permission given to a file or
// directory that has another.
func (s *Store) settle(p string) error {
	if s.perm == 0 {
		return nil
	}
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) == s.perm {
		return nil
	}
	return os.Chmod(p, s.perm)
}

// write is FileStore::put's file_put_contents with LOCK_EX: the file opened without truncating,
// locked, then emptied and written, then given the store's permission.
func (s *Store) write(p string, b []byte) error {
	if err := s.makeDirs(p); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lock(f, true, false); err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return s.settle(p)
}

// readShared is Filesystem::sharedGet: the whole file under a shared lock.
func readShared(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := lock(f, false, false); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// remove deletes a file; one already gone is not an error.
func remove(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// add is FileStore::add: the file opened for reading and writing and locked without waiting (a file
// another process holds is not added to); written only when it is new, empty or expired.
func (s *Store) add(dir, key, value string, ttl time.Duration) (bool, error) {
	p := path(dir, key)
	if err := s.makeDirs(p); err != nil {
		return false, fmt.Errorf("add file cache key %s: %w", key, err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return false, fmt.Errorf("add file cache key %s: %w", key, err)
	}
	defer f.Close()
	if err := lock(f, true, true); errors.Is(err, errLocked) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("add file cache key %s: %w", key, err)
	}
	head := make([]byte, 10)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false, fmt.Errorf("add file cache key %s: %w", key, err)
	}
	// PHP: empty($expire) || now >= $expire; "0" is empty too.
	if h := string(head[:n]); h != "" && h != "0" && !s.expired(h) {
		return false, nil
	}
	if err := f.Truncate(0); err != nil {
		return false, fmt.Errorf("add file cache key %s: %w", key, err)
	}
	if _, err := f.WriteAt(contents(s.expiry(ttl), value), 0); err != nil {
		return false, fmt.Errorf("add file cache key %s: %w", key, err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("add file cache key %s: %w", key, err)
	}
	if err := s.settle(p); err != nil {
		return false, fmt.Errorf("add file cache key %s: %w", key, err)
	}
	return true, nil
}

// CacheGet returns key's value as the file keeps it (PHP-serialized), and whether it is there.
func (s *Store) CacheGet(_ context.Context, key string) (string, bool, error) {
	v, _, ok, err := s.read(s.dir, key)
	return v, ok, err
}

// CachePut writes a value (PHP-serialized) for ttl; 0 keeps it forever.
func (s *Store) CachePut(_ context.Context, key, value string, ttl time.Duration) error {
	if err := s.write(path(s.dir, key), contents(s.expiry(ttl), value)); err != nil {
		return fmt.Errorf("put file cache key %s: %w", key, err)
	}
	return nil
}

// CacheForever writes a value (PHP-serialized) that does not expire.
func (s *Store) CacheForever(ctx context.Context, key, value string) error {
	return s.CachePut(ctx, key, value, 0)
}

// CacheAdd writes a value (PHP-serialized) for ttl unless the key holds one, and says whether it did.
func (s *Store) CacheAdd(_ context.Context, key, value string, ttl time.Duration) (bool, error) {
	return s.add(s.dir, key, value, ttl)
}

// CacheIncrement is FileStore::increment: PHP's (int) of the value plus by, written back with the
// time the key had left (forever when it was absent). Like PHP's, it reads and then writes.
func (s *Store) CacheIncrement(_ context.Context, key string, by int64) (int64, error) {
	v, expiry, ok, err := s.read(s.dir, key)
	if err != nil {
		return 0, err
	}
	n := by
	if ok {
		n += payload.IntCast(unserialized(v))
	} else {
		expiry = never
	}
	if err := s.write(path(s.dir, key), contents(expiry, serialize(n))); err != nil {
		return 0, fmt.Errorf("increment file cache key %s: %w", key, err)
	}
	return n, nil
}

// CacheCount is the worker's maxExceptions counting, as Laravel's Worker does it: 0 put for ttl when
// the key holds nothing true, then incremented.
func (s *Store) CacheCount(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	v, ok, err := s.CacheGet(ctx, key)
	if err != nil {
		return 0, err
	}
	if !ok || payload.IntCast(unserialized(v)) == 0 {
		if err := s.CachePut(ctx, key, serialize(int64(0)), ttl); err != nil {
			return 0, err
		}
	}
	return s.CacheIncrement(ctx, key, 1)
}

// CacheForget deletes the key.
func (s *Store) CacheForget(_ context.Context, key string) error {
	if err := remove(path(s.dir, key)); err != nil {
		return fmt.Errorf("forget file cache key %s: %w", key, err)
	}
	return nil
}

// LockAcquire takes the lock name for owner for seconds (0: until released), as FileStore's lock
// does: an add of the owner in the lock directory.
func (s *Store) LockAcquire(_ context.Context, name, owner string, seconds int64) (bool, error) {
	return s.add(s.lockDir, name, serialize(owner), time.Duration(seconds)*time.Second)
}

// LockRelease releases the lock name if owner holds it, and says whether it did.
func (s *Store) LockRelease(_ context.Context, name, owner string) (bool, error) {
	v, _, ok, err := s.read(s.lockDir, name)
	if err != nil || !ok || v != serialize(owner) {
		return false, err
	}
	if err := remove(path(s.lockDir, name)); err != nil {
		return false, fmt.Errorf("release file cache lock %s: %w", name, err)
	}
	return true, nil
}

// LockOwner returns the owner of the lock name, and whether it is held, as Lock::getCurrentOwner reads it.
func (s *Store) LockOwner(_ context.Context, name string) (string, bool, error) {
	v, _, ok, err := s.read(s.lockDir, name)
	if err != nil || !ok {
		return "", false, err
	}
	owner, err := payload.Unserialize([]byte(v))
	if err != nil {
		return "", false, nil
	}
	o, _ := owner.(string)
	return o, true, nil
}

// ForceRelease deletes the lock name whoever holds it, as Lock::forceRelease does.
func (s *Store) ForceRelease(_ context.Context, name string) error {
	if err := remove(path(s.lockDir, name)); err != nil {
		return fmt.Errorf("release file cache lock %s: %w", name, err)
	}
	return nil
}

// LockHeld reports whether the lock name is held: its file is there and unexpired.
func (s *Store) LockHeld(_ context.Context, name string) (bool, error) {
	_, _, ok, err := s.read(s.lockDir, name)
	return ok, err
}

// SerializesValues reports that the store keeps values PHP-serialized, numbers included.
func (s *Store) SerializesValues() bool { return true }

// unserialized is a serialized value read back (nil when it does not unserialize).
func unserialized(v string) payload.Value {
	val, _ := payload.Unserialize([]byte(v))
	return val
}

// serialize is PHP's serialize() of an int or a string.
func serialize(v payload.Value) string {
	b, _ := payload.Serialize(v)
	return string(b)
}

package interop

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The differential suite's file-store rows: the app's cache store is Laravel's FileStore, so unique
// locks, exception counters, rate limiters and queue:restart's signal are files under
// storage/framework/cache/data, named by the SHA-1 of their keys. Each copy has its own storage; the
// files are copied and compared as the tables are.

// cacheFile is one cache file: its contents, its mode and its two directories' modes.
type cacheFile struct {
	data []byte
	mode fs.FileMode
	dirs [2]fs.FileMode // <sha1>[0:2], <sha1>[0:2]/<sha1>[2:4]
}

// fileEntries returns the side's cache files by their path under the store's directory.
func (s *side) fileEntries(t *testing.T) map[string]cacheFile {
	t.Helper()
	dir := s.app.FileCachePath()
	out := map[string]cacheFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		var f cacheFile
		if f.data, err = os.ReadFile(p); err != nil {
			return err
		}
		for i, q := range []string{filepath.Dir(filepath.Dir(p)), filepath.Dir(p), p} {
			st, err := os.Stat(q)
			if err != nil {
				return err
			}
			if i < 2 {
				f.dirs[i] = st.Mode().Perm()
			} else {
				f.mode = st.Mode().Perm()
			}
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = f
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("read the file cache: %v", err)
	}
	return out
}

// clearFiles deletes the side's cache files.
func (s *side) clearFiles(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(s.app.FileCachePath()); err != nil {
		t.Fatal(err)
	}
}

// copyFiles replaces the cache files of to with those of from, modes alike.
func copyFiles(t *testing.T, from, to *side) {
	t.Helper()
	to.clearFiles(t)
	for rel, f := range from.fileEntries(t) {
		p := filepath.Join(to.app.FileCachePath(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, 0o666); err != nil {
			t.Fatal(err)
		}
		for q, mode := range map[string]fs.FileMode{filepath.Dir(filepath.Dir(p)): f.dirs[0], filepath.Dir(p): f.dirs[1], p: f.mode} {
			if err := os.Chmod(q, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// lockOwner matches a lock's value: its owner, Str::random(16), which two runs draw differently.
var lockOwner = regexp.MustCompile(`^s:16:"[A-Za-z0-9]{16}";$`)

// recentTime reports whether digits read as a Unix time within a day of now: a value two runs write
// differently.
func recentTime(digits string) bool {
	ts, err := strconv.ParseInt(digits, 10, 64)
	return err == nil && time.Since(time.Unix(ts, 0)).Abs() < 24*time.Hour
}

// unixTime matches a serialized integer that reads as a time of these days (queue:restart's signal,
// a rate limiter's timer).
var unixTime = regexp.MustCompile(`^i:(\d{10});$`)

// fileSnapshot renders the side's cache files, normalized: each by its key's hash, its value with
// lock owners and times left out, whether it expires, and its and its directories' modes.
func (s *side) fileSnapshot(t *testing.T, n *normalizer) []string {
	t.Helper()
	entries := s.fileEntries(t)
	var lines []string
	for _, rel := range slices.Sorted(maps.Keys(entries)) {
		f := entries[rel]
		b := f.data
		if len(b) < 10 {
			lines = append(lines, fmt.Sprintf("%s malformed %q", filepath.Base(rel), b))
			continue
		}
		expires := "expires"
		if string(b[:10]) == "9999999999" {
			expires = "forever"
		}
		value := n.text(string(b[10:]))
		if lockOwner.MatchString(value) {
			value = "owner"
		}
		if m := unixTime.FindStringSubmatch(value); m != nil {
			if recentTime(m[1]) {
				value = "time"
			}
		}
		lines = append(lines, fmt.Sprintf("%s = %s (%s) mode %04o in %04o/%04o", filepath.Base(rel), value, expires, f.mode, f.dirs[0], f.dirs[1]))
	}
	return lines
}

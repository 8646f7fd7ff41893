package interop

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"
)

// The differential suite's file-store rows: the app's cache store is Laravel's FileStore, so unique
// locks, exception counters, rate limiters and queue:restart's signal are files under
// storage/framework/cache/data, named by the SHA-1 of their keys. Each copy has its own storage; the
// files are copied and compared as the tables are.

// fileEntries returns the side's cache files by their path under the store's directory.
func (s *side) fileEntries(t *testing.T) map[string][]byte {
	t.Helper()
	dir := s.app.FileCachePath()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
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

// copyFiles replaces the cache files of to with those of from.
func copyFiles(t *testing.T, from, to *side) {
	t.Helper()
	to.clearFiles(t)
	for rel, b := range from.fileEntries(t) {
		p := filepath.Join(to.app.FileCachePath(), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// lockOwner matches a lock's value: its owner, Str::random(16), which two runs draw differently.
var lockOwner = regexp.MustCompile(`^s:16:"[A-Za-z0-9]{16}";$`)

// unixTime matches a serialized integer that reads as a time of these days (queue:restart's signal,
// a rate limiter's timer).
var unixTime = regexp.MustCompile(`^i:(\d{10});$`)

// fileSnapshot renders the side's cache files, normalized: each by its key's hash, its value with
// lock owners and times left out, and whether it expires.
func (s *side) fileSnapshot(t *testing.T, n *normalizer) []string {
	t.Helper()
	entries := s.fileEntries(t)
	names := make([]string, 0, len(entries))
	for rel := range entries {
		names = append(names, rel)
	}
	sort.Strings(names)
	var lines []string
	for _, rel := range names {
		b := entries[rel]
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
			if ts, _ := strconv.ParseInt(m[1], 10, 64); time.Since(time.Unix(ts, 0)).Abs() < 24*time.Hour {
				value = "time"
			}
		}
		lines = append(lines, fmt.Sprintf("%s = %s (%s)", filepath.Base(rel), value, expires))
	}
	return lines
}

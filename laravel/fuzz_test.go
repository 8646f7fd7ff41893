package laravel_test

import (
	"testing"

	"github.com/artisan-go/artisan-go/laravel"
)

// FuzzVersionCompare checks that any server version string compares without panicking and that the
// result is a sign.
func FuzzVersionCompare(f *testing.F) {
	for _, s := range []string{"8.0.1", "5.5.5-10.11.19-MariaDB-0+deb12u1", "16.3 (Debian 16.3-1)", "8.0.mysql_aurora.3.04.0", "#", "1..2", "-", "rc1", ""} {
		f.Add(s, "8.0.1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if c := laravel.VersionCompare(a, b); c < -1 || c > 1 {
			t.Fatalf("VersionCompare(%q, %q) = %d", a, b, c)
		}
		laravel.PopLock(laravel.MySQL, a)
	})
}

// FuzzUnserializeNumber checks that cache values of any shape are parsed without panicking.
func FuzzUnserializeNumber(f *testing.F) {
	for _, s := range []string{"i:1;", "d:1.5;", `s:2:"12";`, `s:-1:"";`, `s:9:"1";`, "b:1;", "N;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		laravel.UnserializeNumber(v)
		laravel.UnserializeString(v)
	})
}

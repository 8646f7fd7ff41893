package laravel_test

import (
	"fmt"

	"github.com/artisan-go/artisan-go/laravel"
)

// PopLock reproduces Laravel 8.83's choice of lock clause from the server version string, including
// PHP version_compare's treatment of vendor suffixes.
func ExamplePopLock() {
	for _, v := range []struct {
		d       laravel.Dialect
		version string
	}{
		{laravel.MySQL, "5.5.5-10.11.19-MariaDB-0+deb12u1"},
		{laravel.MySQL, "10.5.23-MariaDB"},
		{laravel.MySQL, "8.0.mysql_aurora.3.04.0"},
		{laravel.Postgres, "15.20 (Debian 15.20-0+deb12u1)"},
		{laravel.SQLite, "3.46.0"},
	} {
		engine, lock := laravel.PopLock(v.d, v.version)
		fmt.Printf("%s %q\n", engine, lock)
	}
	// Output:
	// mariadb "FOR UPDATE SKIP LOCKED"
	// mariadb "for update"
	// mysql "for update"
	// pgsql "FOR UPDATE SKIP LOCKED"
	// sqlite ""
}

// Values in Laravel's database cache are PHP-serialized; the restart signal is an int.
func ExampleSerializeInt() {
	v := laravel.SerializeInt(1700000000)
	n, ok := laravel.UnserializeNumber(v)
	fmt.Println(v, n, ok)
	// Output: i:1700000000; 1700000000 true
}

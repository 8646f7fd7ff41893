package laravel

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// uuidRefused reports whether failed_jobs refused a row for its uuid: already present (the column is
// unique: MySQL 1062, PostgreSQL 23505, SQLite's UNIQUE constraint) or longer than the column (MySQL
// 1406, PostgreSQL 22001; uuid is failed_jobs' only bounded column). A fresh uuid makes such a row fit.
func uuidRefused(err error) bool {
	var my *mysql.MySQLError
	var pg *pgconn.PgError
	var lite *sqlite.Error
	switch {
	case errors.As(err, &my):
		return my.Number == 1062 || my.Number == 1406
	case errors.As(err, &pg):
		return pg.Code == "23505" || pg.Code == "22001"
	case errors.As(err, &lite):
		return lite.Code()&0xff == 19 && strings.Contains(lite.Error(), "UNIQUE")
	}
	return false
}

// charsetRefused reports whether failed_jobs refused a row for characters its character set cannot
// hold: MySQL's 1366 (Incorrect string value), a utf8mb3 table (Laravel 5.3's charset, and any table
// converted to it) given an emoji in the exception or the payload.
func charsetRefused(err error) bool {
	var my *mysql.MySQLError
	return errors.As(err, &my) && my.Number == 1366
}

// withoutSupplementary replaces the characters outside the Basic Multilingual Plane (four bytes in
// UTF-8, which utf8mb3 cannot hold) by U+FFFD, and reports whether there was one.
func withoutSupplementary(s string) (string, bool) {
	if !hasSupplementary(s) {
		return s, false
	}
	var b strings.Builder
	for _, r := range s {
		if r > 0xFFFF {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String(), true
}

// jsonSupplementaryEscaped writes the characters outside the Basic Multilingual Plane of a JSON text
// as \u surrogate pairs, which decode to the same characters: the payload keeps its value (and the
// command its bytes) in a table that cannot hold them raw. Characters in JSON are only ever inside
// strings, where such an escape is allowed.
func jsonSupplementaryEscaped(s string) (string, bool) {
	if !hasSupplementary(s) {
		return s, false
	}
	var b strings.Builder
	for _, r := range s {
		if r <= 0xFFFF {
			b.WriteRune(r)
			continue
		}
		r -= 0x10000
		for _, u := range []rune{0xD800 + r>>10, 0xDC00 + r&0x3FF} {
			b.WriteString(`\u`)
			b.WriteString(strconv.FormatInt(int64(u), 16))
		}
	}
	return b.String(), true
}

func hasSupplementary(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xF0 {
			return true
		}
	}
	return false
}

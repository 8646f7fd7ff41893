package laravel

import (
	"errors"
	"strings"

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

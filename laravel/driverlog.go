package laravel

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// driverLog is where the MySQL driver's own lines go (see SetDriverLog); nil drops them.
var driverLog atomic.Pointer[slog.Logger]

func init() {
	// The driver prints lines of its own on standard error ("[mysql] … packets.go:58 unexpected EOF")
	// when a connection breaks, besides the error it returns, which the messages here already carry.
	// Unrouted they land amid a worker's log and break a JSON one.
	_ = mysql.SetLogger(driverLogger{})
}

// SetDriverLog sends the lines the MySQL driver prints on its own to l, at debug level; nil (the
// default) drops them. Safe to call while connections are open.
func SetDriverLog(l *slog.Logger) { driverLog.Store(l) }

type driverLogger struct{}

func (driverLogger) Print(v ...any) {
	if l := driverLog.Load(); l != nil {
		l.Log(context.Background(), slog.LevelDebug, "mysql driver", "message", fmt.Sprint(v...))
	}
}

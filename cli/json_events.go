package cli

import (
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/payload"
	"github.com/artisan-go/artisan-go/worker"
)

// jsonEvents returns a worker.Params.Events that prints each job event as the JSON line Laravel
// 11.27+'s `queue:work --json` writes (WorkCommand::writeOutputAsJson): the keys level, id, uuid,
// connection, queue, job, status, result, attempts, exception, message, timestamp in that order, empty
// ones left out as PHP's array_filter leaves them out, then duration (seconds, rounded to 6 places)
// after starting. Strings are escaped as json_encode escapes them by default. Times are in the app's
// timezone.
func jsonEvents(w io.Writer, timezone string) func(worker.RunEvent) {
	loc, err := time.LoadLocation(timezone)
	if err != nil {
		loc = time.UTC
	}
	var mu sync.Mutex
	return func(e worker.RunEvent) {
		line := jsonEventLine(e, loc)
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(line)
	}
}

// jsonEventLine renders one event, newline included.
func jsonEventLine(e worker.RunEvent, loc *time.Location) []byte {
	level := "warning"
	if e.Status == worker.EventStarting || e.Status == worker.EventSuccess {
		level = "info"
	}
	b := []byte{'{'}
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
	}
	str := func(k, v string) {
		if v == "" || v == "0" { // array_filter drops "" and "0"
			return
		}
		key(k)
		s, err := payload.AppendPHPJSONString(b, strings.ToValidUTF8(v, "?"), false)
		if err == nil {
			b = s
		}
	}
	str("level", level)
	if e.ID != 0 {
		key("id")
		b = strconv.AppendInt(b, e.ID, 10)
	}
	str("uuid", e.UUID)
	str("connection", e.Connection)
	str("queue", e.Queue)
	str("job", e.Job)
	str("status", e.Status)
	str("result", e.Result)
	if e.Attempts != 0 {
		key("attempts")
		b = strconv.AppendInt(b, int64(e.Attempts), 10)
	}
	str("exception", e.Exception)
	str("message", e.Message)
	str("timestamp", e.Time.In(loc).Format("2006-01-02T15:04:05.000000-07:00"))
	if e.Status != worker.EventStarting {
		key("duration")
		b = appendPHPFloat(b, math.Round(e.Duration.Seconds()*1e6)/1e6)
	}
	return append(b, '}', '\n')
}

// appendPHPFloat writes a float as json_encode does with serialize_precision -1: the shortest form
// that reads back, with ".0" on whole numbers, and an exponent ("1.0e-5", "1.0e+20") below 1e-4 or
// from 1e15.
func appendPHPFloat(b []byte, v float64) []byte {
	abs := math.Abs(v)
	if v != 0 && (abs < 1e-4 || abs >= 1e15) {
		s := strconv.FormatFloat(v, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
		if sign == "+" {
			return append(b, mant+"e+"+digits...)
		}
		return append(b, mant+"e-"+digits...)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return append(b, s...)
}

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
// after starting. Strings are escaped as json_encode escapes them by default. Times are in timezone
// (see outputTimezone).
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
	if e.Status == worker.EventQueuePaused || e.Status == worker.EventQueueResumed {
		// 13.26+'s writeQueueStatus: four keys, none left out.
		ts := e.Time.In(loc).Format("2006-01-02T15:04:05.000000-07:00")
		for _, kv := range [][2]string{{"level", "warning"}, {"queue", e.Queue}, {"status", e.Status}, {"timestamp", ts}} {
			key(kv[0])
			if s, err := payload.AppendPHPJSONString(b, strings.ToValidUTF8(kv[1], "?"), false); err == nil {
				b = s
			}
		}
		return append(b, '}', '\n')
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
		b = payload.AppendPHPFloat(b, math.Round(e.Duration.Seconds()*1e6)/1e6)
	}
	return append(b, '}', '\n')
}

package payload

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// AvailableAt is when a job whose delay property is d becomes available, as Laravel's availableAt
// reads it: seconds from now (an int, a float cut to whole seconds, or a numeric string as PHP reads one), a
// date (DateTime, Carbon: its own time, even a past one) or an interval (DateInterval,
// CarbonInterval: now plus the interval, months and years by the calendar, inverted ones back).
func AvailableAt(d Value, now time.Time) (int64, bool) {
	switch d := d.(type) {
	case int64:
		return now.Unix() + d, true
	case float64:
		return now.Unix() + int64(d), true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(d), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, false
		}
		return now.Unix() + int64(f), true
	case *Object:
		if tm, err := Time(d); err == nil {
			return tm.Unix(), true
		}
		part := func(name string) (int64, bool) {
			v, _ := d.Get(name)
			n, ok := v.(int64)
			return n, ok
		}
		y, ok1 := part("y")
		m, ok2 := part("m")
		days, ok3 := part("d")
		h, ok4 := part("h")
		i, ok5 := part("i")
		sec, ok6 := part("s")
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
			return 0, false
		}
		sign := int64(1)
		if inv, _ := part("invert"); inv == 1 {
			sign = -1
		}
		at := now.AddDate(int(sign*y), int(sign*m), int(sign*days)).Add(time.Duration(sign*(h*3600+i*60+sec)) * time.Second)
		return at.Unix(), true
	}
	return 0, false
}

package laravel

import (
	"context"
	"strings"
)

// readAttemptsLimit sets the largest attempts value from the jobs table's own column, where the
// server enforces its type: Laravel's stub made it a tinyint until 13.6 and an unsigned smallint
// since, and an application may have widened it. A table that cannot be read yet keeps the
// dialect's default (a tinyint's on MySQL).
func (c *Conn) readAttemptsLimit(ctx context.Context) {
	if !c.caps.TypedIntegers {
		return
	}
	t, err := InspectJobs(ctx, c)
	if err != nil {
		return
	}
	if col, ok := t.Column("attempts"); ok {
		if n := attemptsLimit(col.Type); n > 0 {
			c.caps.MaxAttempts = n
		}
	}
}

// attemptsLimit is the largest value a column of the given type holds, as the catalog spells it
// ("tinyint(3) unsigned", "smallint unsigned", "smallint", "integer"); 0 when unknown.
func attemptsLimit(colType string) int {
	t := strings.ToLower(colType)
	unsigned := strings.Contains(t, "unsigned")
	pick := func(signed, uns int) int {
		if unsigned {
			return uns
		}
		return signed
	}
	switch {
	case strings.HasPrefix(t, "tinyint"):
		return pick(127, 255)
	case strings.HasPrefix(t, "smallint"):
		return pick(32767, 65535)
	case strings.HasPrefix(t, "mediumint"):
		return pick(8388607, 16777215)
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "bigint"):
		return 1<<31 - 1 // the claim's arithmetic stays in a 32-bit int
	}
	return 0
}

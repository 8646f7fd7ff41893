package laravel

import (
	"os"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/internal/hostlock"
)

// autoLaneSlots is how many of its workers' slots each lane needs where the lanes are QueueParams.Lanes
// 0's: one `queue:work` process at its defaults (256 jobs at once) ran 19–28 % (MariaDB) and 8–33 %
// (PostgreSQL) faster in two lanes of 128 than in one, in medians of alternated rounds on two days;
// lanes of 64 ran no faster than one.
const autoLaneSlots = 128

// autoLanes is how many lanes QueueParams.Lanes 0 may run.
const autoLanes = 2

// leadRetry is how long a queue that found the lead taken waits before it tries again (the process
// holding it may have stopped).
const leadRetry = 10 * time.Second

// hostLead is the lock file that lets one batch queue of a host, per jobs table of one server, run
// lanes at QueueParams.Lanes 0. One process alone on the server is faster in two lanes; 16 processes
// of two lanes each ran a third slower than of one (their transactions, twice as many, queued on the
// server), and no process sees how many others claim beside it. A lock file sees those of its host:
// however many processes a host starts, one of them runs a second lane.
type hostLead struct {
	scope string

	mu   sync.Mutex
	file *os.File  // open, and its lock held, while this queue leads
	next time.Time // before then a queue that found the lead taken does not try again
}

// take makes the queue the host's lead if no other process is, and says whether it is.
func (h *hostLead) take(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file != nil {
		return true
	}
	if now.Before(h.next) {
		return false
	}
	h.next = now.Add(leadRetry)
	f, err := hostlock.Open(h.scope, "lanes")
	if err != nil {
		return false // no lock file (no flock, or a temporary directory not writable): one lane
	}
	if !hostlock.Try(f) {
		f.Close()
		return false
	}
	h.file = f
	return true
}

// due says whether a queue that does not lead may try again.
func (h *hostLead) due(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.file == nil && !now.Before(h.next)
}

// release lets another process lead, once this queue's workers no longer run enough jobs for lanes.
func (h *hostLead) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file != nil {
		h.file.Close() // closing the descriptor drops its lock
		h.file, h.next = nil, time.Time{}
	}
}

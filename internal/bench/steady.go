package bench

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/artisan-go/artisan-go/laravel"
)

// Steady is a row's figures at a steady rate (Params.Rate): the first and the last minute of the row
// compared (a quarter of the row when it is shorter than four minutes), so that a queue that grows or
// a pickup that slows down over the row shows; with Params.LongTx, beside a long transaction.
type Steady struct {
	WindowSeconds float64 `json:"window_seconds"`
	P99FirstMS    float64 `json:"p99_first_ms"` // available → started, jobs enqueued in the first window
	P99LastMS     float64 `json:"p99_last_ms"`
	DepthFirst    int64   `json:"depth_first"` // most unfinished jobs seen in the window
	DepthLast     int64   `json:"depth_last"`
	// ClaimP99FirstMS and ClaimP99LastMS are the p99 of the durations of the claim calls that ran in
	// each window, for the rows whose workers run in the bench process (-1 for the others). A call
	// counts in every window it overlaps: a claim stalled across a whole window is that window's.
	ClaimP99FirstMS float64 `json:"claim_p99_first_ms"`
	ClaimP99LastMS  float64 `json:"claim_p99_last_ms"`
	// InsertMaxFirstMS and InsertMaxLastMS are the longest insert of the bench's own producer that ran
	// in each window (-1 with PHP producers): a job is available, and its wait counted, only once its insert
	// returns, so an insert that stalls holds back the jobs behind it and they then arrive together.
	InsertMaxFirstMS float64 `json:"insert_max_first_ms"`
	InsertMaxLastMS  float64 `json:"insert_max_last_ms"`
	// MaxMS is the longest any job of the row waited from available to started (-1: not observable).
	MaxMS float64 `json:"max_ms"`
	// DeadRows is how many rows wait for clean-up at the end of a row with Params.LongTx (see
	// laravel.CleanupStatus).
	DeadRows     int64  `json:"dead_rows,omitempty"`
	DeadRowsKind string `json:"dead_rows_kind,omitempty"`
}

// depthSampler counts the unfinished jobs every second while a row runs.
type depthSampler struct {
	mu    sync.Mutex
	at    []time.Duration
	depth []int64
	stop  chan struct{}
	done  chan struct{}
}

func (e *env) sampleDepth(ctx context.Context, start time.Time) *depthSampler {
	s := &depthSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			n, err := e.admin.JobUnfinishedCount(ctx, &laravel.JobUnfinishedExistsParams{})
			if err == nil {
				s.mu.Lock()
				s.at, s.depth = append(s.at, time.Since(start)), append(s.depth, n)
				s.mu.Unlock()
			}
		}
	}()
	return s
}

func (s *depthSampler) close() {
	close(s.stop)
	<-s.done
}

// max returns the most unfinished jobs seen in [from, to).
func (s *depthSampler) max(from, to time.Duration) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var m int64
	for i, at := range s.at {
		if at >= from && at < to {
			m = max(m, s.depth[i])
		}
	}
	return m
}

// steadyFigures compares the first and last window of a row run at a steady rate. Rows of other
// processes record no starts: their p99s are -1.
func (e *env) steadyFigures(proto *protocol, pr *producer, depth *depthSampler, total time.Duration) *Steady {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	// The windows are the load's: its last one ends with the last insert, not with the drain, whose
	// tail after a stall holds no inserts and no newly enqueued job.
	var span time.Duration
	for _, enq := range pr.enqueued {
		span = max(span, time.Duration(enq))
	}
	if span == 0 {
		span = total
	}
	total = span + 1 // the last insert falls inside the last window
	w := min(time.Minute, total/4)
	lt := &Steady{WindowSeconds: w.Seconds()}
	first := map[int64]int64{}
	for i := range proto.len() {
		id, at := proto.ids[i], proto.at[i]
		if prev, ok := first[id]; !ok || at < prev {
			first[id] = at
		}
	}
	var early, late []float64
	lt.MaxMS = -1
	for id, enq := range pr.enqueued {
		started, ok := first[id]
		if !ok {
			continue
		}
		ms := float64(started-enq) / 1e6
		lt.MaxMS = max(lt.MaxMS, ms)
		switch {
		case time.Duration(enq) < w:
			early = append(early, ms)
		case time.Duration(enq) >= total-w:
			late = append(late, ms)
		}
	}
	p99 := func(v []float64) float64 {
		if len(v) == 0 {
			return -1 // not observable: no start recorded
		}
		slices.Sort(v)
		return percentile(v, 0.99)
	}
	lt.P99FirstMS, lt.P99LastMS = p99(early), p99(late)
	lt.InsertMaxFirstMS, lt.InsertMaxLastMS = -1, -1
	for _, s := range pr.pushes {
		ms := float64(s.took) / 1e6
		if s.overlaps(0, w) {
			lt.InsertMaxFirstMS = max(lt.InsertMaxFirstMS, ms)
		}
		if s.overlaps(total-w, total) {
			lt.InsertMaxLastMS = max(lt.InsertMaxLastMS, ms)
		}
	}
	early, late = early[:0], late[:0]
	proto.claimMu.Lock()
	for _, c := range proto.claims {
		if c.overlaps(0, w) {
			early = append(early, float64(c.took)/1e6)
		}
		if c.overlaps(total-w, total) {
			late = append(late, float64(c.took)/1e6)
		}
	}
	proto.claimMu.Unlock()
	lt.ClaimP99FirstMS, lt.ClaimP99LastMS = p99(early), p99(late)
	lt.DepthFirst, lt.DepthLast = depth.max(0, w), depth.max(total-w, total+time.Second)
	return lt
}

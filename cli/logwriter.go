package cli

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logWriter gathers log lines in memory and writes them out together every flush interval, when its
// buffer fills, and on Close, so that a worker logging two lines per job does not make two write
// system calls per job. With a zero interval every line is written at once.
type logWriter struct {
	mu    sync.Mutex
	buf   *bufio.Writer
	w     io.Writer
	stop  chan struct{}
	done  chan struct{}
	every time.Duration
	once  sync.Once
}

// logBufferSize is the most log text held before it is written: a few hundred lines.
const logBufferSize = 64 << 10

func newLogWriter(w io.Writer, every time.Duration) *logWriter {
	l := &logWriter{w: w, every: every}
	if every <= 0 {
		return l
	}
	l.buf = bufio.NewWriterSize(w, logBufferSize)
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.flushLoop()
	return l
}

func (l *logWriter) flushLoop() {
	defer close(l.done)
	t := time.NewTicker(l.every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.Flush()
		}
	}
}

// Write takes one log line (slog handlers write each record with one call).
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf == nil {
		return l.w.Write(p)
	}
	return l.buf.Write(p)
}

// Flush writes out what the buffer holds.
func (l *logWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf != nil {
		_ = l.buf.Flush()
	}
}

// Close stops the flushing and writes out what is left; later lines are written at once. It may be
// called more than once.
func (l *logWriter) Close() {
	if l.stop == nil {
		return
	}
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		l.mu.Lock()
		defer l.mu.Unlock()
		_ = l.buf.Flush()
		l.buf = nil
	})
}

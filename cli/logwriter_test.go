package cli

import (
	"bytes"
	"testing"
	"time"
)

func TestLogWriterBuffersUntilFlushOrClose(t *testing.T) {
	var out bytes.Buffer // an hour's interval: only Flush and Close write, on this goroutine
	w := newLogWriter(&out, time.Hour)
	w.Write([]byte("one\n"))
	w.Write([]byte("two\n"))
	if got := out.String(); got != "" {
		t.Fatalf("written before a flush: %q", got)
	}
	w.Flush()
	if got := out.String(); got != "one\ntwo\n" {
		t.Fatalf("after Flush: %q", got)
	}
	w.Write([]byte("three\n"))
	w.Close()
	w.Close()
	w.Write([]byte("four\n"))
	if got := out.String(); got != "one\ntwo\nthree\nfour\n" {
		t.Fatalf("after Close: %q, want every line, the last one written at once", got)
	}
}

func TestLogWriterWithoutIntervalWritesAtOnce(t *testing.T) {
	var out bytes.Buffer // an hour's interval: only Flush and Close write, on this goroutine
	w := newLogWriter(&out, 0)
	w.Write([]byte("one\n"))
	if got := out.String(); got != "one\n" {
		t.Fatalf("got %q", got)
	}
	w.Close()
}

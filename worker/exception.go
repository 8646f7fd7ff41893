package worker

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
)

// Frame is one line of a PHP-style stack trace: the function called and the place it was called from.
type Frame struct {
	File     string
	Line     int
	Function string
}

// Exception is an error that carries what PHP's Throwable has: a class name, a message, the place it
// was thrown, a stack trace and a previous exception. The worker builds these for the failures it
// produces itself (MaxAttemptsExceededException, TimeoutExceededException, ManuallyFailedException) and
// for panics; handlers may return one to choose the class PHP tools show.
type Exception struct {
	Class    string // PHP-style fully qualified class name, e.g. Illuminate\Queue\MaxAttemptsExceededException
	Message  string
	File     string
	Line     int
	Trace    []Frame // innermost call first
	Previous error
}

// Error returns the message, as PHP's getMessage does.
func (e *Exception) Error() string { return e.Message }

// Unwrap returns the previous exception.
func (e *Exception) Unwrap() error { return e.Previous }

// PHPClass returns the PHP class name the exception is written under.
func (e *Exception) PHPClass() string { return e.Class }

// newException builds an Exception thrown at the caller's caller, with the Go stack from there.
func newException(class, message string, previous error) *Exception {
	frames := callers(2, 32)
	e := &Exception{Class: class, Message: message, Previous: previous}
	if len(frames) > 0 {
		e.File, e.Line = frames[0].File, frames[0].Line
		e.Trace = frames[1:]
	}
	return e
}

// PanicError is a handler panic recovered by the worker. Its text names the panic value's type as the
// class and lists the Go stack from the panic site outwards.
type PanicError struct {
	Value any
	File  string
	Line  int
	Trace []Frame
}

// Error returns the panic value as text.
func (e *PanicError) Error() string {
	if err, ok := e.Value.(error); ok {
		return err.Error()
	}
	return fmt.Sprint(e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// PHPClass names the panic's class as "panic(<Go type of the value>)", so whoever reads the failed job
// sees at once that the handler panicked and with what.
func (e *PanicError) PHPClass() string {
	return "panic(" + goTypeName(e.Value) + ")"
}

// newPanicError captures the stack of a panic being recovered. It must be called from the deferred
// function that recovered; frames inside the runtime's panic machinery are skipped, and the stack ends
// at stopAt (the worker's own frame that called the handler), which is not shown.
func newPanicError(v any, stopAt string) *PanicError {
	frames := callers(2, 64)
	// The deferred function that recovered sits above runtime.gopanic; the panic site is the first
	// frame after the runtime's panic frames.
	i := 0
	for j, f := range frames {
		if f.Function == "runtime.gopanic" {
			i = j
			break
		}
	}
	for i < len(frames) && strings.HasPrefix(frames[i].Function, "runtime.") {
		i++
	}
	frames = frames[i:]
	for j, f := range frames {
		if f.Function == stopAt || strings.HasSuffix(f.Function, "."+stopAt) {
			frames = frames[:j]
			break
		}
	}
	p := &PanicError{Value: v}
	if len(frames) > 0 {
		p.File, p.Line = frames[0].File, frames[0].Line
		p.Trace = frames[1:]
	}
	return p
}

// callers returns up to max frames starting skip levels above callers itself.
func callers(skip, max int) []Frame {
	pcs := make([]uintptr, max)
	n := runtime.Callers(skip+1, pcs)
	it := runtime.CallersFrames(pcs[:n])
	var out []Frame
	for {
		f, more := it.Next()
		out = append(out, Frame{File: f.File, Line: f.Line, Function: f.Function})
		if !more {
			break
		}
	}
	return out
}

// PHPClasser is implemented by errors that name the PHP class they are written under in failed_jobs
// and in queue:work --json output, e.g. App\Exceptions\UpstreamDown. Other errors are written as
// DefaultExceptionClass.
type PHPClasser interface{ PHPClass() string }

type phpClasser = PHPClasser

// DefaultExceptionClass is the PHP class of an error that does not name one: what PHP code throws for
// a failure it has no better class for.
const DefaultExceptionClass = "RuntimeException"

// phpClassOf returns the PHP class err is written under.
func phpClassOf(err error) string {
	if c, ok := err.(phpClasser); ok && c.PHPClass() != "" {
		return c.PHPClass()
	}
	return DefaultExceptionClass
}

// ExceptionText renders err as PHP's Throwable::__toString does, which is what Laravel stores in the
// failed_jobs exception column: "<class>: <message> in <file>:<line>", "Stack trace:", numbered frames
// and "{main}". Wrapped errors become previous exceptions: the innermost comes first and each outer one
// follows after a blank line and "Next ". Errors that carry no location are placed at fallback (the
// handler's source location, when known).
func ExceptionText(err error, fallback Frame) string {
	if err == nil {
		return ""
	}
	chain := Throwables(err, fallback)
	var b strings.Builder
	for i := len(chain) - 1; i >= 0; i-- {
		if i != len(chain)-1 {
			b.WriteString("\n\nNext ")
		}
		t := chain[i]
		b.WriteString(t.Class)
		if t.Message != "" { // PHP's Exception::__toString leaves out ": " with an empty message
			b.WriteString(": " + t.Message)
		}
		b.WriteString(" in " + t.File + ":" + strconv.Itoa(t.Line) + "\nStack trace:\n")
		b.WriteString(t.TraceString())
	}
	return b.String()
}

// Throwable is one exception of an error's chain as PHP's Throwable shows it: its class, message, the
// place it was thrown and its stack trace.
type Throwable struct {
	Class   string
	Message string
	File    string
	Line    int
	Trace   []Frame // innermost call first
}

// TraceString renders the trace as PHP's getTraceAsString does: numbered frames, then "{main}".
func (t Throwable) TraceString() string {
	var b strings.Builder
	for i, f := range t.Trace {
		b.WriteString("#" + strconv.Itoa(i) + " " + f.File + "(" + strconv.Itoa(f.Line) + "): " + f.Function + "()\n")
	}
	b.WriteString("#" + strconv.Itoa(len(t.Trace)) + " {main}")
	return b.String()
}

// Throwables returns err's chain as PHP exceptions, the outermost (the one thrown) first and each
// previous one after it; errors that carry no location are placed at fallback, as in ExceptionText.
func Throwables(err error, fallback Frame) []Throwable {
	var out []Throwable
	for e := err; e != nil; e = errors.Unwrap(e) {
		out = append(out, throwableOf(e, fallback))
		if _, isPanic := e.(*PanicError); isPanic || len(out) > 32 {
			break
		}
	}
	return out
}

func throwableOf(err error, fallback Frame) Throwable {
	t := Throwable{Class: phpClassOf(err), Message: err.Error(), File: fallback.File, Line: fallback.Line}
	if fallback.Function != "" {
		t.Trace = []Frame{{File: fallback.File, Line: fallback.Line, Function: fallback.Function}}
	}
	switch e := err.(type) {
	case *Exception:
		if e.File != "" {
			t.File, t.Line, t.Trace = e.File, e.Line, e.Trace
		}
	case *PanicError:
		if e.File != "" {
			t.File, t.Line, t.Trace = e.File, e.Line, e.Trace
		}
	}
	if t.File == "" {
		t.File = "[internal]"
	}
	return t
}

// goTypeName names a Go value's type as "package.Type", without pointer stars: how a panic's value is
// named.
func goTypeName(v any) string {
	if v == nil {
		return "nil"
	}
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return t.String()
	}
	pkg := t.PkgPath()
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	if pkg == "" {
		return t.Name()
	}
	return pkg + "." + t.Name()
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/artisan-go/artisan-go/handlers"
)

type classedError struct{}

func (classedError) Error() string    { return "card declined" }
func (classedError) PHPClass() string { return `App\Exceptions\PaymentFailed` }

func TestExceptionText(t *testing.T) {
	t.Parallel()
	at := Frame{File: "/app/handlers.go", Line: 42, Function: "main.sendWelcome"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{
			"plain error at the handler",
			errors.New("smtp down"),
			"RuntimeException: smtp down in /app/handlers.go:42\nStack trace:\n#0 /app/handlers.go(42): main.sendWelcome()\n#1 {main}",
		},
		{
			"class named by the error",
			classedError{},
			"App\\Exceptions\\PaymentFailed: card declined in /app/handlers.go:42\nStack trace:\n#0 /app/handlers.go(42): main.sendWelcome()\n#1 {main}",
		},
		{
			"wrapped: innermost first, then Next",
			fmt.Errorf("charge: %w", classedError{}),
			"App\\Exceptions\\PaymentFailed: card declined in /app/handlers.go:42\nStack trace:\n#0 /app/handlers.go(42): main.sendWelcome()\n#1 {main}\n\n" +
				"Next RuntimeException: charge: card declined in /app/handlers.go:42\nStack trace:\n#0 /app/handlers.go(42): main.sendWelcome()\n#1 {main}",
		},
		{
			"an empty message, as PHP's __toString writes it",
			&Exception{Class: "Illuminate\\Queue\\ManuallyFailedException", File: "/w/worker.go", Line: 7},
			"Illuminate\\Queue\\ManuallyFailedException in /w/worker.go:7\nStack trace:\n#0 {main}",
		},
		{
			"exception with its own place",
			&Exception{Class: MaxAttemptsExceededClass, Message: "X has been attempted too many times.", File: "/w/worker.go", Line: 7, Trace: []Frame{{"/w/worker.go", 9, "worker.(*Worker).process"}}},
			"Illuminate\\Queue\\MaxAttemptsExceededException: X has been attempted too many times. in /w/worker.go:7\nStack trace:\n#0 /w/worker.go(9): worker.(*Worker).process()\n#1 {main}",
		},
	} {
		if got := ExceptionText(tc.err, at); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func panicky(n []int) int { return n[3] }

func callPanicky() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(v, "callPanicky")
		}
	}()
	panicky(nil)
	return nil
}

func TestPanicText(t *testing.T) {
	t.Parallel()
	err := callPanicky()
	text := ExceptionText(err, Frame{})
	lines := strings.Split(text, "\n")
	if !regexp.MustCompile(`^panic\(runtime\.boundsError\): runtime error: index out of range \[3\] with length 0 in .*/exception_test\.go:\d+$`).MatchString(lines[0]) {
		t.Fatalf("first line %q", lines[0])
	}
	if lines[1] != "Stack trace:" || !strings.HasSuffix(lines[len(lines)-1], "{main}") {
		t.Fatalf("layout:\n%s", text)
	}
	if strings.Contains(text, "runtime.gopanic") || strings.Contains(text, "worker.callPanicky()") {
		t.Fatalf("trace includes the panic machinery or the recovering frame:\n%s", text)
	}
	if !strings.Contains(text, "worker.panicky()") && !strings.Contains(lines[0], "exception_test.go") {
		t.Fatalf("trace misses the panic site:\n%s", text)
	}
}

type typedCmd struct{}

func typedTarget(context.Context, *handlers.Job, *typedCmd) error { return nil }

// TestHandlerFrameOfTyped: an error a handlers.Typed function returns is placed at that function, not
// at the wrapper in the handlers package.
func TestHandlerFrameOfTyped(t *testing.T) {
	f := handlerFrame(handlers.Typed(typedTarget))
	if !strings.HasSuffix(f.File, "exception_test.go") || !strings.HasSuffix(f.Function, ".typedTarget") {
		t.Fatalf("frame %+v, want typedTarget in exception_test.go", f)
	}
	f = handlerFrame(handlers.HandlerFunc(func(context.Context, *handlers.Job) error { return nil }))
	if !strings.HasSuffix(f.File, "exception_test.go") {
		t.Fatalf("frame of a HandlerFunc %+v, want this file", f)
	}
}

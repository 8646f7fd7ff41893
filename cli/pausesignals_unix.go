//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/artisan-go/artisan-go/worker"
)

// pauseSignals lets SIGUSR2 pause the worker and SIGCONT resume it, as they do Laravel's, until the
// returned function is called.
func pauseSignals(w *worker.Worker) func() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR2, syscall.SIGCONT)
	go func() {
		for s := range sig {
			if s == syscall.SIGUSR2 {
				w.Pause()
			} else {
				w.Resume()
			}
		}
	}()
	return func() { signal.Stop(sig); close(sig) }
}

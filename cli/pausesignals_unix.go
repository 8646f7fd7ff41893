//go:build unix

package cli

import (
	"log/slog"
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

// stopSignals logs the stop signal that cancels the worker's context (Main's), and makes a second
// one stop it at once (Worker.StopNow): its running jobs are handed back instead of awaited. Process
// managers send one SIGTERM and then SIGKILL, so only a person pressing Ctrl-C twice reaches the
// second. It lasts until the returned function is called.
func stopSignals(w *worker.Worker, log *slog.Logger) func() {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, stopSigs...)
	go func() {
		n := 0
		for s := range sig {
			n++
			if n == 1 {
				log.Info("stop signal received; finishing the running jobs (send it again to stop now and hand them back)", "signal", s.String())
				continue
			}
			log.Warn("second stop signal received; stopping now", "signal", s.String())
			w.StopNow()
		}
	}()
	return func() { signal.Stop(sig); close(sig) }
}

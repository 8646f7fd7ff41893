package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"
)

// AppWrites are the durations of the inserts the application made while a row drained (see
// Params.AppWrites): what the workers cost the writes of the requests beside them (on SQLite, the
// wait for the file's one writer).
type AppWrites struct {
	Inserts int     `json:"inserts"`
	P50MS   float64 `json:"p50_ms"`
	P99MS   float64 `json:"p99_ms"`
	MaxMS   float64 `json:"max_ms"`
}

// appWritesEvery is how often the application inserts.
const appWritesEvery = 10 * time.Millisecond

// appWriter is a `php artisan interop:bench-app-writes` process of Params.PHPApp. It keeps the
// durations it reports between on and off.
type appWriter struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	read   chan struct{} // closed when its output ends
	dir    string

	mu      sync.Mutex
	on      bool
	samples []float64
}

// startAppWriter starts the process and returns once its table is ready.
func (e *env) startAppWriter(ctx context.Context) (*appWriter, error) {
	app, artisan, err := e.artisan()
	if err != nil {
		return nil, fmt.Errorf("--app-writes: %w", err)
	}
	dir, env, err := e.appEnvDir("artisan-go-bench-app-writes-")
	if err != nil {
		return nil, err
	}
	a := &appWriter{read: make(chan struct{}), dir: dir}
	a.cmd = exec.CommandContext(ctx, e.p.PHPBinary, artisan, "interop:bench-app-writes",
		"--every="+strconv.Itoa(int(appWritesEvery/time.Millisecond)))
	a.cmd.Dir = app
	a.cmd.Env = append(os.Environ(), env...)
	a.cmd.Stderr = &a.stderr
	out, err := a.cmd.StdoutPipe()
	if err == nil {
		err = a.cmd.Start()
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("--app-writes: start %s: %w", e.p.PHPBinary, err)
	}
	ready := make(chan struct{})
	go func() {
		defer close(a.read)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if line == "ready" {
				close(ready)
				continue
			}
			ms, err := strconv.ParseFloat(line, 64)
			if err != nil {
				continue
			}
			a.mu.Lock()
			if a.on {
				a.samples = append(a.samples, ms)
			}
			a.mu.Unlock()
		}
	}()
	select {
	case <-ready:
		return a, nil
	case <-a.read:
	case <-ctx.Done():
	}
	_, _ = a.stop()
	return nil, fmt.Errorf("--app-writes: php artisan interop:bench-app-writes did not start: %s", lastLines(a.stderr.String(), 5))
}

// record starts or stops keeping the durations.
func (a *appWriter) record(on bool) {
	a.mu.Lock()
	a.on = on
	a.mu.Unlock()
}

// stop ends the process and returns the figures of the inserts kept, or an error when the process
// had ended by itself (its figures would cover only part of the row).
func (a *appWriter) stop() (*AppWrites, error) {
	a.record(false)
	var early bool
	select {
	case <-a.read:
		early = true
	default:
		_ = a.cmd.Process.Kill()
		<-a.read
	}
	waitErr := a.cmd.Wait()
	os.RemoveAll(a.dir)
	if early {
		return nil, fmt.Errorf("--app-writes: php artisan interop:bench-app-writes stopped during the row (%v): %s", waitErr, lastLines(a.stderr.String(), 5))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.samples) == 0 {
		return nil, nil
	}
	slices.Sort(a.samples)
	return &AppWrites{Inserts: len(a.samples), P50MS: percentile(a.samples, 0.5), P99MS: percentile(a.samples, 0.99), MaxMS: a.samples[len(a.samples)-1]}, nil
}

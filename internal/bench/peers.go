package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Rows of other job queues on the same PostgreSQL server (Params.PeersDir).
const (
	RowRiver    = "River"
	RowGraphile = "graphile-worker"
)

// peerNotes say with which settings each peer runs, for its rows.
var peerNotes = map[string]string{
	RowRiver:    "River v0.51.1, pgx v5, MaxWorkers 2000 per client, one process",
	RowGraphile: "graphile-worker 0.18, 24 jobs, pool 25, local queue 500, a process per worker",
}

// peerResult is what a peer's bench program prints: its own clock, from the start of its workers
// until no unfinished job is left in its table.
type peerResult struct {
	Seconds    float64 `json:"seconds"`
	Executions int     `json:"executions"`
	PeakRSSMB  float64 `json:"peak_rss_mb"`
}

// peers builds or installs the peers' programs once per run, from their own Go module and npm package
// under dir, so that their dependencies stay out of this module.
type peers struct {
	dir   string
	tmp   string
	river string // built binary
}

func preparePeers(ctx context.Context, dir string, progress func(string, ...any)) (*peers, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
		return nil, fmt.Errorf("%w: --peers-dir %s has no go.mod: point it at internal/bench/peers of the source tree", ErrParams, dir)
	}
	tmp, err := os.MkdirTemp("", "artisan-go-bench-peers-")
	if err != nil {
		return nil, err
	}
	p := &peers{dir: abs, tmp: tmp, river: filepath.Join(tmp, "river")}
	progress("peers: building River's bench program")
	build := exec.CommandContext(ctx, "go", "build", "-o", p.river, "./river")
	build.Dir = abs
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("build %s/river: %v: %s", abs, err, lastLines(string(out), 5))
	}
	gdir := filepath.Join(abs, "graphile")
	if _, err := os.Stat(filepath.Join(gdir, "node_modules", "graphile-worker")); err != nil {
		progress("peers: installing graphile-worker (npm ci)")
		install := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		install.Dir = gdir
		if out, err := install.CombinedOutput(); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("npm ci in %s: %v: %s", gdir, err, lastLines(string(out), 5))
		}
	}
	return p, nil
}

func (p *peers) close() { os.RemoveAll(p.tmp) }

// command returns the command that burns down no-op jobs with one peer on workers workers.
func (p *peers) command(ctx context.Context, name, dsn string, jobs, workers int) *exec.Cmd {
	n, w := strconv.Itoa(jobs), strconv.Itoa(workers)
	if name == RowRiver {
		return exec.CommandContext(ctx, p.river, "-dsn", dsn, "-jobs", n, "-workers", w)
	}
	cmd := exec.CommandContext(ctx, "node", "bench.mjs", "--dsn", dsn, "--jobs", n, "--workers", w)
	cmd.Dir = filepath.Join(p.dir, "graphile")
	return cmd
}

// runPeer measures one peer row: the program inserts the jobs into its own tables, runs its workers
// and reports its clock and executions, which become the row.
func (e *env) runPeer(ctx context.Context, p *peers, name string, workers int) Row {
	row := Row{Database: string(e.d.Dialect), Strategy: name, Workers: workers, Jobs: e.p.Jobs, MaxReorder: -1, P50Millis: -1, P99Millis: -1}
	e.p.Progress("%s: %s with %s, %d jobs", e.d.Dialect, name, workersText(workers), e.p.Jobs)
	rctx, cancel := context.WithTimeout(ctx, e.p.Timeout)
	defer cancel()
	log := filepath.Join(p.tmp, "peer.log")
	f, err := os.Create(log)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	defer f.Close()
	cmd := p.command(rctx, name, e.d.DSN, e.p.Jobs, workers)
	var stdout strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, f
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(log)
		row.Error = fmt.Sprintf("%s: %v: %s", name, err, lastLines(string(b)+stdout.String(), 5))
		e.p.Progress("%s: %s: %s", e.d.Dialect, name, row.Error)
		return row
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var res peerResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.Seconds <= 0 {
		row.Error = fmt.Sprintf("%s printed no result: %s", name, lastLines(stdout.String(), 3))
		return row
	}
	row.Seconds, row.JobsPerSec, row.PeakRSSMB = res.Seconds, float64(e.p.Jobs)/res.Seconds, res.PeakRSSMB
	row.Executions = res.Executions
	row.Note = peerNotes[name]
	row.Duplicates = max(0, res.Executions-e.p.Jobs)
	row.Lost = max(0, e.p.Jobs-res.Executions)
	return row
}

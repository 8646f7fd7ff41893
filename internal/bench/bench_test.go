package bench

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
)

var uuidRE = regexp.MustCompile(`"uuid":"[0-9a-f-]{36}"`)

// TestNoopPayloadsAsLaravelWritesThem compares the bench's payloads with the ones Laravel 8.83 itself
// writes when it dispatches App\Jobs\Noop, byte for byte apart from the uuid.
func TestNoopPayloadsAsLaravelWritesThem(t *testing.T) {
	t.Parallel()
	app := phpapp.New(t, testenv.SQLite(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	app.MustDispatch(ctx, "noop", phpapp.Count(3))
	rows, err := app.DB().QueryContext(ctx, "select payload from jobs order by id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var php [][]byte
	for rows.Next() {
		var p []byte
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		php = append(php, p)
	}
	ours, err := noopPayloads(4)
	if err != nil {
		t.Fatal(err)
	}
	if len(php) != 3 {
		t.Fatalf("PHP queued %d jobs", len(php))
	}
	// interop:dispatch numbers its jobs from 1 or from 0; find the offset from the first.
	for off := 0; off <= 1; off++ {
		same := true
		for i, p := range php {
			same = same && bytes.Equal(uuidRE.ReplaceAll(p, nil), uuidRE.ReplaceAll(ours[i+off], nil))
		}
		if same {
			return
		}
	}
	t.Fatalf("payloads differ:\nPHP: %s\nGo:  %s", php[0], ours[0])
}

func TestPlots(t *testing.T) {
	t.Parallel()
	r := &Report{Servers: map[string]string{"mysql": "10.11"}, Rows: []Row{
		{Database: "mysql", Strategy: RowPHP, Workers: 10, JobsPerSec: 500},
		{Database: "mysql", Strategy: RowBare, Workers: 1, JobsPerSec: 4000},
		{Database: "mysql", Strategy: RowBare, Workers: 4, JobsPerSec: 9000},
		{Database: "mysql", Strategy: "batch", Workers: 1, JobsPerSec: 3000},
		{Database: "mysql", Strategy: "batch", Workers: 4, JobsPerSec: 8000},
	}}
	r.Params.Jobs = 100
	var svg, img bytes.Buffer
	if err := r.WriteSVG(&svg); err != nil || !bytes.Contains(svg.Bytes(), []byte("PHP x 10: 500/s")) || bytes.Count(svg.Bytes(), []byte("<circle")) != 4 {
		t.Fatalf("svg: %v\n%s", err, svg.String())
	}
	if err := r.WritePNG(&img); err != nil {
		t.Fatal(err)
	}
	m, err := png.Decode(&img)
	if err != nil {
		t.Fatal(err)
	}
	w, h := r.chartSize()
	if b := m.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("png is %v, want %dx%d", b, w, h)
	}
	if _, _, _, a := m.At(int(marginL)+2, int(marginT+10)+2).RGBA(); a == 0 {
		t.Fatalf("transparent pixel in the chart")
	}
}

// TestSummaryLines checks the lines under the table speak of one worker and one PHP process in the
// singular.
func TestSummaryLines(t *testing.T) {
	t.Parallel()
	r := &Report{Rows: []Row{
		{Database: "pgsql", Strategy: RowPHP, Workers: 1, JobsPerSec: 500},
		{Database: "pgsql", Strategy: RowBare, Workers: 1, JobsPerSec: 4000},
		{Database: "pgsql", Strategy: "batch", Workers: 1, JobsPerSec: 3000},
		{Database: "pgsql", Strategy: RowRiver, Workers: 1, JobsPerSec: 2000},
	}}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"pgsql: best Go row batch × 1 worker, 3000 jobs/s; 6.0× 1 PHP queue:work process; 0.75× the bare SQL loop at its best (1 worker)\n",
		"pgsql, 1 worker: best Go row batch, 3000 jobs/s, 1.50× River (2000 jobs/s)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line %q in\n%s", want, out.String())
		}
	}
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if p := percentile(v, 0.5); p != 5 {
		t.Fatalf("p50 = %v", p)
	}
	if p := percentile(v, 0.99); p != 10 {
		t.Fatalf("p99 = %v", p)
	}
}

func TestWithPostgresOption(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]string{
		"postgres://u@h:5432/db?sslmode=disable": "postgres://u@h:5432/db?sslmode=disable&options=-c%20enable_sort%3Doff",
		"postgresql://u@h/db":                    "postgresql://u@h/db?options=-c%20enable_sort%3Doff",
		"host=h port=5432 dbname=db":             "host=h port=5432 dbname=db options='-c enable_sort=off'",
	} {
		if got := withPostgresOption(dsn, "-c enable_sort=off"); got != want {
			t.Errorf("withPostgresOption(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// TestReadPHPStarts reads the starts PHP workers' Noop jobs write, one file per process, onto the
// protocol's clock.
func TestReadPHPStarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	proto := newProtocol(8)
	base := float64(proto.start.UnixNano()) / 1e9
	files := map[string]string{
		"101": fmt.Sprintf("7 %.6f\n9 %.6f\n", base+0.25, base+1.5),
		"102": fmt.Sprintf("8 %.6f\ntorn", base+0.5),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := readPHPStarts(dir, proto); err != nil {
		t.Fatal(err)
	}
	got := map[int64]time.Duration{}
	for i := range proto.len() {
		got[proto.ids[i]] = time.Duration(proto.at[i])
	}
	want := map[int64]time.Duration{7: 250 * time.Millisecond, 8: 500 * time.Millisecond, 9: 1500 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("starts %v, want %v", got, want)
	}
	for id, at := range want {
		if d := got[id] - at; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("job %d started at %v, want %v", id, got[id], at)
		}
	}
}

// TestMedianRow combines the runs of a row: the median run's figures, every run's duplicates and lost
// jobs added up, a failed run reported as the row.
func TestMedianRow(t *testing.T) {
	t.Parallel()
	runs := []Row{
		{Strategy: "batch", JobsPerSec: 300, Executions: 100, P99Millis: 3},
		{Strategy: "batch", JobsPerSec: 100, Executions: 101, Duplicates: 1, P99Millis: 1},
		{Strategy: "batch", JobsPerSec: 200, Executions: 99, Lost: 1, P99Millis: 2},
	}
	row := medianRow(runs)
	if row.JobsPerSec != 200 || row.P99Millis != 2 || row.Executions != 99 {
		t.Errorf("row %+v: want the figures of the 200 jobs/s run", row)
	}
	if row.Duplicates != 1 || row.Lost != 1 {
		t.Errorf("duplicates %d, lost %d: want every run's, 1 and 1", row.Duplicates, row.Lost)
	}
	if want := []float64{300, 100, 200}; !slices.Equal(row.Runs, want) {
		t.Errorf("runs %v, want %v in the order they ran", row.Runs, want)
	}
	php := medianRow([]Row{{Strategy: RowPHP, JobsPerSec: 5, Duplicates: -1}, {Strategy: RowPHP, JobsPerSec: 7, Duplicates: -1}})
	if php.JobsPerSec != 5 || php.Duplicates != -1 {
		t.Errorf("PHP row %+v: want the lower middle run, duplicates still not observable (-1)", php)
	}
	failed := medianRow(append(slices.Clone(runs), Row{Strategy: "batch", Error: "boom"}))
	if failed.Error != "boom" {
		t.Errorf("row %+v: want the failed run's error", failed)
	}
	if one := medianRow(runs[:1]); one.Runs != nil || one.JobsPerSec != 300 {
		t.Errorf("a single run %+v: want it as it is, without runs", one)
	}
}

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as an aligned text table, one line per row.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "database\tstrategy\tworkers\tjobs\tjobs/s\texecutions\tduplicates\tlost\tmax reorder\tdeadlocks/retried\tp50 ms\tp99 ms\tpeak RSS MB\t")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%d\t%s\t%d\t%s\t%d/%d\t%s\t%s\t%.0f\t", row.Database, row.Strategy, row.Workers,
			row.Jobs, row.JobsPerSec, row.Executions, orDash(row.Duplicates), row.Lost, orDash(row.MaxReorder), row.Deadlocks, row.Retried,
			msOrDash(row.P50Millis), msOrDash(row.P99Millis), row.PeakRSSMB)
		if row.Note != "" {
			fmt.Fprintf(tw, " %s", row.Note)
		}
		if len(row.Runs) > 1 {
			fmt.Fprintf(tw, " median of %d runs, %.0f–%.0f", len(row.Runs), slices.Min(row.Runs), slices.Max(row.Runs))
		}
		if row.Error != "" {
			fmt.Fprintf(tw, " error: %s", row.Error)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.writeSteady(w); err != nil {
		return err
	}
	if err := r.writeAppWrites(w); err != nil {
		return err
	}
	if err := r.writeWrites(w); err != nil {
		return err
	}
	for _, db := range r.databases() {
		best, php, bare, barePK := r.best(db)
		if best == nil {
			continue
		}
		line := fmt.Sprintf("%s: best Go row %s × %s, %.0f jobs/s", db, best.Strategy, workersText(best.Workers), best.JobsPerSec)
		if php != nil && php.JobsPerSec > 0 {
			line += fmt.Sprintf("; %.1f× %s", best.JobsPerSec/php.JobsPerSec, phpWorkersText(php.Workers))
		}
		if bare != nil && bare.JobsPerSec > 0 {
			line += fmt.Sprintf("; %.2f× the bare SQL loop at its best (%s)", best.JobsPerSec/bare.JobsPerSec, workersText(bare.Workers))
		}
		if barePK != nil && barePK.JobsPerSec > 0 {
			line += fmt.Sprintf("; %.2f× the bare loop walking the primary key (%s)", best.JobsPerSec/barePK.JobsPerSec, workersText(barePK.Workers))
		}
		fmt.Fprintln(w, line)
	}
	for _, row := range r.Rows {
		if (row.Strategy == RowRiver || row.Strategy == RowGraphile) && row.Error == "" && row.JobsPerSec > 0 {
			if ours := r.bestAt(row.Database, row.Workers); ours != nil {
				fmt.Fprintf(w, "%s, %s: best Go row %s, %.0f jobs/s, %.2f× %s (%.0f jobs/s)\n", row.Database, workersText(row.Workers),
					ours.Strategy, ours.JobsPerSec, ours.JobsPerSec/row.JobsPerSec, row.Strategy, row.JobsPerSec)
			}
		}
	}
	return nil
}

// bestAt returns the fastest clean Go row of a database at a worker count.
func (r *Report) bestAt(db string, workers int) *Row {
	var best *Row
	for i := range r.Rows {
		row := &r.Rows[i]
		switch row.Strategy {
		case RowPHP, RowBare, RowBarePK, RowRiver, RowGraphile:
			continue
		}
		if row.Database == db && row.Workers == workers && row.Error == "" && row.Lost == 0 && row.Duplicates == 0 &&
			(best == nil || row.JobsPerSec > best.JobsPerSec) {
			best = row
		}
	}
	return best
}

func orDash(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// positiveOr returns v, or or when v is not positive (a figure a report of an older version lacks).
func positiveOr(v, or float64) float64 {
	if v > 0 {
		return v
	}
	return or
}

func msOrDash(v float64) string {
	if v < 0 || math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func (r *Report) databases() []string {
	var out []string
	for _, row := range r.Rows {
		if !slices.Contains(out, row.Database) {
			out = append(out, row.Database)
		}
	}
	return out
}

// best returns the fastest clean Go row, the PHP row and the fastest row of each bare loop of a
// database.
func (r *Report) best(db string) (best, php, bare, barePK *Row) {
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Database != db || row.Error != "" {
			continue
		}
		switch row.Strategy {
		case RowPHP:
			php = row
		case RowBare:
			if bare == nil || row.JobsPerSec > bare.JobsPerSec {
				bare = row
			}
		case RowBarePK:
			if barePK == nil || row.JobsPerSec > barePK.JobsPerSec {
				barePK = row
			}
		case RowRiver, RowGraphile:
		default:
			if row.Lost == 0 && row.Duplicates == 0 && (best == nil || row.JobsPerSec > best.JobsPerSec) {
				best = row
			}
		}
	}
	return best, php, bare, barePK
}

func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// writeAppWrites writes the application's inserts beside each row that timed them.
func (r *Report) writeAppWrites(w io.Writer) error {
	rows := r.rowsWith(func(row Row) bool { return row.AppWrites != nil })
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nthe application's writes beside each row: one insert every %v from php artisan, through its default connection\n", appWritesEvery)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "database\tstrategy\tworkers\tinserts\tp50 ms\tp99 ms\tmax ms\t")
	for _, row := range rows {
		a := row.AppWrites
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t\n", row.Database, row.Strategy, row.Workers, a.Inserts, a.P50MS, a.P99MS, a.MaxMS)
	}
	return tw.Flush()
}

// rowsWith returns the rows keep keeps, in order.
func (r *Report) rowsWith(keep func(Row) bool) []Row {
	var rows []Row
	for _, row := range r.Rows {
		if keep(row) {
			rows = append(rows, row)
		}
	}
	return rows
}

// writeWrites writes the rows that counted their SQLite writes, with the writes per job: SQLite takes
// one write at a time, and each that changed a row flushes to disk, so these set a row's pace.
func (r *Report) writeWrites(w io.Writer) error {
	rows := r.rowsWith(func(row Row) bool { return row.Writes > 0 })
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nthe writes each row sent to the SQLite file: transactions and write statements outside them, each under the file's one write lock")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "database\tstrategy\tworkers\tjobs\twrites\twrites/job\tjobs/s\twrites/s\t")
	for _, row := range rows {
		perSec := 0.0
		if row.Seconds > 0 {
			perSec = float64(row.Writes) / row.Seconds
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.2f\t%.0f\t%.0f\t\n", row.Database, row.Strategy, row.Workers, row.Jobs, row.Writes,
			float64(row.Writes)/float64(max(row.Jobs, 1)), row.JobsPerSec, perSec)
	}
	return tw.Flush()
}

// writeSteady writes the first and last window of the rows run at a steady rate, one line per row.
func (r *Report) writeSteady(w io.Writer) error {
	rows := r.rowsWith(func(row Row) bool { return row.Steady != nil && row.Steady.WindowSeconds > 0 })
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nat a steady rate: each row's first and last window (a minute, or a quarter of a shorter row)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "database\tstrategy\tworkers\twindow s\tp99 ms first\tp99 ms last\tclaim p99 ms first\tclaim p99 ms last\tinsert max ms first\tinsert max ms last\tmax ms\tdepth first\tdepth last\tdead rows at the end\t")
	for _, row := range rows {
		st := row.Steady
		dead := "-"
		if st.DeadRowsKind != "" {
			dead = fmt.Sprintf("%d %s", st.DeadRows, st.DeadRowsKind)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t\n", row.Database, row.Strategy, row.Workers, st.WindowSeconds,
			msOrDash(st.P99FirstMS), msOrDash(st.P99LastMS), msOrDash(st.ClaimP99FirstMS), msOrDash(st.ClaimP99LastMS),
			msOrDash(st.InsertMaxFirstMS), msOrDash(st.InsertMaxLastMS), msOrDash(positiveOr(st.MaxMS, -1)), st.DepthFirst, st.DepthLast, dead)
	}
	return tw.Flush()
}

// workersText is "1 worker" or "n workers".
func workersText(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", n)
}

// phpWorkersText is "1 PHP queue:work process" or "n PHP queue:work processes".
func phpWorkersText(n int) string {
	if n == 1 {
		return "1 PHP queue:work process"
	}
	return fmt.Sprintf("%d PHP queue:work processes", n)
}

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
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
	fmt.Fprintln(tw, "database\tstrategy\tworkers\tjobs/s\texecutions\tduplicates\tlost\tmax reorder\tdeadlocks/retried\tp50 ms\tp99 ms\tpeak RSS MB\t")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%d\t%s\t%d\t%s\t%d/%d\t%s\t%s\t%.0f\t", row.Database, row.Strategy, row.Workers,
			row.JobsPerSec, row.Executions, orDash(row.Duplicates), row.Lost, orDash(row.MaxReorder), row.Deadlocks, row.Retried,
			msOrDash(row.P50Millis), msOrDash(row.P99Millis), row.PeakRSSMB)
		if row.Error != "" {
			fmt.Fprintf(tw, " error: %s", row.Error)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, db := range r.databases() {
		best, php, bare := r.best(db)
		if best == nil {
			continue
		}
		line := fmt.Sprintf("%s: best Go row %s × %d workers, %.0f jobs/s", db, best.Strategy, best.Workers, best.JobsPerSec)
		if php != nil && php.JobsPerSec > 0 {
			line += fmt.Sprintf("; %.1f× %d PHP queue:work processes", best.JobsPerSec/php.JobsPerSec, php.Workers)
		}
		if bare != nil && bare.JobsPerSec > 0 {
			line += fmt.Sprintf("; %.2f× the bare SQL loop (%s workers %d)", best.JobsPerSec/bare.JobsPerSec, "best", bare.Workers)
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

func orDash(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
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

// best returns the fastest clean Go row, the PHP row and the fastest bare row of a database.
func (r *Report) best(db string) (best, php, bare *Row) {
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
		default:
			if row.Lost == 0 && row.Duplicates == 0 && (best == nil || row.JobsPerSec > best.JobsPerSec) {
				best = row
			}
		}
	}
	return best, php, bare
}

// palette gives each series a distinct colour.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// WriteSVG draws jobs/s against worker count, one panel per database and one line per strategy; the
// PHP baseline is a dashed horizontal line.
func (r *Report) WriteSVG(w io.Writer) error {
	dbs := r.databases()
	const pw, ph, ml, mr, mt, mb = 420.0, 320.0, 70.0, 20.0, 40.0, 50.0
	width := float64(len(dbs))*pw + 200
	var series []string
	for _, row := range r.Rows {
		if row.Strategy != RowPHP && !slices.Contains(series, row.Strategy) {
			series = append(series, row.Strategy)
		}
	}
	var workers []int
	for _, row := range r.Rows {
		if row.Strategy != RowPHP && !slices.Contains(workers, row.Workers) {
			workers = append(workers, row.Workers)
		}
	}
	slices.Sort(workers)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", width, ph+30)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="14">artisan-go queue:bench: %d no-op jobs, jobs/s by workers</text>`+"\n", r.Params.Jobs)
	for di, db := range dbs {
		x0 := float64(di)*pw + ml
		y0 := mt + 10
		iw, ih := pw-ml-mr, ph-mt-mb
		top := 0.0
		for _, row := range r.Rows {
			if row.Database == db {
				top = max(top, row.JobsPerSec)
			}
		}
		top = niceCeil(top)
		xAt := func(wk int) float64 {
			i := slices.Index(workers, wk)
			if len(workers) == 1 {
				return x0 + iw/2
			}
			return x0 + iw*float64(i)/float64(len(workers)-1)
		}
		yAt := func(v float64) float64 { return y0 + ih - ih*v/top }
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="13" font-weight="bold">%s %s</text>`+"\n", x0, y0-8, db, xmlEscape(r.Servers[db]))
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", x0, y0, iw, ih)
		for i := 0; i <= 4; i++ {
			v := top * float64(i) / 4
			fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">%.0f</text>`+"\n", x0, x0+iw, yAt(v), yAt(v), x0-4, yAt(v)+4, v)
		}
		for _, wk := range workers {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", xAt(wk), y0+ih+16, wk)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">workers</text>`+"\n", x0+iw/2, y0+ih+34)
		for si, s := range series {
			var pts []string
			for _, row := range r.Rows {
				if row.Database == db && row.Strategy == s && row.Error == "" {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", xAt(row.Workers), yAt(row.JobsPerSec)))
				}
			}
			col := palette[si%len(palette)]
			dash := ""
			if s == RowBare {
				col, dash = "#000", ` stroke-dasharray="2,3"`
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), col, dash)
			for _, pt := range pts {
				x, y, _ := strings.Cut(pt, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", x, y, col)
			}
		}
		for _, row := range r.Rows {
			if row.Database == db && row.Strategy == RowPHP && row.Error == "" {
				fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#777" stroke-width="2" stroke-dasharray="6,4"/><text x="%.0f" y="%.1f" fill="#555">PHP × %d: %.0f/s</text>`+"\n",
					x0, x0+iw, yAt(row.JobsPerSec), yAt(row.JobsPerSec), x0+4, yAt(row.JobsPerSec)-4, row.Workers, row.JobsPerSec)
			}
		}
	}
	lx := float64(len(dbs))*pw + 10
	for si, s := range series {
		col := palette[si%len(palette)]
		if s == RowBare {
			col = "#000"
		}
		y := mt + 20 + float64(si)*18
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n", lx, y-10, col, lx+18, y, xmlEscape(s))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
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

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

package cli

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"golang.org/x/text/width"

	"github.com/artisan-go/artisan-go/payload"
)

// console writes what an artisan command writes, in the style of the configured Laravel version:
// plain lines and Symfony tables before 9.21, and from 9.21 (Laravel's "fresh new look") the
// components style, with INFO and ERROR labels. Messages go to stdout as PHP writes them; errors go
// to stderr, so that scripts can tell them apart.
type console struct {
	out, err io.Writer
	modern   bool
	// decorated colours the output as Symfony Console does (--ansi, or a terminal that takes colours).
	decorated bool
	// width is the terminal's width as Symfony's Terminal reads it (terminalWidth): the lines of
	// twoColumnDetail and task fill it, up to 150 columns.
	width int
}

func newConsole(version string, stdout, stderr io.Writer, decorated bool, width int) *console {
	v, err := payload.ParseVersion(version)
	return &console{out: stdout, err: stderr, modern: err == nil && v.AtLeast(9, 21), decorated: decorated, width: width}
}

// lineWidth is the width Laravel's components fill: the terminal's, at most 150 columns (Task's
// min(terminal()->width(), 150), and the max-w-150 of the two-column view).
func (c *console) lineWidth() int { return min(c.width, 150) }

// paint wraps s in one of Symfony Console's styles when the output is decorated.
func (c *console) paint(style, s string) string { return paint(c.decorated, style, s) }

// info writes a success or information message, as $this->info() or $this->components->info().
func (c *console) info(msg string) { c.label(c.out, "INFO", "info", msg) }

// fail writes an error message, as $this->error() or $this->components->error().
func (c *console) fail(msg string) { c.label(c.err, "ERROR", "error", msg) }

// comment writes a message as $this->comment() does, or a warning in the components style.
func (c *console) comment(msg string) { c.label(c.out, "WARN", "comment", msg) }

// label writes a message: before 9.21 a line in the style's colour; from 9.21 Laravel's Line component
// as Termwind renders it: a blank line, two columns of margin, the label with a column of padding
// either side, a space, the message (its [dynamic content] in bold, a full stop added), two columns of
// margin, and a blank line.
func (c *console) label(w io.Writer, label, style, msg string) {
	if !c.modern {
		fmt.Fprintln(w, c.paint(style, msg))
		return
	}
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "!") && !strings.HasSuffix(msg, "?") {
		msg += "."
	}
	fmt.Fprintf(w, "\n  %s %s  \n\n", c.paint(labelStyles[label], " "+label+" "), c.highlight(msg))
}

// labelStyles are the colours of the components style's labels: white on blue, white on red, black on
// yellow.
var labelStyles = map[string]string{"INFO": "label-info", "ERROR": "error", "WARN": "label-warn"}

// dynamicContent is what Laravel's EnsureDynamicContentIsHighlighted makes bold: text in brackets.
var dynamicContent = regexp.MustCompile(`\[([^\]]+)\]`)

// highlight is EnsureDynamicContentIsHighlighted on decorated output.
func (c *console) highlight(s string) string {
	if !c.decorated {
		return s
	}
	return dynamicContent.ReplaceAllString(s, "\x1b[1m[$1]\x1b[22m")
}

// detail writes one line of $this->components->twoColumnDetail as Termwind renders it: two columns of
// margin, the two texts apart joined by gray dots to the line's width (lineWidth), and two columns of
// margin. The texts may hold colours already (paint); their [dynamic content] is made bold.
func (c *console) detail(first, second string) {
	first, second = c.highlight(first), c.highlight(second)
	dots := max(c.lineWidth()-4-displayWidth(first)-displayWidth(second)-2, 0)
	if second == "" {
		fmt.Fprintf(c.out, "  %s %s  \n", first, c.paint("gray", strings.Repeat(".", dots+1)))
		return
	}
	fmt.Fprintf(c.out, "  %s %s %s  \n", first, c.paint("gray", strings.Repeat(".", dots)), second)
}

// task writes the line of $this->components->task for a task that succeeded in d: the description,
// gray dots (each coloured on its own, as Task writes them) to the line's width (lineWidth), the run
// time in gray and DONE.
func (c *console) task(description string, d time.Duration, v payload.Version) {
	description = c.highlight(description)
	rt := " " + taskRunTime(d, v)
	dots := max(c.lineWidth()-displayWidth(description)-displayWidth(rt)-10, 0)
	fmt.Fprintf(c.out, "  %s %s%s %s\n", description, strings.Repeat(c.paint("gray", "."), dots), c.paint("gray", rt), c.paint("green;bold", "DONE"))
}

// table writes a table as Symfony's Table helper does in its default style: every column as wide as
// its widest cell, each cell padded with one space either side, rows shorter than the widest padded
// with empty cells.
func (c *console) table(headers []string, rows [][]string) {
	cols := len(headers)
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	widths := make([]int, cols)
	all := append([][]string{headers}, rows...)
	for _, r := range all {
		for i, cell := range r {
			widths[i] = max(widths[i], displayWidth(cell))
		}
	}
	var b strings.Builder
	border := func() {
		b.WriteByte('+')
		for _, w := range widths {
			b.WriteString(strings.Repeat("-", w+2))
			b.WriteByte('+')
		}
		b.WriteByte('\n')
	}
	line := func(r []string) {
		b.WriteByte('|')
		for i, w := range widths {
			cell := ""
			if i < len(r) {
				cell = r[i]
			}
			b.WriteString(" " + cell + strings.Repeat(" ", w-displayWidth(cell)) + " |")
		}
		b.WriteByte('\n')
	}
	border()
	b.WriteByte('|')
	for i, w := range widths {
		cell := ""
		if i < len(headers) {
			cell = headers[i]
		}
		// Symfony's default style paints each header cell, its padding included, as <info>.
		b.WriteString(c.paint("info", " "+cell+strings.Repeat(" ", w-displayWidth(cell))+" ") + "|")
	}
	b.WriteByte('\n')
	border()
	for _, r := range rows {
		line(r)
	}
	border()
	io.WriteString(c.out, b.String())
}

// displayWidth is the number of terminal columns s takes, as mb_strwidth counts them: East Asian wide
// and fullwidth characters take two, and colour codes none.
func displayWidth(s string) int {
	n := 0
	for _, r := range ansiCodes.ReplaceAllString(s, "") {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

// progress reports a long operation (a retry or flush of many rows) on stderr: a bar redrawn in
// place on a terminal, otherwise one plain line every tenth of the work (and at the end), so logs stay
// short. PHP's commands print none; stdout keeps only what PHP prints.
type progress struct {
	w         io.Writer
	verb      string
	total     int64
	done      int64
	tty       bool
	nextLine  int64
	lastDrawn time.Time
}

// newProgress starts a progress report for total items; it reports nothing for fewer than min items.
func newProgress(w io.Writer, verb string, total int64, min int64) *progress {
	if total < min {
		return &progress{}
	}
	p := &progress{w: w, verb: verb, total: total, tty: isTerminal(w)}
	p.nextLine = max(total/10, 1)
	return p
}

// add counts n more items done.
func (p *progress) add(n int64) {
	if p.w == nil {
		return
	}
	p.done += n
	if p.tty {
		if time.Since(p.lastDrawn) > 100*time.Millisecond || p.done >= p.total {
			p.lastDrawn = time.Now()
			const barWidth = 28
			filled := int(min(p.done, p.total) * barWidth / max(p.total, 1))
			fmt.Fprintf(p.w, "\r %d/%d [%s%s] %3d%%", p.done, p.total, strings.Repeat("=", filled),
				strings.Repeat("-", barWidth-filled), min(p.done, p.total)*100/max(p.total, 1))
		}
		return
	}
	if p.done >= p.nextLine || p.done >= p.total {
		fmt.Fprintf(p.w, "%s %d of %d\n", p.verb, p.done, p.total)
		for p.nextLine <= p.done {
			p.nextLine += max(p.total/10, 1)
		}
	}
}

// end finishes the bar's line on a terminal.
func (p *progress) end() {
	if p.w != nil && p.tty && p.done > 0 {
		fmt.Fprintln(p.w)
	}
}

// ansiCodes are the colour codes paint writes.
var ansiCodes = regexp.MustCompile("\x1b\\[[0-9;]*m")

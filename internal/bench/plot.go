package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// canvas is what the chart draws on: an SVG document or a PNG image.
type canvas interface {
	line(x1, y1, x2, y2 float64, col string, width float64, dash bool)
	rect(x, y, w, h float64, col string, fill bool)
	dot(x, y float64, col string)
	text(x, y float64, s string, col string, anchor int) // anchor -1 left, 0 middle, 1 right
}

// palette gives each series a distinct colour.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

const panelW, panelH, marginL, marginR, marginT, marginB = 420.0, 320.0, 70.0, 20.0, 40.0, 50.0

// chartSize returns the width and height of the chart of r.
func (r *Report) chartSize() (int, int) {
	return int(float64(len(r.databases()))*panelW + 200), int(panelH + 30)
}

// draw draws jobs/s against worker count, one panel per database and one line per strategy; the PHP
// baseline is a dashed horizontal line and the bare SQL loops dotted black and grey ones.
func (r *Report) draw(cv canvas) {
	dbs := r.databases()
	var series []string
	var workers []int
	for _, row := range r.Rows {
		if row.Strategy == RowPHP {
			continue
		}
		if !slices.Contains(series, row.Strategy) {
			series = append(series, row.Strategy)
		}
		if !slices.Contains(workers, row.Workers) {
			workers = append(workers, row.Workers)
		}
	}
	slices.Sort(workers)
	colour := func(s string) string {
		switch s {
		case RowBare:
			return "#000000"
		case RowBarePK:
			return "#777777"
		}
		return palette[slices.Index(series, s)%len(palette)]
	}
	cv.text(10, 18, fmt.Sprintf("artisan-go queue:bench: %d no-op jobs, jobs/s by workers", r.Params.Jobs), "#000000", -1)
	for di, db := range dbs {
		x0, y0 := float64(di)*panelW+marginL, marginT+10
		iw, ih := panelW-marginL-marginR, panelH-marginT-marginB
		top := 0.0
		for _, row := range r.Rows {
			if row.Database == db {
				top = max(top, row.JobsPerSec)
			}
		}
		top = niceCeil(top)
		xAt := func(wk int) float64 {
			if len(workers) == 1 {
				return x0 + iw/2
			}
			return x0 + iw*float64(slices.Index(workers, wk))/float64(len(workers)-1)
		}
		yAt := func(v float64) float64 { return y0 + ih - ih*v/top }
		cv.text(x0, y0-8, db+" "+r.Servers[db], "#000000", -1)
		for i := 0; i <= 4; i++ {
			v := top * float64(i) / 4
			cv.line(x0, yAt(v), x0+iw, yAt(v), "#eeeeee", 1, false)
			cv.text(x0-4, yAt(v)+4, strconv.FormatFloat(v, 'f', 0, 64), "#000000", 1)
		}
		cv.rect(x0, y0, iw, ih, "#888888", false)
		for _, wk := range workers {
			cv.text(xAt(wk), y0+ih+16, strconv.Itoa(wk), "#000000", 0)
		}
		cv.text(x0+iw/2, y0+ih+34, "workers", "#000000", 0)
		for _, s := range series {
			var px, py float64
			first := true
			for _, row := range r.Rows {
				if row.Database != db || row.Strategy != s || row.Error != "" {
					continue
				}
				x, y := xAt(row.Workers), yAt(row.JobsPerSec)
				if !first {
					cv.line(px, py, x, y, colour(s), 2, s == RowBare || s == RowBarePK)
				}
				cv.dot(x, y, colour(s))
				px, py, first = x, y, false
			}
		}
		for _, row := range r.Rows {
			if row.Database == db && row.Strategy == RowPHP && row.Error == "" {
				y := yAt(row.JobsPerSec)
				cv.line(x0, y, x0+iw, y, "#777777", 2, true)
				cv.text(x0+4, y-4, fmt.Sprintf("PHP x %d: %.0f/s", row.Workers, row.JobsPerSec), "#555555", -1)
			}
		}
	}
	lx := float64(len(dbs))*panelW + 10
	for si, s := range series {
		y := marginT + 20 + float64(si)*18
		cv.rect(lx, y-10, 12, 12, colour(s), true)
		cv.text(lx+18, y, s, "#000000", -1)
	}
}

// WriteSVG draws the chart as an SVG document.
func (r *Report) WriteSVG(w io.Writer) error {
	width, height := r.chartSize()
	c := &svgCanvas{}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	c.b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	r.draw(c)
	c.b.WriteString("</svg>\n")
	_, err := io.WriteString(w, c.b.String())
	return err
}

// WritePNG draws the chart as a PNG image.
func (r *Report) WritePNG(w io.Writer) error {
	width, height := r.chartSize()
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	r.draw(&pngCanvas{img: img})
	return png.Encode(w, img)
}

type svgCanvas struct{ b strings.Builder }

func (c *svgCanvas) line(x1, y1, x2, y2 float64, col string, width float64, dash bool) {
	d := ""
	if dash {
		d = ` stroke-dasharray="5,4"`
	}
	fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.0f"%s/>`+"\n", x1, y1, x2, y2, col, width, d)
}

func (c *svgCanvas) rect(x, y, w, h float64, col string, fill bool) {
	paint := `fill="none" stroke="` + col + `"`
	if fill {
		paint = `fill="` + col + `"`
	}
	fmt.Fprintf(&c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s/>`+"\n", x, y, w, h, paint)
}

func (c *svgCanvas) dot(x, y float64, col string) {
	fmt.Fprintf(&c.b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x, y, col)
}

func (c *svgCanvas) text(x, y float64, s, col string, anchor int) {
	a := map[int]string{-1: "start", 0: "middle", 1: "end"}[anchor]
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
	fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" fill="%s" text-anchor="%s">%s</text>`+"\n", x, y, col, a, esc)
}

type pngCanvas struct{ img *image.RGBA }

func parseColour(s string) color.RGBA {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
}

func (c *pngCanvas) line(x1, y1, x2, y2 float64, col string, width float64, dash bool) {
	rgba := parseColour(col)
	n := int(math.Max(math.Abs(x2-x1), math.Abs(y2-y1))) + 1
	for i := 0; i <= n; i++ {
		if dash && (i/5)%2 == 1 {
			continue
		}
		t := float64(i) / float64(n)
		x, y := x1+(x2-x1)*t, y1+(y2-y1)*t
		for d := 0.0; d < width; d++ {
			c.img.Set(int(x), int(y+d-width/2+0.5), rgba)
		}
	}
}

func (c *pngCanvas) rect(x, y, w, h float64, col string, fill bool) {
	if fill {
		draw.Draw(c.img, image.Rect(int(x), int(y), int(x+w), int(y+h)), &image.Uniform{parseColour(col)}, image.Point{}, draw.Src)
		return
	}
	c.line(x, y, x+w, y, col, 1, false)
	c.line(x, y+h, x+w, y+h, col, 1, false)
	c.line(x, y, x, y+h, col, 1, false)
	c.line(x+w, y, x+w, y+h, col, 1, false)
}

func (c *pngCanvas) dot(x, y float64, col string) {
	rgba := parseColour(col)
	for dx := -3; dx <= 3; dx++ {
		for dy := -3; dy <= 3; dy++ {
			if dx*dx+dy*dy <= 9 {
				c.img.Set(int(x)+dx, int(y)+dy, rgba)
			}
		}
	}
}

func (c *pngCanvas) text(x, y float64, s, col string, anchor int) {
	d := &font.Drawer{Dst: c.img, Src: &image.Uniform{parseColour(col)}, Face: basicfont.Face7x13}
	w := d.MeasureString(s).Round()
	switch anchor {
	case 0:
		x -= float64(w) / 2
	case 1:
		x -= float64(w)
	}
	d.Dot = fixed.P(int(x), int(y))
	d.DrawString(s)
}

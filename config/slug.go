package config

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// asciiFold maps letters that do not decompose into a base letter and accents.
var asciiFold = strings.NewReplacer(
	"ß", "ss", "æ", "ae", "Æ", "AE", "œ", "oe", "Œ", "OE", "ø", "o", "Ø", "O",
	"ł", "l", "Ł", "L", "đ", "d", "Đ", "D", "þ", "th", "Þ", "TH", "ð", "d", "Ð", "D",
)

// slug does what Laravel's Str::slug($title, $separator) does to an application name, to build the
// default cache prefix: transliterate to ASCII (accents dropped; letters without an ASCII form are
// kept), turn the other separator into this one, spell '@' as "at", lower-case, drop everything but
// letters, digits, whitespace and the separator, collapse runs of separators and whitespace into one
// separator and trim it from both ends. Names in non-Latin scripts, which Laravel transliterates
// with tables this does not have, should set CACHE_PREFIX.
func slug(title string, sep rune) string {
	flip := '-'
	if sep == '-' {
		flip = '_'
	}
	title = asciiFold.Replace(title)
	var folded strings.Builder
	for _, r := range norm.NFKD.String(title) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if r == flip {
			r = sep
		}
		folded.WriteRune(r)
	}
	title = strings.ReplaceAll(folded.String(), "@", string(sep)+"at"+string(sep))
	var b strings.Builder
	pending := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r == sep || unicode.IsSpace(r):
			pending = b.Len() > 0
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if pending {
				b.WriteRune(sep)
				pending = false
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

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
// default cache prefix: transliterate to ASCII (accents dropped), turn the other separator into this
// one, spell '@' as "at", lower-case, drop everything but ASCII letters, digits, whitespace and the
// separator, collapse runs of separators and whitespace into one separator and trim it from both
// ends. Laravel transliterates other scripts, symbols (™, €, ½) and letters of their own (ı, ħ) with
// tables this does not have (it drops Chinese, Japanese and Korean as this does); exact reports
// whether the title had none of those, and the result can be trusted.
func slug(title string, sep rune) string {
	s, _ := slugExact(title, sep)
	return s
}

// slugExact is slug, also reporting whether the title had only letters it can transliterate as
// Laravel does.
func slugExact(title string, sep rune) (string, bool) {
	exact := true
	flip := '-'
	if sep == '-' {
		flip = '_'
	}
	title = asciiFold.Replace(title)
	for _, r := range title {
		if r > unicode.MaxASCII && !latinWithAccents(r) && !unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			exact = false // a symbol, a letter of its own (ı, ħ) or another script: Laravel's tables decide
		}
	}
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
		case r > unicode.MaxASCII:
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if pending {
				b.WriteRune(sep)
				pending = false
			}
			b.WriteRune(r)
		}
	}
	return b.String(), exact
}

// latinWithAccents reports whether r is a Latin letter that decomposes into an ASCII letter and
// accents (é, Ł excepted: asciiFold has those), which Laravel's transliteration and this agree on.
func latinWithAccents(r rune) bool {
	if !unicode.Is(unicode.Latin, r) {
		return false
	}
	d := []rune(norm.NFD.String(string(r)))
	if len(d) < 2 || d[0] > unicode.MaxASCII || !unicode.IsLetter(d[0]) {
		return false
	}
	for _, m := range d[1:] {
		if !unicode.Is(unicode.Mn, m) {
			return false
		}
	}
	return true
}

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

// latinWithAccents reports whether r is a Latin letter with accents that Laravel's transliteration
// (portable-ascii) and this agree on: those of Latin-1 and Latin Extended-A, pinyin's, Romanian's and
// Vietnamese's, and a few more; Laravel drops most others of Latin Extended-B and Additional (ḥ,
// ȁ), which this would keep. Read off Str::slug of every letter of those blocks.
func latinWithAccents(r rune) bool {
	return unicode.Is(slugTrusted, r)
}

var slugTrusted = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00c0, 0x00d6, 1},
		{0x00d8, 0x00f6, 1},
		{0x00f8, 0x0125, 1},
		{0x0128, 0x0130, 1},
		{0x0134, 0x0137, 1},
		{0x0139, 0x013e, 1},
		{0x0141, 0x0148, 1},
		{0x014c, 0x0165, 1},
		{0x0168, 0x017e, 1},
		{0x01a0, 0x01a1, 1},
		{0x01af, 0x01b0, 1},
		{0x01cd, 0x01dc, 1},
		{0x01ea, 0x01eb, 1},
		{0x01f0, 0x01f0, 1},
		{0x01f8, 0x01fb, 1},
		{0x0218, 0x021b, 1},
		{0x0226, 0x0229, 1},
		{0x022e, 0x022f, 1},
		{0x0232, 0x0233, 1},
		{0x1e36, 0x1e37, 1},
		{0x1e44, 0x1e47, 1},
		{0x1e60, 0x1e63, 1},
		{0x1e6a, 0x1e6d, 1},
		{0x1e80, 0x1e85, 1},
		{0x1e8e, 0x1e93, 1},
		{0x1e97, 0x1e97, 1},
		{0x1ea0, 0x1ef9, 1},
	},
}

package laravel

import (
	"regexp"
	"strings"
	"unicode"
)

// ModelTable returns the table Eloquent uses for a model class that does not set $table: the snake case
// of the class basename with its last word made plural (Str::snake(Str::pluralStudly(class_basename))),
// e.g. App\Models\UserProfile → user_profiles, App\Models\Person → people. The plural follows the
// English rules of Laravel's Pluralizer for the common cases (irregular and uncountable words, -y, -s,
// -x, -ch, -sh, -f, -fe, -is, -us, -um); a model whose table is named otherwise is configured.
func ModelTable(class string) string {
	base := class
	if i := strings.LastIndexByte(base, '\\'); i >= 0 {
		base = base[i+1:]
	}
	// The last word starts at the last upper-case letter that follows another character.
	cut := 0
	for i, r := range base {
		if i > 0 && unicode.IsUpper(r) {
			cut = i
		}
	}
	return snake(base[:cut] + Plural(base[cut:]))
}

// snake is Str::snake for a StudlyCase name: an underscore before each upper-case letter that follows
// another character, then lower case.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// uncountable are the words Laravel's Pluralizer leaves as they are.
var uncountable = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`audio bison cattle chassis compensation coreopsis data deer education emoji
		equipment evidence feedback firmware fish furniture gold hardware information jedi kin knowledge love
		metadata money moose news nutrition offspring plankton pokemon police rain recommended related rice
		series sheep software species swine traffic wheat`) {
		uncountable[w] = true
	}
}

// irregular are plurals no rule makes.
var irregular = map[string]string{
	"person": "people", "man": "men", "woman": "women", "child": "children", "tooth": "teeth",
	"foot": "feet", "goose": "geese", "ox": "oxen", "criterion": "criteria", "medium": "media",
	"cafe": "cafes", "move": "moves", "sex": "sexes", "zombie": "zombies", "cookie": "cookies",
	"movie": "movies", "genus": "genera", "octopus": "octopuses", "niche": "niches", "human": "humans",
}

// pluralRules are tried in order on a lower-case word; the first that matches makes the plural.
var pluralRules = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(quiz)$`), "${1}zes"},
	{regexp.MustCompile(`([ml])ouse$`), "${1}ice"},
	{regexp.MustCompile(`(matr|vert|ind)(ix|ex)$`), "${1}ices"},
	{regexp.MustCompile(`(x|ch|ss|sh|zz)$`), "${1}es"},
	{regexp.MustCompile(`([^aeiouy]|qu)y$`), "${1}ies"},
	{regexp.MustCompile(`(hive|gulf|roof|chief|proof|belief)$`), "${1}s"},
	{regexp.MustCompile(`([^f])fe$`), "${1}ves"},
	{regexp.MustCompile(`([lr])f$`), "${1}ves"},
	{regexp.MustCompile(`(lea|loa|thie)f$`), "${1}ves"},
	{regexp.MustCompile(`sis$`), "ses"},
	{regexp.MustCompile(`([ti])um$`), "${1}a"},
	{regexp.MustCompile(`(buffal|her|potat|tomat|volcan|ech)o$`), "${1}oes"},
	{regexp.MustCompile(`(alumn|bacill|cact|foc|fung|nucle|radi|stimul|syllab|termin|vir)us$`), "${1}i"},
	{regexp.MustCompile(`(bu)s$`), "${1}ses"},
	{regexp.MustCompile(`(alias|status|campus|gas|bias|plus)$`), "${1}es"},
	{regexp.MustCompile(`us$`), "uses"},
	{regexp.MustCompile(`s$`), "s"},
}

// Plural returns the English plural of a word as Laravel's Str::plural makes it for common words,
// keeping the word's case (Person → People).
func Plural(word string) string {
	lower := strings.ToLower(word)
	if lower == "" || uncountable[lower] {
		return word
	}
	plural, ok := irregular[lower]
	if !ok {
		plural = lower + "s"
		for _, r := range pluralRules {
			if r.re.MatchString(lower) {
				plural = r.re.ReplaceAllString(lower, r.repl)
				break
			}
		}
	}
	switch {
	case word == strings.ToUpper(word):
		return strings.ToUpper(plural)
	case unicode.IsUpper([]rune(word)[0]):
		return strings.ToUpper(plural[:1]) + plural[1:]
	}
	return plural
}

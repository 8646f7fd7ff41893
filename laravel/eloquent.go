package laravel

import (
	"regexp"
	"strings"
	"unicode"
)

// ModelTable returns the table Eloquent uses for a model class that does not set $table: the snake case
// of the class basename with its last word made plural (Str::snake(Str::pluralStudly(class_basename))),
// e.g. App\Models\UserProfile → user_profiles, App\Models\Person → people, App\Models\Staff → staff.
// The plural is Laravel's Pluralizer's (see Plural); a model whose table is named otherwise is
// configured.
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

// uncountable are the words Laravel's Pluralizer itself leaves as they are.
var uncountable = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`audio bison cattle chassis compensation coreopsis data deer education emoji
		equipment evidence feedback firmware fish furniture gold hardware information jedi kin knowledge love
		metadata money moose news nutrition offspring plankton pokemon police rain recommended related rice
		series sheep software species swine traffic wheat`) {
		uncountable[w] = true
	}
}

// The English plural rules below are those Laravel's Pluralizer takes from Doctrine's inflector, as
// PHP applies them (TestModelTableAsPHP compares a word list with PHP's Str::pluralStudly): a word
// uninflected is its own plural, then an irregular word's plural, then the first rule that matches, else
// the word and "s".

// uninflected are the words whose plural is the word itself besides those of uncountable, and
// patterns of such words (matched whole, in any case).
var uninflected = regexp.MustCompile(`(?i)^(?:` + strings.Join(append(strings.Fields(`
		advice aircraft amoyese art audio baggage bison borghese bream breeches britches buffalo butter
		cantus carp cattle chassis clippers clothing coal cod coitus compensation congoese contretemps
		coreopsis corps cotton data debris deer diabetes djinn education eland elk emoji equipment
		evidence faroese feedback fish flounder flour foochowese food furniture gallows genevese genoese
		gilbertese gold headquarters herpes hijinks homework hottentotese impatience information innings
		jackanapes jeans jedi kin kiplingese knowledge kongoese leather love lucchese luggage mackerel
		maltese management media metadata mews money moose mumps music nankingese news nexus niasese
		nutrition offspring oil patience pekingese people piedmontese pincers pistoiese plankton pliers
		pokemon police polish portuguese proceedings progress rabies rain research rhinoceros rice salmon
		sand sarawakese scissors series shavese shears sheep siemens silk sms soap spam species staff
		sugar swine talent toothpaste traffic travel trivia trousers trout tuna us vermontese vinegar
		weather wenchowese wheat whiting wildebeest wood wool yengeese`),
	`\w+media`, `sea[- ]bass`, `social media`, `\w+ware$`), "|") + `)$`)

// irregular are plurals no rule makes, by the lower-case singular.
var irregular = map[string]string{
	"abuse": "abuses", "atlas": "atlases", "avalanche": "avalanches", "axe": "axes", "beef": "beefs",
	"blouse": "blouses", "brother": "brothers", "cache": "caches", "cafe": "cafes",
	"canvas": "canvases", "chateau": "chateaux", "child": "children", "cookie": "cookies",
	"corpus": "corpuses", "cow": "cows", "criterion": "criteria", "curriculum": "curricula",
	"curve": "curves", "demo": "demos", "domino": "dominoes", "echo": "echoes",
	"emphasis": "emphases", "foe": "foes", "foot": "feet", "fungus": "fungi", "ganglion": "ganglions",
	"gas": "gases", "genie": "genies", "genus": "genera", "goose": "geese", "graffito": "graffiti",
	"grave": "graves", "hippopotamus": "hippopotami", "hoax": "hoaxes", "hoof": "hoofs",
	"human": "humans", "iris": "irises", "larva": "larvae", "leaf": "leaves", "lens": "lenses",
	"loaf": "loaves", "man": "men", "medium": "media", "memorandum": "memoranda", "money": "monies",
	"mongoose": "mongooses", "motto": "mottoes", "move": "moves", "mythos": "mythoi",
	"neurosis": "neuroses", "niche": "niches", "niveau": "niveaux", "nucleus": "nuclei",
	"numen": "numina", "oasis": "oases", "occiput": "occiputs", "octopus": "octopuses",
	"opus": "opuses", "ox": "oxen", "passerby": "passersby", "penis": "penises", "person": "people",
	"plateau": "plateaux", "runner-up": "runners-up", "safe": "safes", "save": "saves",
	"sex": "sexes", "sieve": "sieves", "soliloquy": "soliloquies", "son-in-law": "sons-in-law",
	"syllabus": "syllabi", "testis": "testes", "thief": "thieves", "tooth": "teeth",
	"tornado": "tornadoes", "trilby": "trilbys", "turf": "turfs", "valve": "valves",
	"volcano": "volcanoes", "wave": "waves", "zombie": "zombies",
}

// pluralRules are tried in order, in any case; the first that matches makes the plural.
var pluralRules = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)(s)tatus$`), "${1}tatuses"},
	{regexp.MustCompile(`(?i)(quiz)$`), "${1}zes"},
	{regexp.MustCompile(`(?i)^(ox)$`), "${1}en"},
	{regexp.MustCompile(`(?i)([m|l])ouse$`), "${1}ice"},
	{regexp.MustCompile(`(?i)(matr|vert|ind)(ix|ex)$`), "${1}ices"},
	{regexp.MustCompile(`(?i)(x|ch|ss|sh)$`), "${1}es"},
	{regexp.MustCompile(`(?i)([^aeiouy]|qu)y$`), "${1}ies"},
	{regexp.MustCompile(`(?i)(hive|gulf)$`), "${1}s"},
	{regexp.MustCompile(`(?i)(?:([^f])fe|([lr])f)$`), "${1}${2}ves"},
	{regexp.MustCompile(`(?i)sis$`), "ses"},
	{regexp.MustCompile(`(?i)([ti])um$`), "${1}a"},
	{regexp.MustCompile(`(?i)(tax)on$`), "${1}a"},
	{regexp.MustCompile(`(?i)(c)riterion$`), "${1}riteria"},
	{regexp.MustCompile(`(?i)(p)erson$`), "${1}eople"},
	{regexp.MustCompile(`(?i)(m)an$`), "${1}en"},
	{regexp.MustCompile(`(?i)(c)hild$`), "${1}hildren"},
	{regexp.MustCompile(`(?i)(f)oot$`), "${1}eet"},
	{regexp.MustCompile(`(?i)(buffal|her|potat|tomat|volcan)o$`), "${1}oes"},
	{regexp.MustCompile(`(?i)(alumn|bacill|cact|foc|fung|nucle|radi|stimul|syllab|termin|vir)us$`), "${1}i"},
	{regexp.MustCompile(`(?i)us$`), "uses"},
	{regexp.MustCompile(`(?i)(alias)$`), "${1}es"},
	{regexp.MustCompile(`(?i)(analys|ax|cris|test|thes)is$`), "${1}es"},
	{regexp.MustCompile(`(?i)s$`), "s"},
}

// endsInWordChar is Pluralizer::plural's check that a word ends in a letter, a digit or a non-ASCII
// character; any other is its own plural.
var endsInWordChar = regexp.MustCompile(`[A-Za-z0-9\x{0080}-\x{FFFF}]$`)

// Plural returns the English plural of a word as Laravel's Str::plural makes it, in the word's case
// (Person → People, PERSON → PEOPLE).
func Plural(word string) string {
	lower := strings.ToLower(word)
	if word == "" || uncountable[lower] || !endsInWordChar.MatchString(word) || uninflected.MatchString(word) {
		return word
	}
	plural, ok := irregular[lower]
	if !ok {
		plural = word + "s"
		for _, r := range pluralRules {
			if r.re.MatchString(word) {
				plural = r.re.ReplaceAllString(word, r.repl)
				break
			}
		}
	}
	return matchCase(plural, word)
}

// matchCase is Pluralizer::matchCase: the plural in lower case, upper case or with its first letter
// upper case when the word is so, else as it is.
func matchCase(plural, word string) string {
	switch {
	case strings.ToLower(word) == word:
		return strings.ToLower(plural)
	case strings.ToUpper(word) == word:
		return strings.ToUpper(plural)
	case ucfirst(word) == word:
		return ucfirst(plural)
	}
	return plural
}

// ucfirst is PHP's ucfirst: the first byte upper case when it is an ASCII letter.
func ucfirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

package laravel

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

func TestModelTable(t *testing.T) {
	t.Parallel()
	for class, want := range map[string]string{
		`App\Models\User`:        "users",
		`App\Models\UserProfile`: "user_profiles",
		`App\Models\Person`:      "people",
		`App\Person`:             "people",
		`App\Models\Category`:    "categories",
		`App\Models\Day`:         "days",
		`App\Models\Box`:         "boxes",
		`App\Models\Match`:       "matches",
		`App\Models\Address`:     "addresses",
		`App\Models\Status`:      "statuses",
		`App\Models\Bus`:         "buses",
		`App\Models\Child`:       "children",
		`App\Models\Equipment`:   "equipment",
		`App\Models\OrderItem`:   "order_items",
		`App\Models\Wife`:        "wives",
		`App\Models\Leaf`:        "leaves",
		`App\Models\Analysis`:    "analyses",
		`App\Models\Medium`:      "media",
		`App\Models\Potato`:      "potatoes",
		`App\Models\Photo`:       "photos",
		`App\Models\Mouse`:       "mice",
		`App\Models\Index`:       "indices",
		`App\Models\Quiz`:        "quizzes",
		`App\Models\Roof`:        "roofs",
		`App\Models\News`:        "news",
		`App\Models\BlogPost`:    "blog_posts",
		`Post`:                   "posts",
	} {
		if got := ModelTable(class); got != want {
			t.Errorf("ModelTable(%s) = %q, want %q", class, got, want)
		}
	}
}

// TestModelTableAsPHP compares ModelTable with the tables Laravel 8.83 names for the words of
// testdata/model-tables.tsv (written by PHP; internal/interop checks the file against PHP): common model
// names and every word the English inflector treats as its own plural or irregular.
func TestModelTableAsPHP(t *testing.T) {
	t.Parallel()
	for word, want := range ModelTablesAsPHP(t) {
		if got := ModelTable(`App\Models\` + word); got != want {
			t.Errorf("ModelTable(App\\Models\\%s) = %q, PHP's %q", word, got, want)
		}
	}
}

// ModelTablesAsPHP reads testdata/model-tables.tsv: the model class basename and the table PHP names.
func ModelTablesAsPHP(t testing.TB) map[string]string {
	t.Helper()
	f, err := os.Open("testdata/model-tables.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if word, table, ok := strings.Cut(sc.Text(), "\t"); ok && !strings.HasPrefix(word, "#") {
			tables[word] = table
		}
	}
	if err := sc.Err(); err != nil || len(tables) < 500 {
		t.Fatalf("testdata/model-tables.tsv: %d words (%v)", len(tables), err)
	}
	return tables
}

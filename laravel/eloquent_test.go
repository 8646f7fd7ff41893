package laravel

import "testing"

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

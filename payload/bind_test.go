package payload

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

type podcastJob struct {
	User      ModelIdentifier `php:"user"`
	Users     ModelIdentifier `php:"users"`
	PublishAt time.Time       `php:"publishAt"`
	Status    string          `php:"status"`
	StatusE   *Enum           `php:"status"`
	Queue     *string         `php:"queue"`
	Chained   []string        `php:"chained"`
	Missing   int             `php:"notThere"`
	Ignored   string          `php:"-"`
}

func TestBindPodcast(t *testing.T) {
	v, err := Unserialize([]byte(fixtureCommand(t, "podcast")))
	if err != nil {
		t.Fatal(err)
	}
	job := podcastJob{Missing: 7, Ignored: "keep"}
	if err := Bind(v, &job); err != nil {
		t.Fatal(err)
	}
	if job.User.Class != `App\Models\User` || job.User.ID != int64(1) || *job.User.Connection != "mysql" || job.User.IsCollection() {
		t.Errorf("user %+v", job.User)
	}
	if !reflect.DeepEqual(job.Users.IDs(), []any{int64(1), int64(2)}) || !job.Users.IsCollection() || job.Users.Relations == nil {
		t.Errorf("users %+v", job.Users)
	}
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		t.Skip("no tzdata on this system")
	}
	if want := time.Date(2026, 12, 24, 18, 30, 0, 0, prague); !job.PublishAt.Equal(want) || job.PublishAt.Location().String() != "Europe/Prague" {
		t.Errorf("publishAt %v", job.PublishAt)
	}
	if job.Status != "Published" || job.StatusE.Class != `App\Status` || job.Queue != nil || job.Chained == nil || len(job.Chained) != 0 {
		t.Errorf("status/queue/chained %+v", job)
	}
	if job.Missing != 7 || job.Ignored != "keep" {
		t.Errorf("missing or ignored fields changed: %+v", job)
	}
}

func TestBindWelcome(t *testing.T) {
	v, err := Unserialize([]byte(fixtureCommand(t, "welcome")))
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Email      string
		UserID     int32 `php:"userId"`
		Tags       []string
		Meta       map[string]any
		Score      float32
		VIP        bool `php:"vip"`
		Nothing    *int
		Locale     string
		SecretNote []byte
		Raw        Value `php:"meta"`
	}
	if err := Bind(v, &job); err != nil {
		t.Fatal(err)
	}
	if job.Email != "ana@example.com" || job.UserID != 42 || !reflect.DeepEqual(job.Tags, []string{"new", "vip"}) || job.Score != 9.75 || !job.VIP || job.Nothing != nil {
		t.Errorf("%+v", job)
	}
	if job.Locale != "en_GB" || string(job.SecretNote) != "line1\nline2 \"quoted\" ünïcødé" || job.Meta["seats"] != int64(3) {
		t.Errorf("protected/private/map: %+v", job)
	}
	if _, ok := job.Raw.(*Array); !ok {
		t.Errorf("Value field got %T", job.Raw)
	}
}

func TestBindDates(t *testing.T) {
	date := func(typ int64, zone string) *Object {
		return NewObject(`DateTimeImmutable`).Set("date", "2024-01-02 03:04:05.500000").Set("timezone_type", typ).Set("timezone", zone)
	}
	for _, tt := range []struct {
		v      *Object
		offset int
	}{{date(1, "+02:00"), 7200}, {date(1, "-05:30"), -19800}, {date(2, "CEST"), 7200}, {date(3, "UTC"), 0}} {
		var tm time.Time
		if err := Bind(tt.v, &tm); err != nil {
			t.Fatal(err)
		}
		if _, off := tm.Zone(); off != tt.offset || tm.Nanosecond() != 500000000 || tm.Hour() != 3 {
			t.Errorf("%v: %v", tt.v.Props, tm)
		}
	}
	for _, bad := range []*Object{date(3, "Mars/Olympus"), date(2, "XYZT"), date(1, "0200"), date(4, "UTC"), NewObject("X")} {
		var tm time.Time
		if err := Bind(bad, &tm); !errors.Is(err, ErrBind) {
			t.Errorf("%v: %v", bad.Props, err)
		}
	}
}

type upper string

func (u *upper) UnmarshalPHP(v Value) error {
	s, ok := v.(string)
	if !ok {
		return errors.New("not a string")
	}
	*u = upper(s + "!")
	return nil
}

func TestBindErrors(t *testing.T) {
	o := NewObject("A").Set("n", "x").Set("list", NewList(1, "two")).Set("u", "hi")
	var dst struct {
		N int `php:"n"`
	}
	err := Bind(o, &dst)
	var be *BindError
	if !errors.As(err, &be) || be.Path != "n" {
		t.Errorf("int from string: %v", err)
	}
	var d2 struct {
		List []int `php:"list"`
	}
	if err := Bind(o, &d2); !errors.As(err, &be) || be.Path != "list.1" {
		t.Errorf("list: %v", err)
	}
	var d3 struct {
		U upper `php:"u"`
		B int8  `php:"big"`
	}
	if err := Bind(o, &d3); err != nil || d3.U != "hi!" {
		t.Errorf("Unmarshaler: %v %q", err, d3.U)
	}
	if err := Bind(NewObject("A").Set("big", 300), &d3); !errors.As(err, &be) || be.Path != "big" {
		t.Errorf("overflow: %v", err)
	}
	if err := Bind(o, dst); !errors.Is(err, ErrBind) {
		t.Errorf("non-pointer: %v", err)
	}
	var obj *Object
	if err := Bind(o, &obj); err != nil || obj != o {
		t.Errorf("*Object: %v", err)
	}
}

type node struct {
	A *node `php:"a"`
	B *node `php:"b"`
}

func TestBindReferenceBomb(t *testing.T) {
	// Each level holds the previous one twice through r:, so 40 levels stand for 2^40 nodes.
	// Level k (from the top) is slot k, and its first property, level k+1, is slot k+1.
	in := strings.Repeat(`O:1:"N":2:{s:1:"a";`, 40) + "N;"
	for k := 40; k >= 1; k-- {
		in += `s:1:"b";r:` + strconv.Itoa(k+1) + `;}`
	}
	v, err := Unserialize([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var n node
	if err := Bind(v, &n); !errors.Is(err, ErrBind) {
		t.Errorf("bomb bound without error: %v", err)
	}
	if js := CanonicalJSON(v); len(js) > CanonicalLimit+1<<20 {
		t.Errorf("canonical JSON of %d bytes", len(js))
	}
	cyc, _ := Unserialize([]byte(`O:1:"N":2:{s:1:"a";r:1;s:1:"b";N;}`))
	if err := Bind(cyc, &n); !errors.Is(err, ErrBind) {
		t.Errorf("cycle bound without error: %v", err)
	}
}

// TestBindNilObjectAndUnexportedTag: a nil *Object (a raw job's Command) binds as PHP's null, and a
// php tag on an unexported field, which Bind cannot set, is an error rather than a field left zero.
func TestBindNilObjectAndUnexportedTag(t *testing.T) {
	var dst struct{ Name string }
	dst.Name = "kept?"
	if err := Bind((*Object)(nil), &dst); err != nil || dst.Name != "" {
		t.Errorf("Bind of a nil *Object: %v, %+v; want no error and the zero value", err, dst)
	}
	var hidden struct {
		Name string `php:"name"`
		note string `php:"note"`
	}
	err := Bind(NewObject(`App\Jobs\X`).Set("name", "n").Set("note", "x"), &hidden)
	var be *BindError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "note") || hidden.note != "" {
		t.Errorf("Bind into a tagged unexported field: %v, want a BindError naming it", err)
	}
}

// TestBindLooseScalars converts scalars as PHP's loose typing does: any scalar into a string as PHP's
// (string) writes it, into a bool by its truthiness, numeric strings into numbers (a whole one into an
// int), a bool into a number as 0 or 1; what PHP would not take still fails.
func TestBindLooseScalars(t *testing.T) {
	var dst struct {
		Strings []string  `php:"strings"`
		Bools   []bool    `php:"bools"`
		Floats  []float64 `php:"floats"`
		Ints    []int64   `php:"ints"`
	}
	o := NewObject("A").
		Set("strings", NewList(int64(1), "x", nil, true, false, 2.5, 0.1)).
		Set("bools", NewList(int64(0), int64(2), 0.0, "", "0", "a", true)).
		Set("floats", NewList("4.5", " 7 ", "1e3", true, int64(2))).
		Set("ints", NewList("42", " 7", "1e3", "42.0", true, false, 3.0))
	if err := Bind(o, &dst); err != nil {
		t.Fatal(err)
	}
	want := []string{"1", "x", "", "1", "", "2.5", "0.1"}
	if !slices.Equal(dst.Strings, want) {
		t.Errorf("strings %q, want %q", dst.Strings, want)
	}
	if wantB := []bool{false, true, false, false, false, true, true}; !slices.Equal(dst.Bools, wantB) {
		t.Errorf("bools %v, want %v", dst.Bools, wantB)
	}
	if wantF := []float64{4.5, 7, 1000, 1, 2}; !slices.Equal(dst.Floats, wantF) {
		t.Errorf("floats %v, want %v", dst.Floats, wantF)
	}
	if wantI := []int64{42, 7, 1000, 42, 1, 0, 3}; !slices.Equal(dst.Ints, wantI) {
		t.Errorf("ints %v, want %v", dst.Ints, wantI)
	}
	var be *BindError
	for _, bad := range []*Object{NewObject("A").Set("ints", NewList("4.5")), NewObject("A").Set("ints", NewList(9.75)),
		NewObject("A").Set("floats", NewList("x")), NewObject("A").Set("strings", NewList(NewList()))} {
		if err := Bind(bad, &dst); !errors.As(err, &be) {
			t.Errorf("%v: %v, want a BindError", bad, err)
		}
	}
}

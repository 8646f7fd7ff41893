package payload

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrVersion is wrapped when a Laravel version string cannot be read.
var ErrVersion = errors.New("invalid Laravel version")

// Version is a Laravel framework version such as 8.83 or 12.54.0. What PHP's queue writes and does
// differs by version (payload keys, lock keys, messages, defaults), so every rule that differs takes one.
type Version struct {
	// Major is the major version, e.g. 8.
	Major int
	// Minor is the minor version, e.g. 83; 999 stands for "the newest".
	Minor int
	// Patch is the patch release; ParseVersion sets -1 when the version does not say, which counts as
	// the newest of the minor.
	Patch int
}

// ParseVersion reads a Laravel version as composer and `php artisan --version` print it: "8.83",
// "8.83.26", "v12.54.0", or a major alone ("12", "12.x"), which means the newest minor of that major,
// since that is what an app on that major usually runs; "10.37" is the newest patch of 10.37. What
// follows a field's digits ends the version ("11.0-dev" is 11.0). Every package that gates on the
// version reads it here, so that "12" means the same release everywhere.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	v := Version{Minor: 999, Patch: -1}
	for i, f := range strings.SplitN(t, ".", 3) {
		end := 0
		for end < len(f) && f[end] >= '0' && f[end] <= '9' {
			end++
		}
		if end == 0 {
			if i == 0 {
				return Version{}, versionError(s, "it does not start with the major version")
			}
			if i == 1 && f != "x" && f != "X" && f != "*" {
				return Version{}, versionError(s, "the minor version is not a number")
			}
			break
		}
		n, err := strconv.Atoi(f[:end])
		if err != nil {
			return Version{}, versionError(s, "a number in it is too large")
		}
		switch i {
		case 0:
			v.Major = n
		case 1:
			v.Minor = n
		default:
			v.Patch = n
		}
		if end < len(f) {
			break
		}
	}
	if v.Major < 5 {
		return Version{}, versionError(s, "artisan-go reads Laravel from 5.4 on")
	}
	return v, nil
}

// versionError names the version that could not be read, why, and how to write one.
func versionError(s, why string) error {
	return fmt.Errorf("laravel version %q: %s; write the app's framework version as `composer show laravel/framework` prints it, e.g. 8.83, 11 or 12.54: %w", s, why, ErrVersion)
}

// AtLeastPatch reports whether v is major.minor.patch or newer; a version that does not name its
// patch release counts as the newest of its minor.
func (v Version) AtLeastPatch(major, minor, patch int) bool {
	if v.Major != major || v.Minor != minor {
		return v.AtLeast(major, minor)
	}
	return v.Patch < 0 || v.Patch >= patch
}

// String returns the version as major.minor, and .patch when it names one.
func (v Version) String() string {
	s := strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor)
	if v.Patch >= 0 {
		s += "." + strconv.Itoa(v.Patch)
	}
	return s
}

// AtLeast reports whether v is major.minor or newer.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

// Since reports whether v has a change that reached each major line at its own minor release: firsts
// are (major, minor) pairs in rising order of major, and a major later than the last has the change.
func (v Version) Since(firsts ...[2]int) bool {
	for _, f := range firsts {
		if v.Major == f[0] {
			return v.Minor >= f[1]
		}
	}
	return len(firsts) > 0 && v.Major > firsts[len(firsts)-1][0]
}

// ExtraKey is a top-level key added to a payload by a Queue::createPayloadUsing hook (for example
// Laravel 11's `illuminate:log:context`), in the order the hooks add them.
type ExtraKey struct {
	// Key is the top-level key.
	Key string
	// Value is its JSON value; it is written again the way PHP's json_encode would.
	Value json.RawMessage
}

// JobPayloadParams describes a payload to build with NewJobPayload. Pointer fields are written as null
// when nil. Keys a Laravel version does not write are left out whatever their value.
type JobPayloadParams struct {
	// LaravelVersion selects the key set and JSON flags, e.g. "8.83", "11", "12.54" (see ParseVersion).
	LaravelVersion string
	// UUID is the job's UUID (7.x+); empty means a new random version-4 UUID.
	UUID string
	// DisplayName defaults to the command's class, or for a raw job to Job up to its "@".
	DisplayName string
	// Command is the job object to serialize into data.command. Nil makes a raw job (see Job, Data).
	Command *Object
	// SerializedCommand, when not empty, is written as data.command instead of serializing Command
	// (for copying an existing command or ciphertext); CommandName must then be set.
	SerializedCommand string
	// CommandName defaults to Command's class.
	CommandName string
	// Encrypt encrypts the command with Keyring, as Laravel does for ShouldBeEncrypted jobs.
	Encrypt bool
	// Keyring encrypts the command when Encrypt is set.
	Keyring *Keyring
	// Job is the handler of a raw job, "Class@method"; object jobs always use CallQueuedHandler.
	Job string
	// Data is a raw job's data as JSON; nil means "" as Queue::push writes when given none.
	Data json.RawMessage
	// MaxTries, MaxExceptions (7.x+) and Timeout are the job's tries, maxExceptions and timeout.
	MaxTries, MaxExceptions, Timeout *int
	// FailOnTimeout is the job's failOnTimeout (8.43+).
	FailOnTimeout bool
	// Backoff is the job's backoff as Laravel's comma-separated string, e.g. "1,5,10" (8.x+).
	Backoff *string
	// RetryUntil is the job's retry deadline as a Unix time: retryUntil in 8.x+, timeoutAt in 5.5–7.x.
	RetryUntil *int64
	// RetryAfter is the job's retryAfter, the `delay` key of 5.8–7.x.
	RetryAfter *int
	// DeleteWhenMissingModels is the job's deleteWhenMissingModels (13.x; nil writes false).
	DeleteWhenMissingModels *bool
	// BatchID is the job's batchId, written as data.batchId (12.51+).
	BatchID *string
	// CreatedAt is the creation time as a Unix time (12.11+); nil means now.
	CreatedAt *int64
	// Delay is the delay the job is dispatched with, in seconds: the `delay` key of 12.11+.
	Delay *int
	// Extra are keys added by createPayloadUsing hooks, written after the version's own keys.
	Extra []ExtraKey

	rand io.Reader
	// props are the envelope keys FromProperties read from the command's properties, written as
	// json_encode writes the property's value where the typed field above is not set.
	props map[string]Value
}

// FromProperties reads from Command's public properties what Laravel's Queue::createObjectPayload
// reads from the job's, for the keys p does not set already: $tries, $timeout, $maxExceptions and
// $failOnTimeout, written as json_encode writes the property's value (a string or a float as it is),
// $backoff joined with commas as getJobBackoff joins it (a date as the seconds from now until it),
// $retryUntil ($timeoutAt before 8.0; a date as its timestamp), 5.8–7.x's $retryAfter and 13.x's
// $deleteWhenMissingModels.
func (p *JobPayloadParams) FromProperties(now time.Time) {
	if p.Command == nil {
		return
	}
	public := func(name string) (Value, bool) {
		if pr := p.Command.Prop(name); pr != nil && pr.Visibility == Public && pr.Value != nil {
			return pr.Value, true
		}
		return nil, false
	}
	keep := func(key string, v Value) {
		switch v.(type) {
		case bool, int64, float64, string:
			if p.props == nil {
				p.props = map[string]Value{}
			}
			p.props[key] = v
		}
	}
	for _, k := range []struct {
		prop, key string
		set       bool
	}{
		{"tries", "maxTries", p.MaxTries != nil}, {"timeout", "timeout", p.Timeout != nil},
		{"maxExceptions", "maxExceptions", p.MaxExceptions != nil}, {"failOnTimeout", "failOnTimeout", p.FailOnTimeout},
		{"deleteWhenMissingModels", "deleteWhenMissingModels", p.DeleteWhenMissingModels != nil},
	} {
		if v, ok := public(k.prop); ok && !k.set {
			keep(k.key, v)
		}
	}
	version, err := ParseVersion(p.LaravelVersion)
	if err != nil {
		return // NewJobPayload says why
	}
	until := "retryUntil"
	if !version.AtLeast(8, 0) {
		until = "timeoutAt" // getJobExpiration read $job->timeoutAt before 8.0
	}
	if v, ok := public(until); ok && p.RetryUntil == nil {
		if o, isObject := v.(*Object); isObject {
			if t, err := Time(o); err == nil {
				u := t.Unix()
				p.RetryUntil = &u
			}
		} else {
			keep("retryUntil", v)
		}
	}
	if v, ok := public("retryAfter"); ok && p.RetryAfter == nil && version.AtLeast(5, 8) && !version.AtLeast(8, 0) {
		// getJobRetryDelay, the delay key of 5.8–7.x: a date as the seconds until it.
		if o, isObject := v.(*Object); isObject {
			if t, err := Time(o); err == nil {
				n := int(max(0, t.Unix()-now.Unix()))
				p.RetryAfter = &n
			}
		} else {
			keep("retryAfter", v)
		}
	}
	if v, ok := public("backoff"); ok && p.Backoff == nil {
		list := []Value{v}
		if a, isArray := v.(*Array); isArray {
			list = a.Values()
		}
		parts := make([]string, 0, len(list))
		for _, x := range list {
			if o, isObject := x.(*Object); isObject {
				if t, err := Time(o); err == nil {
					parts = append(parts, strconv.FormatInt(max(0, t.Unix()-now.Unix()), 10)) // secondsUntil
					continue
				}
			}
			parts = append(parts, StringCast(x))
		}
		b := strings.Join(parts, ",")
		p.Backoff = &b
	}
}

// NewJobPayload builds a payload exactly as PHP's Queue::createPayload writes it for the given Laravel
// version: the same keys in the same order, and PHP's json_encode output (`/` escaped as `\/`, non-ASCII
// escaped as \uXXXX before 8.82 and written raw from 8.82, where Laravel adds JSON_UNESCAPED_UNICODE).
// The key sets follow laravel-spec §3.2 (objects) and §3.3 (raw jobs).
func NewJobPayload(p JobPayloadParams) ([]byte, error) {
	v, err := ParseVersion(p.LaravelVersion)
	if err != nil {
		return nil, fmt.Errorf("new job payload: %w", err)
	}
	w := phpJSON{raw: v.AtLeast(8, 82)}
	raw := p.Command == nil && p.SerializedCommand == ""
	var command, commandName string
	if !raw {
		if command, commandName, err = p.command(); err != nil {
			return nil, fmt.Errorf("new job payload: %w", err)
		}
	} else if p.Job == "" {
		return nil, errors.New("new job payload: give a Command, a SerializedCommand or a raw Job")
	}
	uuid := p.UUID
	if uuid == "" && v.AtLeast(7, 0) {
		if uuid, err = newUUID(p.rand); err != nil {
			return nil, fmt.Errorf("new job payload: %w", err)
		}
	}
	job, display := CallQueuedHandler, p.DisplayName
	if raw {
		job = p.Job
		if display == "" {
			display, _, _ = strings.Cut(p.Job, "@")
		}
	} else if display == "" {
		display = commandName
	}

	w.open()
	if v.AtLeast(7, 0) {
		w.key("uuid").str(uuid)
	}
	w.key("displayName").str(display)
	w.key("job").str(job)
	if raw {
		w.key("maxTries").null()
		if v.AtLeast(7, 0) {
			w.key("maxExceptions").null()
		}
		if v.AtLeast(5, 8) && !v.AtLeast(8, 0) {
			w.key("delay").null()
		}
		if v.AtLeast(8, 43) {
			w.key("failOnTimeout").bool(false)
		}
		if v.AtLeast(8, 0) {
			w.key("backoff").null()
		}
		w.key("timeout").null()
		w.key("data")
		if p.Data == nil {
			w.str("")
		} else if err := w.reencode(p.Data); err != nil {
			return nil, fmt.Errorf("new job payload: data: %w", err)
		}
	} else {
		w.key("maxTries").intOr(p.MaxTries, p.props, "maxTries")
		if v.AtLeast(7, 0) {
			w.key("maxExceptions").intOr(p.MaxExceptions, p.props, "maxExceptions")
		}
		if v.AtLeast(5, 8) && !v.AtLeast(8, 0) {
			w.key("delay").intOr(p.RetryAfter, p.props, "retryAfter")
		}
		if v.AtLeast(8, 43) {
			w.key("failOnTimeout").boolOr(p.FailOnTimeout, p.props, "failOnTimeout")
		}
		if v.AtLeast(8, 0) {
			w.key("backoff").strp(p.Backoff)
		}
		w.key("timeout").intOr(p.Timeout, p.props, "timeout")
		if v.AtLeast(5, 5) && !v.AtLeast(8, 0) {
			w.key("timeoutAt").int64Or(p.RetryUntil, p.props, "retryUntil")
		}
		if v.AtLeast(8, 0) {
			w.key("retryUntil").int64Or(p.RetryUntil, p.props, "retryUntil")
		}
		if v.AtLeast(13, 0) {
			w.key("deleteWhenMissingModels").boolOr(p.DeleteWhenMissingModels != nil && *p.DeleteWhenMissingModels, p.props, "deleteWhenMissingModels")
		}
		w.key("data").open()
		w.key("commandName").str(commandName)
		w.key("command").str(command)
		if v.AtLeast(12, 51) {
			w.key("batchId").strp(p.BatchID)
		}
		w.close()
	}
	if v.AtLeast(12, 11) {
		created := time.Now().Unix()
		if p.CreatedAt != nil {
			created = *p.CreatedAt
		}
		w.key("createdAt").int64p(&created)
	}
	for _, x := range p.Extra {
		w.key(x.Key)
		if err := w.reencode(x.Value); err != nil {
			return nil, fmt.Errorf("new job payload: %s: %w", x.Key, err)
		}
	}
	if v.AtLeast(12, 11) {
		w.key("delay").intp(p.Delay)
	}
	w.close()
	if w.err != nil {
		return nil, fmt.Errorf("new job payload: %w", w.err)
	}
	return w.b, nil
}

func (p *JobPayloadParams) command() (command, name string, err error) {
	name = p.CommandName
	if p.SerializedCommand != "" {
		if name == "" {
			return "", "", errors.New("CommandName is required with SerializedCommand")
		}
		return p.SerializedCommand, name, nil
	}
	if name == "" {
		name = p.Command.Class
	}
	if p.Encrypt {
		if p.Keyring == nil {
			return "", "", errors.New("Encrypt is set but Keyring is nil")
		}
		command, err = EncryptCommand(p.Command, p.Keyring)
		return command, name, err
	}
	b, err := Serialize(p.Command)
	return string(b), name, err
}

// newUUID returns a random version-4 UUID as Laravel's Str::uuid() does.
func newUUID(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	var u [16]byte
	if _, err := io.ReadFull(r, u[:]); err != nil {
		return "", fmt.Errorf("read random UUID: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:]), nil
}

// phpJSON writes JSON the way PHP's json_encode does with Laravel's flags.
type phpJSON struct {
	b   []byte
	raw bool // JSON_UNESCAPED_UNICODE
	// floats writes re-encoded numbers as PHP writes them after json_decode (1.50 as 1.5, 1e2 as
	// 100.0) instead of as they were written.
	floats bool
	first  []bool // per open object: no key written yet
	err    error
}

func (w *phpJSON) open() *phpJSON {
	w.b = append(w.b, '{')
	w.first = append(w.first, true)
	return w
}

func (w *phpJSON) close() {
	w.b = append(w.b, '}')
	w.first = w.first[:len(w.first)-1]
}

func (w *phpJSON) key(k string) *phpJSON {
	if !w.first[len(w.first)-1] {
		w.b = append(w.b, ',')
	}
	w.first[len(w.first)-1] = false
	w.str(k)
	w.b = append(w.b, ':')
	return w
}

func (w *phpJSON) null()        { w.b = append(w.b, "null"...) }
func (w *phpJSON) bool(v bool)  { w.b = strconv.AppendBool(w.b, v) }
func (w *phpJSON) str(s string) { w.b, w.err = appendPHPString(w.b, s, w.raw, w.err) }

func (w *phpJSON) intp(n *int) {
	if n == nil {
		w.null()
		return
	}
	w.b = strconv.AppendInt(w.b, int64(*n), 10)
}

func (w *phpJSON) int64p(n *int64) {
	if n == nil {
		w.null()
		return
	}
	w.b = strconv.AppendInt(w.b, *n, 10)
}

// intOr writes n, or when it is nil the property props holds for key (as json_encode writes it), or null.
func (w *phpJSON) intOr(n *int, props map[string]Value, key string) {
	if n != nil {
		w.intp(n)
		return
	}
	w.scalar(props[key])
}

// int64Or is intOr for an int64.
func (w *phpJSON) int64Or(n *int64, props map[string]Value, key string) {
	if n != nil {
		w.int64p(n)
		return
	}
	w.scalar(props[key])
}

// boolOr writes true when b is, else the property props holds for key, else false.
func (w *phpJSON) boolOr(b bool, props map[string]Value, key string) {
	if v, ok := props[key]; ok && !b {
		w.scalar(v)
		return
	}
	w.bool(b)
}

// scalar writes a scalar as json_encode does; a float that is not finite is an error, as in PHP.
func (w *phpJSON) scalar(v Value) {
	switch v := v.(type) {
	case bool:
		w.bool(v)
	case int64:
		w.b = strconv.AppendInt(w.b, v, 10)
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			if w.err == nil {
				w.err = errors.New("Inf and NaN cannot be JSON encoded")
			}
			w.null()
			return
		}
		w.b = AppendPHPFloat(w.b, v)
	case string:
		w.str(v)
	default:
		w.null()
	}
}

func (w *phpJSON) strp(s *string) {
	if s == nil {
		w.null()
		return
	}
	w.str(*s)
}

// appendPHPString escapes s as json_encode does: `"`, `\` and `/` with a backslash, control characters
// as \b \f \n \r \t or \u00XX, and, unless raw, every non-ASCII character as \uXXXX (surrogate pairs
// above U+FFFF). U+2028 and U+2029 are escaped even when raw. Invalid UTF-8 is an error, as in PHP.
func appendPHPString(b []byte, s string, raw bool, err error) ([]byte, error) {
	if err != nil {
		return b, err
	}
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\', '/':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				if c < 0x20 {
					b = appendU(b, rune(c))
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return b, fmt.Errorf("string is not valid UTF-8 at byte %d; PHP's json_encode would fail too", i)
		}
		switch {
		case r == 0x2028 || r == 0x2029 || !raw && r < 0x10000:
			b = appendU(b, r)
		case !raw:
			r -= 0x10000
			b = appendU(b, 0xd800+(r>>10))
			b = appendU(b, 0xdc00+(r&0x3ff))
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"'), nil
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// reencode writes a JSON value as PHP would after json_decode($v, true): strings escaped PHP's way, an
// object whose keys are exactly "0".."n-1" (or that is empty) as a list, numbers as written.
func (w *phpJSON) reencode(raw json.RawMessage) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var node jsonNode
	if err := node.read(d); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	node.write(w)
	return w.err
}

// jsonNode is a JSON value with its object keys in order.
type jsonNode struct {
	scalar any // string, json.Number, bool or nil
	kind   byte
	keys   []string
	items  []jsonNode
}

func (n *jsonNode) read(d *json.Decoder) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		n.scalar = tok
		return nil
	}
	n.kind = byte(delim)
	for d.More() {
		if n.kind == '{' {
			k, err := d.Token()
			if err != nil {
				return err
			}
			n.keys = append(n.keys, k.(string))
		}
		var item jsonNode
		if err := item.read(d); err != nil {
			return err
		}
		n.items = append(n.items, item)
	}
	_, err = d.Token()
	return err
}

func (n *jsonNode) write(w *phpJSON) {
	switch n.kind {
	case '[', '{':
		list := true
		for i, k := range n.keys {
			if k != strconv.Itoa(i) {
				list = false
				break
			}
		}
		if list {
			w.b = append(w.b, '[')
		} else {
			w.b = append(w.b, '{')
		}
		for i := range n.items {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if !list {
				w.str(n.keys[i])
				w.b = append(w.b, ':')
			}
			n.items[i].write(w)
		}
		if list {
			w.b = append(w.b, ']')
		} else {
			w.b = append(w.b, '}')
		}
		return
	}
	switch s := n.scalar.(type) {
	case string:
		w.str(s)
	case json.Number:
		if w.floats {
			w.b = phpNumber(w.b, s)
		} else {
			w.b = append(w.b, s...)
		}
	case bool:
		w.bool(s)
	default:
		w.null()
	}
}

// AppendPHPJSONString appends s as PHP's json_encode writes a string with its default flags (slashes
// and non-ASCII characters escaped), or with JSON_UNESCAPED_UNICODE when unescapedUnicode. Invalid
// UTF-8 is an error, as json_encode fails on it.
func AppendPHPJSONString(b []byte, s string, unescapedUnicode bool) ([]byte, error) {
	return appendPHPString(b, s, unescapedUnicode, nil)
}

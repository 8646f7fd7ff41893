package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// callQueuedHandlerJSON is CallQueuedHandler as PHP's json_encode writes it.
const callQueuedHandlerJSON = `"Illuminate\\Queue\\CallQueuedHandler@call"`

// CallQueuedHandler is the `job` value of every object job: Laravel's handler that unserializes
// data.command and calls its handle method.
const CallQueuedHandler = `Illuminate\Queue\CallQueuedHandler@call`

// ErrEnvelope is wrapped by every error about a payload's JSON envelope.
var ErrEnvelope = errors.New("invalid job payload")

// EnvelopeError names the envelope key that could not be read and why.
type EnvelopeError struct {
	// Key is the JSON key, dotted for nested ones ("data.command"); empty for the document itself.
	Key string
	// Msg says what is wrong.
	Msg string
}

// Error implements error.
func (e *EnvelopeError) Error() string {
	if e.Key == "" {
		return "invalid job payload: " + e.Msg
	}
	return fmt.Sprintf("invalid job payload: %q %s", e.Key, e.Msg)
}

// Unwrap returns ErrEnvelope.
func (e *EnvelopeError) Unwrap() error { return ErrEnvelope }

// Envelope is the JSON document in the `payload` column of Laravel's jobs table, for every Laravel
// version from 5.5 to 13.x (see the field comments for which versions write which keys). Keys PHP writes
// as null, and keys the version does not write, are nil.
type Envelope struct {
	// Raw is the payload exactly as read. A worker that releases, retries or fails the job copies these
	// bytes and never re-encodes the envelope.
	Raw []byte
	// UUID is the job's UUID (7.x+).
	UUID string
	// DisplayName is the job's display name: its class, a listener or notification class, or
	// "Closure (file.php:LINE)".
	DisplayName string
	// Job is the handler PHP calls: CallQueuedHandler for object jobs, "Class@method" for raw jobs.
	Job string
	// MaxTries is the job's tries (null when the job does not set it). A limit PHP cannot take as
	// "none" (a float or string zero, a negative one) is -1: the job fails at its first claim.
	MaxTries *int
	// MaxTriesFraction says the job's tries were a fraction (`$tries = 2.5`): MaxTries is its floor,
	// which bounds the attempts at claim as PHP's `attempts <= 2.5` does, and since PHP fails a job
	// that throws only at `attempts >= 2.5`, no attempt that runs reaches the limit.
	MaxTriesFraction bool
	// MaxExceptions is the job's maxExceptions (7.x+); a fraction is rounded up, as PHP's
	// `maxExceptions <= count` counts.
	MaxExceptions *int
	// Timeout is the job's timeout in seconds; a fraction is rounded down, as pcntl_alarm takes it.
	Timeout *int
	// FailOnTimeout is the job's failOnTimeout (8.43+; false when absent).
	FailOnTimeout bool
	// Backoff is the job's backoff as Laravel's comma-separated string ("1,5,10"); a number in a payload
	// is normalized to its decimal string (8.x+).
	Backoff *string
	// TimeoutAt is the old name of the retry deadline, a Unix timestamp (5.5–7.x).
	TimeoutAt *int64
	// RetryUntil is the retry deadline, a Unix timestamp (8.x+).
	RetryUntil *int64
	// CreatedAt is when the payload was created, a Unix timestamp (12.11+).
	CreatedAt *int64
	// Delay is the `delay` key, which has two meanings: in 5.8–7.x it is the job's retry delay
	// (retryAfter, used as its backoff); from 12.11 it is the delay the job was originally dispatched
	// with. Both are seconds.
	Delay *int
	// DeleteWhenMissingModels is the job's deleteWhenMissingModels (13.x).
	DeleteWhenMissingModels *bool
	// CommandName is data.commandName, the class of the serialized command (object jobs only).
	CommandName string
	// Command is data.command: the serialized command, or Laravel's ciphertext for ShouldBeEncrypted
	// jobs (object jobs only).
	Command string
	// BatchID is data.batchId (12.51+).
	BatchID *string
	// Data is the `data` value as raw JSON. For raw jobs it is whatever was pushed, possibly `""`.
	Data json.RawMessage
	// Extra holds every top-level key this package does not know (`illuminate:log:context`, keys added by
	// Horizon, Telescope or tenancy packages), as raw JSON.
	Extra map[string]json.RawMessage
}

// The top-level keys ParseEnvelope reads, as indexes into envKeys.
const (
	kUUID = iota
	kDisplayName
	kJob
	kMaxTries
	kMaxExceptions
	kTimeout
	kFailOnTimeout
	kBackoff
	kTimeoutAt
	kRetryUntil
	kCreatedAt
	kDelay
	kDeleteWhenMissingModels
	kData
	nKeys
)

// envKeys names the keys ParseEnvelope reads, in the order of the k constants.
var envKeys = [nKeys]string{"uuid", "displayName", "job", "maxTries", "maxExceptions", "timeout", "failOnTimeout",
	"backoff", "timeoutAt", "retryUntil", "createdAt", "delay", "deleteWhenMissingModels", "data"}

// dataKeys names the keys of data that ParseEnvelope reads.
var dataKeys = [...]string{"commandName", "command", "batchId"}

// envScan gathers what ParseEnvelope reads while scanJSON validates a payload: the raw value of each
// known top-level key and of each known key of the last top-level "data" object (when a key appears twice
// the last one counts, as in PHP), and every unknown top-level key.
type envScan struct {
	vals  [nKeys][]byte
	data  [len(dataKeys)][]byte
	extra map[string]json.RawMessage
	cur   int // the index in envKeys of the top-level member being read, or -1
}

// enter is told the key of each top-level member before its value is read.
func (s *envScan) enter(key []byte) {
	s.cur = keyIndex(key, envKeys[:])
	if s.cur == kData {
		s.data = [len(dataKeys)][]byte{}
	}
}

// member is told each member of the top-level object (depth 1) and of the objects directly inside it
// (depth 2) once its value has been read.
func (s *envScan) member(depth int, key, val []byte) {
	switch {
	case depth == 2:
		if s.cur != kData {
			return
		}
		if i := keyIndex(key, dataKeys[:]); i >= 0 {
			s.data[i] = val
		}
	case s.cur >= 0:
		s.vals[s.cur] = val
	default:
		if s.extra == nil {
			s.extra = make(map[string]json.RawMessage)
		}
		k, _ := unquoteJSON(key)
		s.extra[k] = val
	}
}

// PeekEnvelope reads only the names of a payload ParseEnvelope refuses (a key of the wrong type, data
// missing): uuid, displayName, job and data.commandName, each when it is a JSON string. It is what
// PHP's worker can still show and route such a job by; ok is false when the payload is not a JSON
// object with a job.
func PeekEnvelope(raw []byte) (e *Envelope, ok bool) {
	var top struct {
		UUID, DisplayName, Job any
		Data                   struct{ CommandName any }
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		// A data that is not an object leaves the other names legible.
		var names struct{ UUID, DisplayName, Job any }
		if json.Unmarshal(raw, &names) != nil {
			return nil, false
		}
		top.UUID, top.DisplayName, top.Job = names.UUID, names.DisplayName, names.Job
	}
	text := func(v any) string { s, _ := v.(string); return s }
	e = &Envelope{UUID: text(top.UUID), DisplayName: text(top.DisplayName), Job: text(top.Job), CommandName: text(top.Data.CommandName)}
	return e, e.Job != ""
}

// ParseEnvelope reads a payload column. Data and Extra are slices of Raw. It accepts the key sets of every Laravel version from 5.5 to
// 13.x and keeps unknown keys in Extra. It fails with an *EnvelopeError (wrapping ErrEnvelope) when the
// document is not a JSON object, a known key has the wrong type, or an object job lacks data.command.
func ParseEnvelope(raw []byte) (*Envelope, error) {
	e := &Envelope{Raw: raw}
	scan := envScan{cur: -1}
	if !scanJSON(raw, &scan) {
		var v any
		err := json.Unmarshal(raw, &v)
		msg := "not valid JSON"
		if err != nil {
			msg += ": " + err.Error()
		}
		return nil, &EnvelopeError{Msg: msg}
	}
	if raw[skipWS(raw, 0)] != '{' {
		return nil, &EnvelopeError{Msg: "not a JSON object"}
	}
	e.Extra = scan.extra
	vals := &scan.vals
	r := envReader{}
	names := &envKeys
	e.UUID = r.str(names[kUUID], vals[kUUID])
	e.DisplayName = displayText(vals[kDisplayName])
	e.Job = r.strAs(names[kJob], vals[kJob], []byte(callQueuedHandlerJSON), CallQueuedHandler)
	if f, ok := fraction(vals[kMaxTries]); ok {
		// `$tries = 2.5`: PHP's claim fails the job at the attempt past 2.5, an exception never.
		n := clampInt(math.Floor(f))
		e.MaxTriesFraction = n > 0
		if n <= 0 {
			n = -1
		}
		e.MaxTries = &n
	} else {
		e.MaxTries = r.countp(names[kMaxTries], vals[kMaxTries])
	}
	if raw := vals[kMaxTries]; e.MaxTries != nil && *e.MaxTries == 0 && (raw[0] == '"' || bytes.ContainsAny(raw, ".eE")) {
		// A class's `$tries = '0'` (or 0.0): PHP's worker tests `$maxTries === 0` for "no limit",
		// which a string or a float is not, and then fails the job as `attempts <= "0"` is false: as
		// a negative limit does.
		n := -1
		e.MaxTries = &n
	}
	if f, ok := fraction(vals[kMaxExceptions]); ok {
		n := clampInt(math.Ceil(f))
		e.MaxExceptions = &n
	} else {
		e.MaxExceptions = r.countp(names[kMaxExceptions], vals[kMaxExceptions])
	}
	if f, ok := fraction(vals[kTimeout]); ok {
		n := clampInt(math.Trunc(f))
		e.Timeout = &n
	} else {
		e.Timeout = r.intp(names[kTimeout], vals[kTimeout])
	}
	if b := r.truthy(names[kFailOnTimeout], vals[kFailOnTimeout]); b != nil {
		e.FailOnTimeout = *b
	}
	e.Backoff = r.backoff(names[kBackoff], vals[kBackoff])
	e.TimeoutAt = r.deadline(names[kTimeoutAt], vals[kTimeoutAt])
	e.RetryUntil = r.deadline(names[kRetryUntil], vals[kRetryUntil])
	e.CreatedAt = r.int64p(names[kCreatedAt], vals[kCreatedAt])
	e.Delay = r.intp(names[kDelay], vals[kDelay])
	e.DeleteWhenMissingModels = r.truthy(names[kDeleteWhenMissingModels], vals[kDeleteWhenMissingModels])
	e.Data = vals[kData]
	if r.err != nil {
		return nil, r.err
	}
	if e.Job == "" {
		return nil, &EnvelopeError{Key: "job", Msg: "is missing or empty; every Laravel payload names its handler"}
	}
	if e.Data == nil {
		e.Data = json.RawMessage(`""`)
	}
	if !e.IsRaw() {
		if err := e.readCommandData(&scan.data, vals[kDisplayName]); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// readCommandData reads data.commandName, data.command and data.batchId from data, the raw values
// of the members of the last top-level "data" key in the order of dataKeys. displayName is the raw
// value e.DisplayName was read from, which data.commandName usually repeats.
func (e *Envelope) readCommandData(data *[len(dataKeys)][]byte, displayName []byte) error {
	if e.Data[0] != '{' {
		return &EnvelopeError{Key: "data", Msg: "is not an object with commandName and command"}
	}
	r := envReader{}
	e.CommandName = r.strAs("data.commandName", data[0], displayName, e.DisplayName)
	e.Command = r.str("data.command", data[1])
	e.BatchID = r.strp("data.batchId", data[2])
	if r.err != nil {
		return r.err
	}
	if e.Command == "" {
		return &EnvelopeError{Key: "data.command", Msg: "is missing or empty for a " + CallQueuedHandler + " job"}
	}
	return nil
}

// IsRaw reports whether the job is a raw `Class@method` job pushed with Queue::push or pushRaw rather
// than a serialized command run by CallQueuedHandler.
func (e *Envelope) IsRaw() bool {
	class, method := e.RawTarget()
	wantClass, wantMethod, _ := strings.Cut(CallQueuedHandler, "@")
	return !strings.EqualFold(strings.TrimPrefix(class, `\`), wantClass) || !strings.EqualFold(method, wantMethod)
}

// RawTarget splits Job into class and method the way Laravel's Str::parseCallback does: at the first
// "@", with "fire" when there is none. An anonymous class name (which contains "@anonymous\x00") is split
// at its last "@" only when it has more than one.
func (e *Envelope) RawTarget() (class, method string) {
	j := e.Job
	if strings.Contains(j, "@anonymous\x00") {
		if strings.Count(j, "@") > 1 {
			i := strings.LastIndexByte(j, '@')
			return j[:i], j[i+1:]
		}
		return j, "fire"
	}
	if i := strings.IndexByte(j, '@'); i >= 0 {
		return j[:i], j[i+1:]
	}
	return j, "fire"
}

// CommandEncrypted reports whether data.command is Laravel ciphertext rather than a serialized object:
// like CallQueuedHandler::getCommand, anything not starting with "O:" is taken as encrypted.
func (e *Envelope) CommandEncrypted() bool {
	return !e.IsRaw() && !strings.HasPrefix(e.Command, "O:")
}

// BackoffSpec returns the job's backoff the way Laravel's Job::backoff (8.x+) does: backoff ?? delay ??
// null, and whether it is not null. Note that from 12.11 `delay` is the original dispatch delay, and it
// is still the fallback: a job dispatched with a delay and no backoff is retried after that same delay,
// not after --backoff. A job's empty backoff (`$backoff = []`, written as "") is its own, a delay of 0;
// only none at all means "use the worker's --backoff".
func (e *Envelope) BackoffSpec() (string, bool) {
	if e.Backoff != nil {
		return *e.Backoff, true
	}
	if e.Delay != nil {
		return strconv.Itoa(*e.Delay), true
	}
	return "", false
}

// RetryDeadline returns the Unix time after which the job must not be retried (retryUntil, falling back
// to the old timeoutAt key as Laravel before 9.26 does) and whether there is one.
func (e *Envelope) RetryDeadline() (int64, bool) {
	if e.RetryUntil != nil {
		return *e.RetryUntil, true
	}
	if e.TimeoutAt != nil {
		return *e.TimeoutAt, true
	}
	return 0, false
}

// envReader converts envelope values, keeping the first error.
type envReader struct{ err error }

func (r *envReader) fail(key, msg string) {
	if r.err == nil {
		r.err = &EnvelopeError{Key: key, Msg: msg}
	}
}

func isNull(v json.RawMessage) bool { return v == nil || bytes.Equal(v, []byte("null")) }

// text decodes the JSON string v; ok is false when v is null or absent, or is not a string.
func (r *envReader) text(key string, v json.RawMessage) (s string, ok bool) {
	if isNull(v) {
		return "", false
	}
	if s, ok = jsonString(v); !ok {
		r.fail(key, "is not a string")
	}
	return s, ok
}

// strp decodes a string key that may be null; only a string is allocated a pointer.
func (r *envReader) strp(key string, v json.RawMessage) *string {
	s, ok := r.text(key, v)
	if !ok {
		return nil
	}
	p := new(string)
	*p = s
	return p
}

// jsonString decodes a JSON string value.
func jsonString(v []byte) (string, bool) { return unquoteJSON(v) }

// displayText is displayName as PHP prints it, whatever its JSON type: a string as it is, a number as
// written, true "1", and "" for false, null, an array or an object (PHP's worker then shows the job key).
func displayText(v json.RawMessage) string {
	if len(v) == 0 || isNull(v) {
		return ""
	}
	switch v[0] {
	case '"':
		s, _ := jsonString(v)
		return s
	case 't':
		return "1"
	case 'f', '[', '{':
		return ""
	}
	return string(v)
}

// str decodes a string key, "" when it is null or absent.
func (r *envReader) str(key string, v json.RawMessage) string {
	s, _ := r.text(key, v)
	return s
}

// strAs is str, except that when v is byte for byte same, the literal s was decoded from, it returns s
// without decoding v again.
func (r *envReader) strAs(key string, v, same []byte, s string) string {
	if same != nil && bytes.Equal(v, same) {
		return s
	}
	return r.str(key, v)
}

// int64p decodes an integer key that may be null.
func (r *envReader) int64p(key string, v json.RawMessage) *int64 {
	if isNull(v) {
		return nil
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return &n
	}
	// PHP reads these keys with `??` and uses them as numbers, so a numeric string ("3") works there.
	if len(v) > 2 && v[0] == '"' {
		if s, ok := jsonString(v); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return &n
			}
		}
		r.fail(key, "is not an integer")
		return nil
	}
	// PHP may write an integral float (3.0) where an int is meant; accept it, reject fractions.
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		r.fail(key, "is not an integer")
		return nil
	}
	n := int64(f)
	return &n
}

func (r *envReader) intp(key string, v json.RawMessage) *int {
	p := r.int64p(key, v)
	if p == nil {
		return nil
	}
	if *p > math.MaxInt32 || *p < math.MinInt32 {
		r.fail(key, "is out of range")
		return nil
	}
	n := int(*p)
	return &n
}

// countp reads a limit (maxTries, maxExceptions) as intp does, but a whole number beyond the int32
// range saturates instead of failing: PHP compares attempts with it as it is (an int, or a float past
// PHP_INT_MAX), so such a limit is never reached there, nor here at math.MaxInt32.
func (r *envReader) countp(key string, v json.RawMessage) *int {
	if len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && f == math.Trunc(f) && math.Abs(f) > math.MaxInt32 {
			n := math.MaxInt32
			if f < 0 {
				n = math.MinInt32
			}
			return &n
		}
	}
	return r.intp(key, v)
}

// fraction reads a limit PHP compares as a number (maxTries, maxExceptions, timeout) when it is a
// fraction: a float such as a class's `$tries = 2.5` writes, or a numeric string of one. ok is false
// for anything else (whole numbers, null, other types), which countp and intp read.
func fraction(v json.RawMessage) (float64, bool) {
	text := string(v)
	if len(v) > 0 && v[0] == '"' {
		s, ok := jsonString(v)
		if !ok {
			return 0, false
		}
		text = s
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f == math.Trunc(f) {
		return 0, false
	}
	return f, true
}

// clampInt is a whole float as an int, saturated at the int32 range as countp saturates limits.
func clampInt(f float64) int {
	return int(max(min(f, math.MaxInt32), math.MinInt32))
}

// truthy reads a flag PHP tests with `?? false` (failOnTimeout, deleteWhenMissingModels): nil when it
// is null or absent, else PHP's truthiness of the value, as a class declaring `$failOnTimeout = 1`
// writes it: 0, "", "0", [] and {} are false, other numbers, strings, arrays and objects true.
func (r *envReader) truthy(key string, v json.RawMessage) *bool {
	if isNull(v) {
		return nil
	}
	var b bool
	switch v[0] {
	case 't':
		b = true
	case 'f':
	case '"':
		s, _ := jsonString(v)
		b = s != "" && s != "0"
	case '[', '{':
		b = len(bytes.TrimSpace(v[1:len(v)-1])) > 0
	default:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			r.fail(key, "is not a boolean")
			return nil
		}
		b = f != 0
	}
	return &b
}

// deadline reads a Unix time PHP compares the current second with (retryUntil, timeoutAt): an
// integer, a numeric string, or a float, as a retryUntil() returning microtime(true) writes it,
// rounded down (the second it falls in is the last one at or before it).
func (r *envReader) deadline(key string, v json.RawMessage) *int64 {
	if len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		f, err := strconv.ParseFloat(string(v), 64)
		switch {
		case err == nil && f != math.Trunc(f) && math.Abs(f) < 1<<53:
			n := int64(math.Floor(f))
			return &n
		case (err == nil || errors.Is(err, strconv.ErrRange)) && math.Abs(f) >= 1<<53:
			// 1e30: PHP compares the clock with it as a float, a time never reached (or long past).
			n := int64(math.Copysign(1<<53, f))
			return &n
		}
	}
	return r.int64p(key, v)
}

// backoff accepts a string ("1,5,10"), a number (old payloads) or null. An object or a list, which
// Laravel never writes, counts as absent (the worker's --backoff applies) rather than making the whole
// payload unreadable: PHP runs such a job too, and only fails on it when it reads the backoff.
func (r *envReader) backoff(key string, v json.RawMessage) *string {
	if isNull(v) || len(v) > 0 && (v[0] == '{' || v[0] == '[') {
		return nil
	}
	if len(v) > 0 && v[0] == '"' {
		return r.strp(key, v)
	}
	if _, err := strconv.ParseFloat(string(v), 64); err == nil || errors.Is(err, strconv.ErrRange) {
		// A number, as old payloads write it: PHP's explode() reads its text (1e30 too), and the
		// worker casts each entry to int as PHP does.
		s := string(v)
		return &s
	}
	r.fail(key, "is not a string of delays")
	return nil
}

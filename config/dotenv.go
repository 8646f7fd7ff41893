package config

import (
	"fmt"
	"regexp"
	"strings"
)

// EnvFileError reports a line of a .env file that Laravel's phpdotenv would reject too.
type EnvFileError struct {
	Path string // the file
	Line int    // 1-based line where the entry starts
	Msg  string // what is wrong
}

// Error implements error.
func (e *EnvFileError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
}

// Unwrap makes an EnvFileError match ErrInvalid.
func (e *EnvFileError) Unwrap() error { return ErrInvalid }

var (
	envNameRE = regexp.MustCompile(`\A[a-zA-Z0-9_.]+\z`)
	envVarRE  = regexp.MustCompile(`\A\$\{([a-zA-Z0-9_.]+)\}`)
)

// parseDotenv reads a .env file's content the way phpdotenv 5 (Laravel 8 on) does for the cases that
// occur in practice: `KEY=value`, an optional `export ` prefix, `#` comments (an unquoted value ends at
// `#` or at whitespace), single quotes (literal), double quotes (escapes \" \\ \$ \f \n \r \t \v, and
// values spanning several lines), `${NAME}` interpolation in unquoted and double-quoted values, and
// empty values. A name without `=` unsets the name. Interpolation sees the real environment first (it
// wins, as phpdotenv's immutable repository makes it) and then the names set earlier in the file; an
// unknown name is left as written. A later entry for the same name replaces an earlier one.
//
// It returns the names the file sets, with their values. A double-quoted value whose closing quote
// never comes is dropped with every line after it, as phpdotenv drops it; unclosed is the line where it
// starts (0 when there is none), for a warning.
func parseDotenv(path string, content string, environ map[string]string) (vars map[string]string, unclosed int, err error) {
	out := map[string]string{}
	lookup := func(name string) (string, bool) {
		if v, ok := environ[name]; ok {
			return v, true
		}
		v, ok := out[name]
		return v, ok
	}
	// A UTF-8 byte order mark, which Windows editors write, is not part of the first name: phpdotenv
	// reads the file without it.
	entries, unclosed := dotenvEntries(strings.TrimPrefix(content, "\ufeff"))
	for _, e := range entries {
		name, value, hasValue, err := parseDotenvEntry(e.text, lookup)
		if err != nil {
			return nil, 0, &EnvFileError{Path: path, Line: e.line, Msg: err.Error()}
		}
		if hasValue {
			out[name] = value
		} else {
			delete(out, name)
		}
	}
	return out, unclosed, nil
}

type dotenvEntry struct {
	line int
	text string
}

// dotenvEntries splits content into entries, joining the lines of a double-quoted value that spans
// several lines and dropping blank lines and comment lines, as phpdotenv's line splitter does. A
// multi-line value that is never closed is dropped with the rest of the file; unclosed is its line.
func dotenvEntries(content string) (entries []dotenvEntry, unclosed int) {
	content = strings.ReplaceAll(content, "\r\n", "\n")
	content = strings.ReplaceAll(content, "\r", "\n")
	var out []dotenvEntry
	var buf []string
	start := 0
	multiline := false
	for i, line := range strings.Split(content, "\n") {
		started := strings.Contains(line, `="`) && !closesQuote(line, true)
		if started {
			multiline = true
			start = i + 1
		}
		if multiline {
			buf = append(buf, line)
			if closesQuote(line, started) {
				multiline = false
				line = strings.Join(buf, "\n")
				buf = nil
			}
		} else {
			start = i + 1
		}
		if multiline {
			continue
		}
		t := phpTrim(line)
		if t == "" || t[0] == '#' {
			continue
		}
		out = append(out, dotenvEntry{line: start, text: line})
	}
	if multiline {
		unclosed = start
	}
	return out, unclosed
}

// closesQuote reports whether line holds the closing double quote of a multi-line value: a quote not
// preceded by a backslash (after removing escaped backslashes), beyond the opening one when the line
// starts the value.
func closesQuote(line string, started bool) bool {
	if line == `"` {
		return true
	}
	s := strings.ReplaceAll(line, `\\`, "")
	n := 0
	for i := 1; i < len(s); i++ {
		if s[i] == '"' && s[i-1] != '\\' {
			n++
		}
	}
	if started {
		return n > 1
	}
	return n >= 1
}

// parseDotenvEntry parses one entry. hasValue is false for a bare name, which unsets it.
func parseDotenvEntry(entry string, lookup func(string) (string, bool)) (name, value string, hasValue bool, err error) {
	rawName, rawValue, hasValue := strings.Cut(entry, "=")
	name = rawName
	if hasValue { // phpdotenv trims the name only of an entry with a value
		name = phpTrim(rawName)
	}
	if hasValue && name == "" {
		return "", "", false, fmt.Errorf("an entry starts with '=': %q", firstLine(entry))
	}
	if len(name) > 8 && strings.HasPrefix(name, "export") && isSpace(name[6]) {
		name = strings.TrimLeft(name[6:], " \t\n\r\v\f")
	}
	if len(name) >= 3 && (name[0] == '"' && name[len(name)-1] == '"' || name[0] == '\'' && name[len(name)-1] == '\'') {
		name = name[1 : len(name)-1]
	}
	if !envNameRE.MatchString(name) {
		return "", "", false, fmt.Errorf("invalid name %q: names are letters, digits, '_' and '.'", firstLine(name))
	}
	if !hasValue {
		return name, "", false, nil
	}
	value, err = parseDotenvValue(phpTrim(rawValue), lookup)
	if err != nil {
		return "", "", false, fmt.Errorf("%s: %w", name, err)
	}
	return name, value, true, nil
}

const (
	stInitial = iota
	stUnquoted
	stSingle
	stDouble
	stEscape
	stWhitespace
	stComment
)

// parseDotenvValue runs phpdotenv's value automaton over v and then resolves ${NAME} references at the
// positions where an unescaped '$' was seen outside single quotes.
func parseDotenvValue(v string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	var vars []int
	state := stInitial
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch state {
		case stInitial, stUnquoted:
			switch {
			case state == stInitial && c == '\'':
				state = stSingle
			case state == stInitial && c == '"':
				state = stDouble
			case c == '#':
				state = stComment
			case state == stUnquoted && isSpace(c):
				state = stWhitespace
			default:
				if c == '$' {
					vars = append(vars, b.Len())
				}
				b.WriteByte(c)
				state = stUnquoted
			}
		case stSingle:
			if c == '\'' {
				state = stWhitespace
			} else {
				b.WriteByte(c)
			}
		case stDouble:
			switch c {
			case '"':
				state = stWhitespace
			case '\\':
				state = stEscape
			case '$':
				vars = append(vars, b.Len())
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		case stEscape:
			switch c {
			case '"', '\\', '$':
				b.WriteByte(c)
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'v':
				b.WriteByte('\v')
			default:
				return "", fmt.Errorf("unexpected escape sequence \\%c in %q (escape only \\\" \\\\ \\$ \\f \\n \\r \\t \\v)", c, firstLine(v))
			}
			state = stDouble
		case stWhitespace:
			if c == '#' {
				state = stComment
			} else if !isSpace(c) {
				return "", fmt.Errorf("unexpected text after whitespace in %q (quote values that contain spaces)", firstLine(v))
			}
		case stComment:
			i = len(v)
		}
	}
	switch state {
	case stSingle, stDouble, stEscape:
		return "", fmt.Errorf("missing closing quote in %q", firstLine(v))
	}
	s := b.String()
	for k := len(vars) - 1; k >= 0; k-- {
		at := vars[k]
		m := envVarRE.FindStringSubmatch(s[at:])
		if m == nil {
			continue
		}
		if val, ok := lookup(m[1]); ok {
			s = s[:at] + val + s[at+len(m[0]):]
		}
	}
	return s, nil
}

// phpTrim is PHP's trim(): spaces, tabs, line breaks, NUL and vertical tabs at both ends, and no
// other characters (a no-break space pasted into a password stays in it, as PHP reads it).
func phpTrim(s string) string { return strings.Trim(s, " \t\n\r\x00\x0b") }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// LaravelEnv is what Laravel's env() returns for a variable's raw value, as a string: false when it
// reads as null.
func LaravelEnv(raw string) (string, bool) { return laravelEnvValue(raw) }

// laravelEnvValue applies what Laravel's env() helper does to a raw value: "null" and "(null)" mean
// unset, "empty" and "(empty)" the empty string, "true"/"(true)" and "false"/"(false)" booleans (kept
// here as "true" and "false"), and one pair of surrounding quotes is removed.
func laravelEnvValue(v string) (string, bool) {
	switch strings.ToLower(v) {
	case "null", "(null)":
		return "", false
	case "empty", "(empty)":
		return "", true
	case "true", "(true)":
		return "true", true
	case "false", "(false)":
		return "false", true
	}
	// Env::get's /\A(['"])(.*)\1\z/: '.' does not match a line break, so a value spanning lines keeps
	// its quotes.
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] && !strings.Contains(v[1:len(v)-1], "\n") {
		return v[1 : len(v)-1], true
	}
	return v, true
}

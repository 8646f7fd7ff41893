package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// phpArray is a PHP array read from var_export's text: its keys in order, and the values by key (an
// integer key written in decimal).
type phpArray struct {
	keys   []string
	values map[string]any
}

// get follows a path of keys ("queue", "connections", "database") through nested arrays.
func (a *phpArray) get(path ...string) (any, bool) {
	var v any = a
	for _, k := range path {
		arr, ok := v.(*phpArray)
		if !ok || arr == nil {
			return nil, false
		}
		if v, ok = arr.values[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// phpObject stands for an object or an enum case in the export (a class's __set_state, (object) array,
// \Enum::Case): a value the configuration of the worker does not read.
type phpObject struct{ class string }

// readConfigCache reads the configuration `php artisan config:cache` wrote (bootstrap/cache/config.php
// beside the .env file, or APP_CONFIG_CACHE). It returns nil when there is none.
func readConfigCache(baseDir string, environ map[string]string) (*phpArray, string, error) {
	if baseDir == "" {
		return nil, "", nil
	}
	path := filepath.Join(baseDir, "bootstrap", "cache", "config.php")
	if p := environ["APP_CONFIG_CACHE"]; p != "" { // Application::normalizeCachePath
		path = p
		if !filepath.IsAbs(p) {
			path = filepath.Join(baseDir, p)
		}
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, path, fmt.Errorf("read the cached configuration %s: %w", path, err)
	}
	v, err := parsePHPExport(string(b))
	if err != nil {
		return nil, path, fmt.Errorf("%w: the cached configuration %s (php artisan config:cache) cannot be read: %v; run php artisan config:cache again, or config:clear", ErrInvalid, path, err)
	}
	arr, ok := v.(*phpArray)
	if !ok {
		return nil, path, fmt.Errorf("%w: the cached configuration %s returns no array; run php artisan config:cache again", ErrInvalid, path)
	}
	return arr, path, nil
}

// parsePHPExport reads a PHP file that returns one value written by var_export, as config:cache writes
// it: `<?php return array ( 'key' => value, ... );`.
func parsePHPExport(src string) (any, error) {
	p := &exportParser{s: src}
	p.skipSpace()
	if !p.eat("<?php") {
		return nil, errors.New("it does not start with <?php")
	}
	p.skipSpace()
	if !p.eat("return") {
		return nil, errors.New("it does not return a value")
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if !p.eat(";") {
		return nil, p.fail("';' after the value")
	}
	return v, nil
}

type exportParser struct {
	s   string
	pos int
}

func (p *exportParser) skipSpace() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

// eat consumes word (case-insensitively) when it comes next.
func (p *exportParser) eat(word string) bool {
	if len(p.s)-p.pos >= len(word) && strings.EqualFold(p.s[p.pos:p.pos+len(word)], word) {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *exportParser) fail(want string) error {
	line := 1 + strings.Count(p.s[:p.pos], "\n")
	return fmt.Errorf("line %d: expected %s", line, want)
}

func (p *exportParser) value() (any, error) {
	p.skipSpace()
	switch {
	case p.pos >= len(p.s):
		return nil, p.fail("a value")
	case p.eat("array"):
		return p.array()
	case p.eat("(object)"):
		p.skipSpace()
		if !p.eat("array") {
			return nil, p.fail("array after (object)")
		}
		if _, err := p.array(); err != nil {
			return nil, err
		}
		return phpObject{class: "stdClass"}, nil
	case p.s[p.pos] == '\'':
		return p.str()
	case p.s[p.pos] == '\\':
		return p.object()
	case p.eat("NULL"):
		return nil, nil
	case p.eat("true"):
		return true, nil
	case p.eat("false"):
		return false, nil
	}
	return p.number()
}

// array reads "( key => value, ... )" after the word array.
func (p *exportParser) array() (*phpArray, error) {
	p.skipSpace()
	if !p.eat("(") {
		return nil, p.fail("'(' after array")
	}
	a := &phpArray{values: map[string]any{}}
	for {
		p.skipSpace()
		if p.eat(")") {
			return a, nil
		}
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		var key string
		switch k := k.(type) {
		case string:
			key = k
		case int64:
			key = strconv.FormatInt(k, 10)
		default:
			return nil, p.fail("a string or integer key")
		}
		p.skipSpace()
		if !p.eat("=>") {
			return nil, p.fail("'=>'")
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if _, dup := a.values[key]; !dup {
			a.keys = append(a.keys, key)
		}
		a.values[key] = v
		p.skipSpace()
		if !p.eat(",") {
			p.skipSpace()
			if p.eat(")") {
				return a, nil
			}
			return nil, p.fail("',' or ')'")
		}
	}
}

// str reads a single-quoted string: \\ and \' are escapes, any other backslash is itself.
func (p *exportParser) str() (string, error) {
	var b strings.Builder
	for i := p.pos + 1; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '\\' && i+1 < len(p.s) && (p.s[i+1] == '\\' || p.s[i+1] == '\''):
			b.WriteByte(p.s[i+1])
			i++
		case c == '\'':
			p.pos = i + 1
			return b.String(), nil
		default:
			b.WriteByte(c)
		}
	}
	return "", p.fail("the end of a quoted string")
}

// object reads \Class::__set_state(array(...)) or an enum case \Enum::Case.
func (p *exportParser) object() (any, error) {
	start := p.pos
	for p.pos < len(p.s) && (isIdentByte(p.s[p.pos]) || p.s[p.pos] == '\\') {
		p.pos++
	}
	class := p.s[start+1 : p.pos]
	if !p.eat("::") {
		return nil, p.fail("'::' after a class name")
	}
	if p.eat("__set_state") {
		p.skipSpace()
		if !p.eat("(") {
			return nil, p.fail("'(' after __set_state")
		}
		if _, err := p.value(); err != nil {
			return nil, err
		}
		p.skipSpace()
		if !p.eat(")") {
			return nil, p.fail("')' after __set_state's array")
		}
		return phpObject{class: class}, nil
	}
	for p.pos < len(p.s) && isIdentByte(p.s[p.pos]) {
		p.pos++
	}
	return phpObject{class: class}, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// number reads an integer (int64) or a float (float64, INF and NAN included).
func (p *exportParser) number() (any, error) {
	start := p.pos
	for p.pos < len(p.s) && strings.IndexByte("+-0123456789.eEINFA", p.s[p.pos]) >= 0 {
		p.pos++
	}
	t := p.s[start:p.pos]
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return n, nil
	}
	switch t {
	case "INF":
		return strconv.ParseFloat("+Inf", 64)
	case "-INF":
		return strconv.ParseFloat("-Inf", 64)
	case "NAN":
		return strconv.ParseFloat("NaN", 64)
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && t != "" {
		return f, nil
	}
	p.pos = start
	return nil, p.fail("a value")
}

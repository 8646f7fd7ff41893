package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/artisan-go/artisan-go/payload"
)

func init() {
	register(command{
		name:    "payload:decode",
		summary: "Print a job payload (FILE or stdin) as one JSON object",
		run:     runPayloadDecode,
	})
}

const payloadDecodeUsage = `Usage: artisan-go payload:decode [FILE|-] [--env-file PATH]

Reads a job's payload column (a file, or stdin when FILE is - or missing) and prints one JSON object:
{"command": the PHP command in canonical JSON (null for raw jobs), plus the envelope's fields}.
Encrypted commands are decrypted with APP_KEY, APP_PREVIOUS_KEYS and APP_CIPHER from the environment,
or from the Laravel .env file given with --env-file (the environment wins, as in Laravel).`

// runPayloadDecode implements `artisan-go payload:decode`.
func runPayloadDecode(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	file, envFile := "-", ""
	seenFile := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "--help":
			fmt.Fprintln(stdout, payloadDecodeUsage)
			return 0
		case a == "--env-file" || a == "-env-file":
			if i+1 >= len(args) {
				fmt.Fprintln(stderr, "payload:decode: --env-file needs a path")
				return 2
			}
			i++
			envFile = args[i]
		case strings.HasPrefix(a, "--env-file="):
			envFile = strings.TrimPrefix(a, "--env-file=")
		case strings.HasPrefix(a, "-") && a != "-":
			fmt.Fprintf(stderr, "payload:decode: unknown option %s; run `artisan-go payload:decode --help`\n", a)
			return 2
		case seenFile:
			fmt.Fprintln(stderr, "payload:decode: give one FILE (or - for stdin)")
			return 2
		default:
			file, seenFile = a, true
		}
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "payload:decode: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	raw, err := readInput(file, stdin)
	if err != nil {
		return fail(err)
	}
	env, err := payload.ParseEnvelope(raw)
	if err != nil {
		return fail(err)
	}
	var cmd payload.Value
	if !env.IsRaw() {
		var kr *payload.Keyring
		if env.CommandEncrypted() {
			if kr, err = keyringFromEnv(envFile); err != nil {
				return fail(err)
			}
		}
		obj, err := payload.DecodeCommand(env, kr)
		if err != nil {
			return fail(err)
		}
		cmd = obj
	}
	out, err := json.Marshal(payload.Document(env, cmd))
	if err != nil {
		return fail(fmt.Errorf("write JSON: %w", err))
	}
	out = append(out, '\n')
	if _, err := stdout.Write(out); err != nil {
		return fail(err)
	}
	return 0
}

func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		if stdin == nil {
			return nil, errors.New("no input: give a FILE or pipe the payload to stdin")
		}
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("read stdin: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read payload: %w", err)
	}
	return b, nil
}

// keyringFromEnv builds the keyring from APP_KEY, APP_PREVIOUS_KEYS and APP_CIPHER, taken from the
// process environment first and then from the .env file.
func keyringFromEnv(envFile string) (*payload.Keyring, error) {
	vars := map[string]string{}
	if envFile != "" {
		f, err := os.Open(envFile)
		if err != nil {
			return nil, fmt.Errorf("read --env-file: %w", err)
		}
		defer f.Close()
		if vars, err = parseDotEnv(f); err != nil {
			return nil, fmt.Errorf("read --env-file %s: %w", envFile, err)
		}
	}
	get := func(k string) string {
		if v, ok := os.LookupEnv(k); ok {
			return v
		}
		return vars[k]
	}
	key := get("APP_KEY")
	if key == "" {
		return nil, errors.New("data.command is encrypted (ShouldBeEncrypted) and APP_KEY is not set; export APP_KEY or pass --env-file with the app's .env")
	}
	var previous []string
	for _, k := range strings.Split(get("APP_PREVIOUS_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			previous = append(previous, k)
		}
	}
	return payload.NewKeyring(key, previous, get("APP_CIPHER"))
}

// parseDotEnv reads the KEY=VALUE lines of a Laravel .env file: comments, blank lines, `export `,
// single quotes (literal), double quotes (with \n, \" and \\ escapes) and unquoted values ending at " #".
func parseDotEnv(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("line %d is not KEY=VALUE", n)
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '\'':
			end := strings.IndexByte(v[1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated single quote", n)
			}
			v = v[1 : 1+end]
		case len(v) >= 1 && v[0] == '"':
			var b strings.Builder
			closed := false
			for i := 1; i < len(v); i++ {
				c := v[i]
				if c == '\\' && i+1 < len(v) {
					i++
					switch v[i] {
					case 'n':
						b.WriteByte('\n')
					case 'r':
						b.WriteByte('\r')
					case 't':
						b.WriteByte('\t')
					default:
						b.WriteByte(v[i])
					}
					continue
				}
				if c == '"' {
					closed = true
					break
				}
				b.WriteByte(c)
			}
			if !closed {
				return nil, fmt.Errorf("line %d: unterminated double quote", n)
			}
			v = b.String()
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		out[k] = v
	}
	return out, s.Err()
}

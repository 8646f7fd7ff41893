package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/artisan-go/artisan-go/config"
	"github.com/artisan-go/artisan-go/payload"
)

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
		// A command in neither form is damaged, whatever the key: DecodeCommand says so before it
		// asks for one.
		if _, derr := payload.DecodeCommand(env, nil); env.CommandEncrypted() && errors.Is(derr, payload.ErrNoKeyring) {
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

// keyringFromEnv builds the keyring from APP_KEY, APP_PREVIOUS_KEYS and APP_CIPHER, read as queue:work
// reads them: the .env file parsed as Laravel's phpdotenv does, the process environment winning.
func keyringFromEnv(envFile string) (*payload.Keyring, error) {
	cfg, err := config.Load(config.LoadParams{EnvFile: envFile, Environ: os.Environ()})
	if err != nil {
		return nil, err
	}
	if cfg.App.Key == "" {
		return nil, errors.New("data.command is encrypted (ShouldBeEncrypted) and APP_KEY is not set; export APP_KEY or pass --env-file with the app's .env")
	}
	return payload.NewKeyring(cfg.App.Key, cfg.App.PreviousKeys, cfg.App.Cipher)
}

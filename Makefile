# artisan-go developer tasks. `make help` lists them.
.DEFAULT_GOAL := help
PKGS := ./...
# The bench tag builds queue:bench (the benchmark harness and its plot), which the shipped binary leaves out.
TAGS := -tags bench

help: ## List the tasks
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

test: ## Run every test against the local MariaDB, PostgreSQL, SQLite and PHP
	go test $(TAGS) -count=1 $(PKGS)
	go test -tags otlp -count=1 ./tracing

build: ## Build bin/artisan-go; bin/artisan-go-otlp also exports traces over OTLP
	go build -o bin/artisan-go ./cmd/artisan-go
	go build -tags otlp -o bin/artisan-go-otlp ./cmd/artisan-go

chaos: ## Run the long fault suite (own database servers killed, workers killed and stopped) and print its table
	cd internal/faults && ARTISAN_GO_CHAOS=1 go test -count=1 -timeout 30m

race: ## Run the worker's and the fault suite's tests under the race detector
	go test -race -count=1 ./worker ./internal/faults

FUZZTIME ?= 10s
fuzz: ## Run every fuzz target for FUZZTIME (10s) each
	@set -e; for f in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "fuzz $$t ./$$(dirname $$f)"; go test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./$$(dirname $$f); \
	  done; \
	done

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	go vet $(PKGS)
	go vet $(TAGS) $(PKGS)
	go vet -tags otlp ./tracing

bench: ## Run the Go benchmarks
	go test $(TAGS) -run '^$$' -bench . -benchmem $(PKGS)

demo: ## Run the demo on embedded SQLite
	go run ./cmd/artisan-go demo

.PHONY: help test build chaos race fuzz lint bench demo

# artisan-go developer tasks. `make help` lists them.
.DEFAULT_GOAL := help
PKGS := ./...
# The bench tag builds queue:bench (the benchmark harness and its plot), which the shipped binary leaves out.
TAGS := -tags bench

help: ## List the tasks
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

test: ## Run every test against the local MariaDB, PostgreSQL, SQLite and PHP
	go test $(TAGS) -count=1 $(PKGS)

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	go vet $(PKGS)
	go vet $(TAGS) $(PKGS)

bench: ## Run the Go benchmarks
	go test $(TAGS) -run '^$$' -bench . -benchmem $(PKGS)

demo: ## Run the demo on embedded SQLite
	go run ./cmd/artisan-go demo

.PHONY: help test lint bench demo

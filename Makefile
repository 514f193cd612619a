# The two commands a newcomer needs: `make demo` and `make test`. Both install what is missing
# first (scripts/setup.sh: a Vulkan loader and, without a GPU driver, Mesa's software Vulkan).
CARGO ?= cargo
export KERNTUNE_CACHE_DIR ?= $(CURDIR)/target/kerntune-cache

.PHONY: setup build demo test lint doc

setup:
	@bash scripts/setup.sh

build: setup
	$(CARGO) build

# Tunes the shipped triad on the best available backend (a GPU when there is one, else software
# Vulkan) and prints the result table; a second `make demo` is a database hit.
demo: build
	./target/debug/kerntune devices
	./target/debug/kerntune tune examples/triad/triad.toml

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy --workspace --all-targets --features cuda -- -D warnings

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps

# Every test, with a Vulkan device required (the CLI tests tune for real on it).
# Tests that need a device they do not have are listed at the end (SKIPPED ... and why).
test: setup lint
	@rm -f target/skipped.txt
	KERNTUNE_REQUIRE_DEVICE=wgpu KERNTUNE_SKIP_LOG=$(CURDIR)/target/skipped.txt $(CARGO) test --workspace --features cuda
	@if [ -f target/skipped.txt ]; then echo "--- skipped (no such device here):"; sort -u target/skipped.txt; fi

# The two commands a newcomer needs: `make demo` and `make test`. Both install what is missing
# first (scripts/setup.sh: a Vulkan loader, Mesa's software Vulkan without a GPU driver, and
# the HIP headers and library for building the HIP backend).
CARGO ?= cargo
export KERNTUNE_CACHE_DIR ?= $(CURDIR)/target/kerntune-cache
# Debian's libamdhip64-dev installs ROCm 5.2 under /usr; point HIP_PATH at a ROCm install elsewhere.
export HIP_PATH ?= /usr
# Mesa's Vulkan drivers want a runtime directory (containers and CI have none).
export XDG_RUNTIME_DIR ?= $(CURDIR)/target/xdg-runtime

.PHONY: setup setup-test build demo test test-slurm lint doc

setup:
	@bash scripts/setup.sh

# What only the tests add: a headless Chromium for the HTML report's browser test.
setup-test:
	@bash scripts/setup.sh --test

build: setup
	$(CARGO) build

# Tunes the shipped triad on the best available backend (a GPU when there is one, else software
# Vulkan), prints the result table and writes the HTML report of it (target/demo-report.html);
# a second `make demo` is a database hit.
demo: build
	./target/debug/kerntune devices
	./target/debug/kerntune tune examples/triad/triad.toml
	./target/debug/kerntune report examples/triad/triad.toml --out target/demo-report.html

# fmt, then clippy for each feature set (default = wgpu; with CUDA; with HIP; no backend).
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy --workspace --all-targets --features cuda -- -D warnings
	$(CARGO) clippy --workspace --all-targets --features hip -- -D warnings
	$(CARGO) clippy --no-default-features -- -D warnings

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --features cuda,hip

# Every test, with all three backends compiled in. A software Vulkan device is required (the
# CLI tests tune on it); tests that need a device that is absent (CUDA, AMD) are listed at the end.
test: setup-test lint doc
	@mkdir -p -m 700 $(XDG_RUNTIME_DIR)
	@rm -f target/skipped.txt
	KERNTUNE_REQUIRE_DEVICE=wgpu KERNTUNE_REQUIRE_BROWSER=1 KERNTUNE_SKIP_LOG=$(CURDIR)/target/skipped.txt $(CARGO) test --workspace --features cuda,hip
	KERNTUNE_SKIP_LOG=$(CURDIR)/target/skipped.txt bash tests/slurm/run.sh target/debug/kerntune
	@if [ -f target/skipped.txt ]; then echo "--- skipped (no such device here):"; sort -u target/skipped.txt; fi

# A split tune on a real single-node Slurm cluster (installs slurm-wlm and munge when missing;
# needs root): 4 array tasks on software Vulkan, a dependent merge-and-confirm job, checked.
test-slurm: build
	@mkdir -p -m 700 $(XDG_RUNTIME_DIR)
	bash tests/slurm/run.sh target/debug/kerntune

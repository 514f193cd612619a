# The two commands a newcomer needs: `make demo` and `make test`. Both install what is missing
# first (scripts/setup.sh: a Vulkan loader, and Mesa's software Vulkan without a GPU driver;
# for `make test` also the HIP headers, library and compiler, and a headless Chromium, where
# the system's packages have them).
CARGO ?= cargo
export KERNTUNE_CACHE_DIR ?= $(CURDIR)/target/kerntune-cache
# Debian's libamdhip64-dev installs ROCm 5.2 under /usr; point HIP_PATH at a ROCm install elsewhere.
export HIP_PATH ?= /usr
# Mesa's Vulkan drivers want a runtime directory (containers and CI have none).
export XDG_RUNTIME_DIR ?= $(CURDIR)/target/xdg-runtime

.PHONY: setup setup-test build demo test test-slurm lint doc

# The HIP backend is built and tested where its headers are: Debian 12 and Ubuntu 24.04 package
# them (scripts/setup.sh --test installs them), Ubuntu 22.04 does not. Without them the HIP
# crate is left out of the workspace's builds, and `make test` says so at its end. (Expanded when
# a recipe runs, after the set-up.)
comma := ,
HAVE_HIP = $(shell test -f "$(HIP_PATH)/include/hip/hip_runtime_api.h" && echo 1)
NO_HIP = $(if $(HAVE_HIP),,--exclude kerntune-hip)
TEST_FEATURES = cuda$(if $(HAVE_HIP),$(comma)hip)
# The report's browser test must run where setup could install a browser, and is skipped (and
# listed) where it could not.
HAVE_BROWSER = $(shell command -v chromium || command -v chromium-browser || command -v google-chrome)

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
	$(CARGO) clippy --workspace $(NO_HIP) --all-targets -- -D warnings
	$(CARGO) clippy --workspace $(NO_HIP) --all-targets --features cuda -- -D warnings
	$(if $(HAVE_HIP),$(CARGO) clippy --workspace --all-targets --features hip -- -D warnings,@echo "lint: the HIP backend left out (no $(HIP_PATH)/include/hip/hip_runtime_api.h)")
	$(CARGO) clippy --no-default-features -- -D warnings

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace $(NO_HIP) --no-deps --features $(TEST_FEATURES)

# Every test, with all three backends compiled in (HIP where its headers are). A software Vulkan
# device is required (the CLI tests tune on it); tests that need what is absent (a CUDA or AMD
# GPU, the HIP headers, a browser) are listed at the end.
test: setup-test lint doc
	@mkdir -p -m 700 $(XDG_RUNTIME_DIR)
	@rm -f target/skipped.txt
	$(if $(HAVE_HIP),,@echo "the HIP backend: not built or tested (no HIP headers under $(HIP_PATH)/include/hip; Debian 12 and Ubuntu 24.04 package them as libamdhip64-dev, elsewhere install ROCm and set HIP_PATH)" >> target/skipped.txt)
	KERNTUNE_REQUIRE_DEVICE=wgpu $(if $(HAVE_BROWSER),KERNTUNE_REQUIRE_BROWSER=1) KERNTUNE_SKIP_LOG=$(CURDIR)/target/skipped.txt $(CARGO) test --workspace $(NO_HIP) --features $(TEST_FEATURES)
	KERNTUNE_SKIP_LOG=$(CURDIR)/target/skipped.txt bash tests/slurm/run.sh target/debug/kerntune
	@if [ -f target/skipped.txt ]; then echo "--- skipped here (a device, library or program this machine lacks):"; sort -u target/skipped.txt; fi

# A split tune on a real single-node Slurm cluster (installs slurm-wlm and munge when missing;
# needs root): 4 array tasks on software Vulkan, a dependent merge-and-confirm job, checked.
test-slurm: build
	@mkdir -p -m 700 $(XDG_RUNTIME_DIR)
	bash tests/slurm/run.sh target/debug/kerntune

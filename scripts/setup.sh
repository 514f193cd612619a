#!/usr/bin/env bash
# Installs what kerntune needs on a fresh Debian/Ubuntu machine with Rust.
# - Always (`make demo`): a Vulkan loader and, when no Vulkan driver is present, Mesa's software
#   Vulkan (llvmpipe), so that the wgpu backend has a device everywhere.
# - With --hip, or --test: the HIP headers and library the HIP backend builds against, and
#   ROCm's offline HIP compiler for the tests.
# - With --test (`make test`): also a headless Chromium for the HTML report's browser test.
#   (Slurm and munge for the split-tune test are installed by tests/slurm/run.sh itself.)
# What only the HIP backend or the tests need is installed where the system's packages have it
# (Debian 12 and Ubuntu 24.04 package ROCm's HIP; Ubuntu 22.04 does not, and Ubuntu ships
# Chromium only as a snap); where they do not, this says what goes without it, and goes on.
# Idempotent: does nothing when everything is there.
set -euo pipefail
for_tests=0
for_hip=0
for arg in "$@"; do
  case "$arg" in
    --test) for_tests=1; for_hip=1 ;;
    --hip) for_hip=1 ;;
    *) echo "setup: unknown option $arg (use --hip or --test)" >&2; exit 2 ;;
  esac
done

need=()      # must be installed
optional=()  # installed where the system's packages have them
command -v cargo >/dev/null || { echo "setup: cargo not found; install Rust from rustup.rs first" >&2; exit 1; }
# A full `make test` build takes about 3 GB (`make demo` about 1 GB). A full disk shows up later
# as a compiler error far from its cause, so say it here (a warning: the build may still fit).
target_dir="${CARGO_TARGET_DIR:-target}"
[ -d "$target_dir" ] || target_dir=.
free_kb=$(df -Pk "$target_dir" 2>/dev/null | awk 'NR == 2 {print $4}')
if [ -n "${free_kb:-}" ] && [ "$free_kb" -lt $((3 * 1024 * 1024)) ]; then
  echo "setup: warning: only $((free_kb / 1024)) MB free where cargo builds ($target_dir); building and testing kerntune needs about 3 GB (free some space, or set CARGO_TARGET_DIR to a larger disk)" >&2
fi
# (grep reads it all: with -q it could stop early, and ldconfig's broken pipe would fail the
# pipeline under pipefail, asking for a loader that is there.)
# ldconfig is in /sbin, which a user's PATH on Debian does not hold.
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
"$ldconfig" -p 2>/dev/null | grep 'libvulkan.so.1' >/dev/null || need+=(libvulkan1)
icds=$(ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json 2>/dev/null | wc -l || true)
[ "${icds:-0}" -gt 0 ] || need+=(mesa-vulkan-drivers)
# The HIP backend builds against the HIP headers and links libamdhip64 (Debian: ROCm 5.2).
hip_headers() { [ -f "${HIP_PATH:-/usr}/include/hip/hip_runtime_api.h" ]; }
# ROCm's offline HIP compiler: the tests compile the shipped examples as HIP with it, since
# ROCm 5.2's hipRTC needs an AMD GPU to compile.
hipcc_present() { [ -x "${HIP_PATH:-/usr}/bin/hipcc" ] || command -v hipcc >/dev/null; }
# The report's browser test loads the page in a real headless Chromium (tests/report.rs looks
# for these names).
browser() { command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null; }
if [ "$for_hip" = 1 ]; then
  hip_headers || optional+=(libamdhip64-dev)
  hipcc_present || optional+=(hipcc)
fi
[ "$for_tests" = 1 ] && ! browser && optional+=(chromium)

# What goes without an optional package that this system's packages do not have.
without() {
  case "$1" in
    libamdhip64-dev) echo "the HIP backend is not built or tested here: this system's packages have no HIP headers and library (Debian 12 and Ubuntu 24.04 have libamdhip64-dev); install ROCm (https://rocm.docs.amd.com) and set HIP_PATH to build it" ;;
    hipcc) echo "the shipped kernels are not compiled as HIP here: this system's packages have no hipcc (ROCm's offline compiler); install ROCm's to test that" ;;
    chromium) echo "the HTML report's browser test is skipped here: this system's packages have no chromium (Ubuntu ships it as a snap only); put chromium, chromium-browser or google-chrome on PATH to run it" ;;
  esac
}

if [ $((${#need[@]} + ${#optional[@]})) -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    if [ ${#need[@]} -gt 0 ]; then
      echo "setup: missing ${need[*]} and no apt-get here; install a Vulkan loader and driver for your system" >&2
      exit 1
    fi
    for p in "${optional[@]}"; do echo "setup: note: no apt-get here, so $(without "$p")"; done
    optional=()
  fi
fi
if [ $((${#need[@]} + ${#optional[@]})) -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  # An optional package is installed only where the package lists have it (a name apt does not
  # know would fail the whole install).
  for p in ${optional[@]+"${optional[@]}"}; do
    if apt-cache policy "$p" 2>/dev/null | grep 'Candidate: [^(]' >/dev/null; then
      need+=("$p")
    else
      echo "setup: note: $(without "$p")"
    fi
  done
  if [ ${#need[@]} -gt 0 ]; then
    echo "setup: installing ${need[*]}"
    # Through env: sudo would drop a variable set before it (its env_reset), and a package
    # that asks a question while it installs (debconf) would wait at a prompt in a terminal.
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi
have="Vulkan loader and driver"
[ "$for_hip" = 1 ] && hip_headers && have+=", HIP headers and library"
[ "$for_hip" = 1 ] && hipcc_present && have+=", HIP compiler"
[ "$for_tests" = 1 ] && browser && have+=", headless Chromium"
echo "setup: ok ($have present)"

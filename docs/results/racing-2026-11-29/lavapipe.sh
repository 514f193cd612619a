#!/usr/bin/env bash
# The racing change on software Vulkan where a driver compiles each kernel at its first launch:
# Mesa 23.2.1's lavapipe on Ubuntu 22.04 (a debootstrap chroot, `scripts/chroot-check.sh jammy
# demo user` made it and the user `dev`), the triad as `make demo` tunes it, --no-db. Run as
# `dev` inside the chroot, in ~/kerntune, with kt-before (f3ca7f8^) and kt-after2 (this change)
# built there by `cargo build`. "cold": Mesa's shader cache emptied before each run (a fresh
# user's first tune); "warm": kept. noracing.toml is the triad with `racing = false` under
# [bench], the reference order. lavapipe-table.py prints the table in docs/benchmarks.md.
set -eu
for i in 1 2 3; do for b in before after2; do
  rm -rf ~/.cache/mesa_shader_cache
  ~/kt-$b tune examples/triad/triad.toml --no-db --json > ~/rc/cold-$b-$i.json
done; done
for i in 1 2; do for b in before after2; do
  ~/kt-$b tune examples/triad/triad.toml --no-db --json > ~/rc/warm-$b-$i.json
done; done
~/kt-after2 tune examples/triad/noracing.toml --no-db --json > ~/rc/noracing.json

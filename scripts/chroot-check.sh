#!/usr/bin/env bash
# The newcomer path on a fresh Ubuntu (or Debian) root file system: `make demo` or `make test` in
# a clean clone of this repository, inside a chroot made by debootstrap, with this machine's
# Rust toolchain. How the README's two commands were checked on Ubuntu 22.04 and 24.04.
#
#   sudo bash scripts/chroot-check.sh RELEASE [demo|test]     # RELEASE: jammy, noble, bookworm
#
# Needs root, debootstrap (and zstd for Ubuntu 24.04's packages) and network. The root file
# system is made once under $CHROOT_DIR (default /var/tmp/kerntune-chroots/RELEASE) and kept;
# the clone inside is made fresh each run (the commit checked out here, committed work only).
# Like a fresh machine with Rust, it has git, a C toolchain and make, and its host name resolves.
set -euo pipefail
release=${1:?usage: chroot-check.sh RELEASE [demo|test]}
target=${2:-demo}
[ "$(id -u)" = 0 ] || { echo "chroot-check: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
root=${CHROOT_DIR:-/var/tmp/kerntune-chroots/$release}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
cargo_home=${CARGO_HOME:-$HOME/.cargo}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}

case "$release" in
  bookworm | trixie) mirror=http://deb.debian.org/debian components=main ;;
  *) mirror=http://archive.ubuntu.com/ubuntu components=main,universe ;;
esac
if [ ! -x "$root/bin/bash" ]; then
  command -v debootstrap >/dev/null || { echo "chroot-check: install debootstrap first" >&2; exit 1; }
  # debootstrap releases older than the Ubuntu release lack its script; all Ubuntu ones are gutsy's.
  scripts=/usr/share/debootstrap/scripts
  [ -e "$scripts/$release" ] || ln -s gutsy "$scripts/$release"
  mkdir -p "$root"
  debootstrap --variant=minbase --components="$components" "$release" "$root" "$mirror"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
grep -q "[[:space:]]$(hostname)\$" "$root/etc/hosts" || echo "127.0.0.1 $(hostname)" >>"$root/etc/hosts"
mkdir -p "$root/root/.cargo" "$root/root/.rustup"
mounts=()
bind() {
  # shellcheck disable=SC2086 # $1 is the mount's options, one word each
  mountpoint -q "$root$2" || { mount $1 "$root$2"; mounts+=("$root$2"); }
}
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind "-t proc proc" /proc
bind "--rbind /sys" /sys
bind "--rbind /dev" /dev
bind "--bind $cargo_home" /root/.cargo
bind "--bind $rustup_home" /root/.rustup
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "$1"
}
in_root 'command -v git >/dev/null && command -v cc >/dev/null && command -v make >/dev/null ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ca-certificates git build-essential >/dev/null; }'
rm -rf "$root/root/kerntune"
git clone -q "$repo" "$root/root/kerntune"
echo "chroot-check: make $target in $release at $(git -C "$repo" rev-parse --short HEAD)"
in_root "cd /root/kerntune && make $target"

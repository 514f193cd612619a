#!/usr/bin/env bash
# The newcomer path on a fresh Ubuntu (or Debian) root file system: `make demo` or `make test` in
# a clean clone of this repository, inside a chroot made by debootstrap, with this machine's
# Rust toolchain. How the README's two commands were checked on Ubuntu 22.04 and 24.04.
#
#   sudo bash scripts/chroot-check.sh RELEASE [demo|test] [root|user]   # RELEASE: jammy, noble, bookworm
#
# `user` runs it as a user who is not root, with sudo rights (as on a cloud image or a desktop
# install: the set-up installs packages through sudo) and a PATH without /sbin; the Rust
# toolchain is this machine's, read-only, and the user's cargo home their own.
#
# Needs root, debootstrap (and zstd for Ubuntu 24.04's packages) and network. The root file
# system is made once under $CHROOT_DIR (default /var/tmp/kerntune-chroots/RELEASE) and kept;
# the clone inside is made fresh each run (the commit checked out here, committed work only).
# Like a fresh machine with Rust, it has git, a C toolchain and make, and its host name resolves.
set -euo pipefail
release=${1:?usage: chroot-check.sh RELEASE [demo|test]}
target=${2:-demo}
who=${3:-root}
case "$who" in root | user) ;; *) echo "chroot-check: run as root or user, not $who" >&2; exit 2 ;; esac
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
# Certificate authorities this machine adds to the system's (a network's TLS proxy): trusted
# inside as well, or cargo could not download crates through that network.
local_cas=(/usr/local/share/ca-certificates/*.crt)
[ -e "${local_cas[0]}" ] && mkdir -p "$root/usr/local/share/ca-certificates" && cp "${local_cas[@]}" "$root/usr/local/share/ca-certificates/"
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
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ca-certificates git build-essential >/dev/null; }
  update-ca-certificates >/dev/null 2>&1 || true'
if [ "$who" = root ]; then
  rm -rf "$root/root/kerntune"
  git clone -q "$repo" "$root/root/kerntune"
  echo "chroot-check: make $target in $release at $(git -C "$repo" rev-parse --short HEAD), as root"
  in_root "cd /root/kerntune && make $target"
  exit
fi
# A user `dev` with sudo rights and no password asked (a cloud image's default user), made
# afresh each run: an empty home, so no cargo, Mesa shader or kerntune cache from an earlier run.
in_root 'command -v sudo >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sudo >/dev/null; }
  ! id dev >/dev/null 2>&1 || userdel -r dev 2>/dev/null || true
  rm -rf /home/dev && useradd -m -s /bin/bash dev
  echo "dev ALL=(ALL) NOPASSWD:ALL" >/etc/sudoers.d/dev && chmod 440 /etc/sudoers.d/dev'
mkdir -p "$root/opt/rustup" "$root/opt/cargo-bin"
bind "--bind -o ro $rustup_home" /opt/rustup
bind "--bind -o ro $cargo_home/bin" /opt/cargo-bin
git clone -q "$repo" "$root/home/dev/kerntune"
in_root 'chown -R dev:dev /home/dev'
echo "chroot-check: make $target in $release at $(git -C "$repo" rev-parse --short HEAD), as a user with sudo"
chroot "$root" /usr/sbin/runuser -u dev -- /usr/bin/env -i HOME=/home/dev USER=dev LOGNAME=dev TERM=dumb LANG=C.UTF-8 \
  RUSTUP_HOME=/opt/rustup CARGO_HOME=/home/dev/.cargo \
  PATH=/opt/cargo-bin:/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games \
  bash -c "cd /home/dev/kerntune && make $target"

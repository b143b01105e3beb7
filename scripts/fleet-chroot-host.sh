#!/usr/bin/env bash
# Inventory hosts of their own for tests/fleet_arch.rs (issue 39): a private sshd
# whose sessions run chrooted (sshd's ChrootDirectory) in a throw-away overlay of a
# cached Debian root: by default the arm64 Debian 13 root (scripts/pkg-root.sh build
# trixie arm64), so that `uname -m`, dpkg, apt-get and cipherbench there are arm64
# binaries under qemu-user; with --root, any other (the amd64 Debian 13 root: a host
# with a dpkg database of its own).
#
# Usage:
#   scripts/fleet-chroot-host.sh root
#       builds the arm64 root if it is missing (once: about 20 minutes) and prints it.
#   scripts/fleet-chroot-host.sh serve [--root DIR] [--bind DIR]... -- SSHD ARG...
#       in a private mount namespace: an overlay of the root (its upper layer a
#       tmpfs that vanishes with sshd), /proc, /sys, /dev and /tmp in it, each DIR
#       bind-mounted at the same path inside, this machine's / read-only at /native,
#       and /usr/local/bin/native-python3 there: this machine's python3, run through
#       its own dynamic loader, for Ansible's modules (emulated, python3 made each
#       module take 10-30 s: a three-host play took 558 s; everything the modules
#       run, uname, dpkg, apt-get, cipherbench, is still the root's arm64 binaries).
#       Then exec SSHD ARG... with `-o ChrootDirectory=MERGED` added. The mount
#       point is /var/cache/cipherbench/fleet-chroot.mnt (sshd wants every component
#       of the chroot's path owned by root and writable by no one else, which /tmp
#       is not); each sshd mounts there in its own namespace, so several can run at
#       once, and the mounts end with it. The cached root is never written.
#
# Needs root, qemu-user-static and binfmt_misc (pkg-root.sh registers them).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "fleet-chroot-host: needs root (chroot, mount)" >&2; exit 1; }

cache=/var/cache/cipherbench
lower=${CIPHERBENCH_ARM64_ROOT:-$cache/debian13-arm64-root}

serve() {
  local binds=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --bind) binds+=("$2"); shift 2 ;;
      --root) lower="$2"; shift 2 ;;
      --) shift; break ;;
      *) echo "fleet-chroot-host: unknown option $1" >&2; exit 2 ;;
    esac
  done
  [[ $# -gt 0 ]] || { echo "fleet-chroot-host: serve needs an sshd command" >&2; exit 2; }
  [[ -f "$lower/.cipherbench-root" ]] || { echo "fleet-chroot-host: no root $lower: run '$0 root' first" >&2; exit 1; }
  [[ ! -e "$lower/lib/ld-linux-aarch64.so.1" || "$(head -1 /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null)" == enabled ]] || {
    echo "fleet-chroot-host: binfmt_misc qemu-aarch64 is not registered (scripts/pkg-root.sh registers it)" >&2
    exit 1
  }
  local python ldso
  python=$(readlink -f /usr/bin/python3)
  ldso=$(readlink -f /lib64/ld-linux-x86-64.so.2 2>/dev/null || readlink -f /lib/ld-linux-aarch64.so.1)
  local mnt=$cache/fleet-chroot.mnt
  mkdir -p "$mnt"
  chmod 755 "$mnt"
  # exec: sshd becomes the namespace's first process; the mounts end with it and
  # its sessions.
  exec unshare --mount --propagation private -- /bin/bash -euc '
    lower="$1"; mnt="$2"; python="$3"; ldso="$4"; nbinds="$5"; shift 5
    binds=("${@:1:$nbinds}"); shift "$nbinds"
    mount -t tmpfs -o mode=755 tmpfs "$mnt"
    mkdir "$mnt/upper" "$mnt/work" "$mnt/root"
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$mnt/upper,workdir=$mnt/work" "$mnt/root"
    r="$mnt/root"
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
    mkdir -p "$r/native"
    mount --bind / "$r/native"
    mount -o remount,bind,ro "$r/native"
    multi=$(basename "$(dirname "$ldso")")
    printf "#!/bin/sh\nPYTHONHOME=/native/usr exec /native%s --library-path /native/lib/%s:/native/usr/lib/%s /native%s \"\$@\"\n" \
      "$ldso" "$multi" "$multi" "$python" >"$r/usr/local/bin/native-python3"
    chmod 755 "$r/usr/local/bin/native-python3"
    for b in "${binds[@]}"; do
      mkdir -p "$r$b"
      mount --bind "$b" "$r$b"
    done
    exec "$@" -o "ChrootDirectory=$r"
  ' sh "$lower" "$mnt" "$python" "$ldso" "${#binds[@]}" "${binds[@]}" "$@"
}

case "${1:-}" in
  root) scripts/pkg-root.sh build trixie arm64 "$lower" ;;
  serve) shift; serve "$@" ;;
  *) echo "usage: $0 root | serve [--root DIR] [--bind DIR]... -- SSHD ARG..." >&2; exit 2 ;;
esac

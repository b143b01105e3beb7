#!/usr/bin/env bash
# An arm64 inventory host for tests/fleet_arch.rs (issue 39): a private sshd whose
# sessions run chrooted (sshd's ChrootDirectory) in a throw-away overlay of the
# cached arm64 Debian 13 root, so that `uname -m` says aarch64 under qemu-user and
# Ansible's modules run with that root's python3, over real SSH.
#
# Usage:
#   scripts/fleet-arm64-host.sh layer
#       prepares (once) and prints the cached layer: python3 installed over the
#       arm64 root (scripts/pkg-root.sh build trixie arm64), kept as an overlay upper
#       directory in /var/cache/cipherbench/debian13-arm64-fleet (the shared root is
#       never written). Emulated, apt takes a few minutes, once.
#   scripts/fleet-arm64-host.sh serve [--bind DIR]... -- SSHD ARG...
#       in a private mount namespace: an overlay of the layer over the root (its
#       upper layer a tmpfs that vanishes with sshd), /proc, /sys and /dev in it,
#       each DIR bind-mounted at the same path inside, then exec SSHD ARG... with
#       `-o ChrootDirectory=MERGED` added. The mount point is
#       /var/cache/cipherbench/fleet-arm64.mnt (sshd wants every component of the
#       chroot's path owned by root and writable by no one else, which /tmp is not);
#       each sshd mounts there in its own namespace, so several can run at once.
#
# Needs root; the arm64 root needs qemu-user-static and binfmt_misc (pkg-root.sh
# registers them).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "fleet-arm64-host: needs root (chroot, mount)" >&2; exit 1; }

cache=/var/cache/cipherbench
lower=${CIPHERBENCH_ARM64_ROOT:-$cache/debian13-arm64-root}
layer=${CIPHERBENCH_ARM64_FLEET_LAYER:-$cache/debian13-arm64-fleet}

layer() {
  scripts/pkg-root.sh build trixie arm64 "$lower" >/dev/null
  local recipe="cipherbench-fleet-arm64/1 python3 on $(cat "$lower/.cipherbench-root") $(cat "$lower/.cached-debs")"
  exec 9>"$layer.lock"
  flock 9
  if [[ "$(cat "$layer.recipe" 2>/dev/null)" != "$recipe" ]]; then
    echo "fleet-arm64-host: preparing $layer (python3, emulated: minutes)" >&2
    rm -rf --one-file-system "$layer"
    mkdir -p "$layer"
    scripts/pkg-root.sh run "$lower" --upper "$layer" -- /bin/sh -c \
      "apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 && apt-get clean" \
      </dev/null >"$layer.log" 2>&1 || {
      tail -20 "$layer.log" >&2
      exit 1
    }
    echo "$recipe" >"$layer.recipe"
  fi
  echo "$layer"
}

serve() {
  local binds=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --bind) binds+=("$2"); shift 2 ;;
      --) shift; break ;;
      *) echo "fleet-arm64-host: unknown option $1" >&2; exit 2 ;;
    esac
  done
  [[ $# -gt 0 ]] || { echo "fleet-arm64-host: serve needs an sshd command" >&2; exit 2; }
  [[ -f "$layer.recipe" && -d "$layer/upper" ]] || { echo "fleet-arm64-host: no layer: run '$0 layer' first" >&2; exit 1; }
  [[ "$(head -1 /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null)" == enabled ]] || {
    echo "fleet-arm64-host: binfmt_misc qemu-aarch64 is not registered (scripts/pkg-root.sh registers it)" >&2
    exit 1
  }
  local mnt=$cache/fleet-arm64.mnt
  mkdir -p "$mnt"
  chmod 755 "$mnt"
  # exec: sshd becomes the namespace's only process; when it ends, the mounts go.
  exec unshare --mount --propagation private -- /bin/bash -euc '
    lower="$1"; layer="$2"; mnt="$3"; nbinds="$4"; shift 4
    binds=("${@:1:$nbinds}"); shift "$nbinds"
    mount -t tmpfs -o mode=755 tmpfs "$mnt"
    mkdir "$mnt/upper" "$mnt/work" "$mnt/root"
    mount -t overlay overlay -o "lowerdir=$layer/upper:$lower,upperdir=$mnt/upper,workdir=$mnt/work" "$mnt/root"
    r="$mnt/root"
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
    for b in "${binds[@]}"; do
      mkdir -p "$r$b"
      mount --bind "$b" "$r$b"
    done
    exec "$@" -o "ChrootDirectory=$r"
  ' sh "$lower" "$layer" "$mnt" "${#binds[@]}" "${binds[@]}" "$@"
}

case "${1:-}" in
  layer) layer ;;
  serve) shift; serve "$@" ;;
  *) echo "usage: $0 layer | serve [--bind DIR]... -- SSHD ARG..." >&2; exit 2 ;;
esac

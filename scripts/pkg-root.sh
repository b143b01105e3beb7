#!/usr/bin/env bash
# Clean Debian roots for the package's tests (issue 39), and commands run in a
# throw-away overlay of any root.
#
# Usage:
#   scripts/pkg-root.sh build SUITE ARCH DIR
#       builds DIR once (idempotent) and prints it: `debootstrap --variant=minbase`
#       of SUITE (bookworm, trixie, forky: with sid's debootstrap script where the
#       host's debootstrap has none, and no Valid-Until check inside a testing
#       root) for ARCH (amd64, or arm64 under qemu-user), nothing more installed,
#       and the archives of what cipherbench's package pulls (libssl3, openssl,
#       OpenSSH, GnuTLS) downloaded into its apt cache, so that `apt install ./X.deb`
#       in it pulls them without the network. arm64 roots have them installed
#       instead: emulated, dpkg and OpenSSH's postinst take minutes per install.
#   scripts/pkg-root.sh run DIR [--layer LAYER]... [--upper UPPER] [--bind HOST:INSIDE]... -- CMD ARG..
#       runs CMD inside an overlay of DIR in a private mount namespace: DIR is the
#       lower layer and is never written; the upper layer is a tmpfs that vanishes
#       with the command (or, with --upper, the directory UPPER, kept: a cached
#       layer of its own, as for the cross-build's root). Each --layer is such a
#       kept UPPER of an earlier run, stacked read-only over DIR (the last given
#       topmost): a cached layer that the command sees but does not write (the
#       OpenSSL 4 install test's experimental archives: scripts/openssl4.sh).
#       /proc, /sys and /dev are mounted for it alone, and each --bind HOST dir is
#       bind-mounted at INSIDE.
#
# Roots are cached under /var/cache/cipherbench (e.g. debian12-root,
# debian13-arm64-root), outside any clone. A root is built in DIR.partial and renamed
# when complete; DIR/.cipherbench-root holds its recipe; another recipe rebuilds it.
# Concurrent callers wait on DIR.lock. arm64 roots need qemu-user-static and
# binfmt_misc (mounted and registered here when missing; the registration is the
# kernel's, with qemu's own F flag, so that it works inside a chroot).
# Needs root and a Debian mirror (the host's, or PKG_ROOT_MIRROR=http://...).
set -euo pipefail

die() { echo "pkg-root: $*" >&2; exit 2; }
log() { echo "pkg-root: $*" >&2; }
[[ $(id -u) -eq 0 ]] || { echo "pkg-root: needs root (debootstrap, chroot, mount)" >&2; exit 1; }

# The mirror the host's apt uses (scripts/host-mirror.sh), unless given.
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
host_mirror() { "$scripts_dir/host-mirror.sh"; }

# Host apt, tolerant of a malformed /etc/apt/sources.list (the deb822 sources suffice).
host_apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get -o Dir::Etc::SourceList=/dev/null install -y -qq --no-install-recommends "$@" </dev/null >/dev/null
}

# qemu-user for arm64 binaries: the package, binfmt_misc mounted, aarch64 registered.
ensure_qemu() {
  [[ -x /usr/libexec/qemu-binfmt/aarch64-binfmt-P || -x /usr/bin/qemu-aarch64-static ]] || {
    log "installing qemu-user-static"
    host_apt_install qemu-user-static
  }
  if [[ ! -e /proc/sys/fs/binfmt_misc/register ]]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  fi
  if [[ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]]; then
    local conf=/usr/lib/binfmt.d/qemu-aarch64.conf
    [[ -r $conf ]] || die "no $conf: qemu-user-static does not register aarch64"
    # The F flag is required: the interpreter is opened now, so a chroot needs no copy.
    grep -q ':[A-Z]*F[A-Z]*$' "$conf" || die "$conf lacks the F flag"
    cat "$conf" >/proc/sys/fs/binfmt_misc/register
  fi
  [[ "$(head -1 /proc/sys/fs/binfmt_misc/qemu-aarch64)" == enabled ]] || die "binfmt qemu-aarch64 is disabled"
}

# What cipherbench's package pulls, by suite (Debian 13 renamed the libraries, t64).
deps_of() {
  case "$1" in
    bookworm) echo "libssl3 openssl openssh-client openssh-server libgnutls30" ;;
    *) echo "libssl3t64 openssl openssh-client openssh-server libgnutls30t64" ;;
  esac
}

# Runs CMD in root $1 with /proc, /sys, /dev for it alone (no overlay: for building).
plain_in_root() {
  local r="$1"
  shift
  unshare --mount --propagation private --fork -- /bin/sh -euc '
    r="$1"; shift
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    exec chroot "$r" "$@"
  ' sh "$r" env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive "$@"
}

unmount_under() {
  local r="$1" m
  while read -r m; do
    umount -R -l "$m" 2>/dev/null || true
  done < <(awk -v r="$r/" 'index($2 "/", r) == 1 { print $2 }' /proc/self/mounts | sort -r)
}

build() {
  local suite="$1" arch="$2" dir="$3" recipe part mirror started deps
  case "$arch" in amd64 | arm64) ;; *) die "ARCH must be amd64 or arm64" ;; esac
  deps=$(deps_of "$suite")
  # arm64: installed, not only downloaded: under qemu-user dpkg and OpenSSH's
  # postinst (host keys) take minutes, which each test run would pay again.
  get=--download-only
  [[ $arch == amd64 ]] || get=
  recipe="cipherbench-pkg-root/1 $suite $arch minbase"
  exec 9>"$dir.lock"
  flock 9
  if [[ -f "$dir/.cipherbench-root" && "$(cat "$dir/.cipherbench-root")" == "$recipe" ]]; then
    # A finished root whose cached archives predate a change of the list: only
    # those are downloaded.
    if [[ "$(cat "$dir/.cached-debs" 2>/dev/null)" != "$deps (${get:-installed})" ]]; then
      log "apt-get install ${get:+$get }$deps in $dir"
      # shellcheck disable=SC2086
      {
        plain_in_root "$dir" apt-get update -qq
        plain_in_root "$dir" apt-get install -y -qq $get $deps
      } >"$dir/apt.log" 2>&1 </dev/null || {
        tail -20 "$dir/apt.log" >&2
        return 1
      }
      echo "$deps (${get:-installed})" >"$dir/.cached-debs"
    fi
    echo "$dir"
    return
  fi
  started=$(date +%s)
  mirror="${PKG_ROOT_MIRROR:-$(host_mirror)}"
  part="$dir.partial"
  for d in "$dir" "$part"; do
    if [[ -e "$d" ]]; then
      log "removing $d: not a finished root of this recipe"
      unmount_under "$d"
      rm -rf --one-file-system "$d"
    fi
  done
  command -v debootstrap >/dev/null || host_apt_install debootstrap
  [[ $arch == amd64 ]] || ensure_qemu
  mkdir -p "$(dirname "$dir")"
  # A debootstrap older than the suite has no script for it: sid's makes the same
  # base system (forky on Debian 12).
  local script=()
  [[ -e "/usr/share/debootstrap/scripts/$suite" ]] || script=(/usr/share/debootstrap/scripts/sid)
  log "debootstrap --arch=$arch --variant=minbase --foreign $suite $part $mirror ${script[*]}"
  nice debootstrap --arch="$arch" --variant=minbase --foreign "$suite" "$part" "$mirror" "${script[@]}" >"$part.log" 2>&1 || {
    tail -20 "$part.log" >&2
    return 1
  }
  log "debootstrap --second-stage ($arch)"
  plain_in_root "$part" /debootstrap/debootstrap --second-stage >>"$part.log" 2>&1 || {
    tail -20 "$part.log" >&2
    return 1
  }
  mv "$part.log" "$part/debootstrap.log"
  printf '#!/bin/sh\nexit 101\n' >"$part/usr/sbin/policy-rc.d"
  chmod 755 "$part/usr/sbin/policy-rc.d"
  cp -L /etc/resolv.conf "$part/etc/resolv.conf"
  # Debian testing (forky): its mirror's Release files may be past their Valid-Until
  # (a frozen or lagging mirror). Written inside the fresh root only, never the host's.
  if [[ $suite != bookworm && $suite != trixie && -d "$part/etc/apt/apt.conf.d" && "$(realpath -m "$part")" != / ]]; then
    echo 'Acquire::Check-Valid-Until "false";' >"$part/etc/apt/apt.conf.d/99cipherbench-valid-until"
  fi
  # shellcheck disable=SC2086
  {
    plain_in_root "$part" apt-get update -qq
    plain_in_root "$part" apt-get install -y -qq $get $deps
  } >"$part/apt.log" 2>&1 </dev/null || {
    tail -20 "$part/apt.log" >&2
    return 1
  }
  plain_in_root "$part" dpkg-query -W -f='${Package} ${Version}\n' >"$part/.versions"
  echo "$deps (${get:-installed})" >"$part/.cached-debs"
  echo "$recipe" >"$part/.cipherbench-root"
  mv "$part" "$dir"
  log "built $dir in $(($(date +%s) - started)) s"
  echo "$dir"
}

run() {
  local dir="$1" upper="" binds=() lower
  shift
  lower="$dir"
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --upper) upper="$2"; shift 2 ;;
      --layer)
        [[ -d "$2/upper" ]] || die "run: $2 is not a kept layer (no $2/upper)"
        lower="$2/upper:$lower"
        shift 2
        ;;
      --bind) binds+=("$2"); shift 2 ;;
      --) shift; break ;;
      *) die "run: unknown option $1" ;;
    esac
  done
  [[ $# -gt 0 ]] || die "run: no command"
  [[ -d "$dir/usr" ]] || die "run: $dir is not a root"
  if grep -qs ' arm64 ' "$dir/.cipherbench-root"; then ensure_qemu; fi
  [[ -z "$upper" ]] || mkdir -p "$upper/upper" "$upper/work"
  local env=(env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}"
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive)
  [[ -n "${CI:-}" ]] && env+=(CI="$CI")
  [[ -n "${NO_COLOR:-}" ]] && env+=(NO_COLOR="$NO_COLOR")
  # The overlay, its mount point and the tmpfs exist only in this namespace.
  unshare --mount --propagation private --fork -- /bin/bash -euc '
    lower="$1"; upper="$2"; nbinds="$3"; shift 3
    binds=("${@:1:$nbinds}"); shift "$nbinds"
    base=$(mktemp -d /tmp/pkg-root.XXXXXX)
    mount -t tmpfs tmpfs "$base"
    if [[ -z "$upper" ]]; then
      mkdir "$base/upper" "$base/work"
      upper="$base"
    fi
    mkdir "$base/merged"
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$upper/upper,workdir=$upper/work" "$base/merged"
    r="$base/merged"
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs tmpfs "$r/tmp"
    for b in "${binds[@]}"; do
      mkdir -p "$r/${b#*:}"
      mount --bind "${b%%:*}" "$r/${b#*:}"
    done
    rc=0
    chroot "$r" "$@" || rc=$?
    umount -R -l "$base"
    rmdir "$base"
    exit "$rc"
  ' sh "$lower" "$upper" "${#binds[@]}" "${binds[@]}" "${env[@]}" "$@"
}

[[ $# -ge 1 ]] || die "usage: $0 build SUITE ARCH DIR | run DIR [--layer L]... [--upper U] [--bind H:I]... -- CMD..."
cmd="$1"
shift
case "$cmd" in
  build) [[ $# -eq 3 ]] || die "usage: $0 build SUITE ARCH DIR"; build "$1" "$2" "${3%/}" ;;
  run) [[ $# -ge 3 ]] || die "usage: $0 run DIR [--layer L]... [--upper U] [--bind H:I]... -- CMD..."; run "$@" ;;
  *) die "unknown command $cmd" ;;
esac

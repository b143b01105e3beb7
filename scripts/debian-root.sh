#!/usr/bin/env bash
# A Debian root to run cipherbench against a Debian release's own OpenSSL, GnuTLS,
# OpenSSH, nginx, Apache, HAProxy and stunnel (and NZBGet), built once with
# debootstrap and cached. Two suites:
#   trixie  Debian 13: OpenSSL 3.5, OpenSSH 10.0, nginx 1.26 (issue 27)
#   forky   Debian testing, the next stable: OpenSSL 3.6, OpenSSH 10.6 (whose `sshd -T`
#           prints capitalised keywords), GnuTLS 3.8.13, nginx 1.30, NZBGet 21 (issue 38)
#
# Usage:
#   scripts/debian-root.sh SUITE DIR               build DIR once (idempotent), print DIR
#   scripts/debian-root.sh SUITE DIR -- CMD ARG..  build if needed, then run CMD inside it
# (scripts/debian13-root.sh DIR ... is `scripts/debian-root.sh trixie DIR ...`.)
#
# The project's DIRs are /var/cache/cipherbench/debian13-root and
# /var/cache/cipherbench/forky-root, outside any clone, so that a fresh clone (CI)
# reuses them; CIPHERBENCH_DEBIAN13_ROOT and CIPHERBENCH_FORKY_ROOT override them (in
# the tests and the Makefile). Needs root, debootstrap (installed with apt-get when
# missing) and a Debian mirror: the one the host's apt uses, or DEBIAN_MIRROR=http://...
# (DEBIAN13_MIRROR, the older name, still counts for trixie).
#
# Debian 12's debootstrap has no script for forky: sid's is used (the same base
# system). A testing mirror's Release files may be past their Valid-Until (a frozen
# or lagging mirror): apt inside a forky root is told not to check it
# (/etc/apt/apt.conf.d/99cipherbench-valid-until); debootstrap does not check it.
#
# A finished root holds DIR/.cipherbench-root (what it was built with) and
# DIR/.versions (the installed packages and their versions). A DIR without the marker,
# or with one from another suite or recipe number, is the leftover of an interrupted
# or older run: it is removed and built again. A finished root whose package list
# lacks packages added to the list since gets only those installed. The root is built
# in DIR.partial and renamed to DIR only when complete; concurrent callers wait on
# DIR.lock.
#
# Every command inside the root runs in a private mount namespace (unshare) with
# /proc, /sys, /dev and /dev/pts mounted for it alone: they disappear when the command
# ends, however it ends, and the host's mount table never sees them. The EXIT trap
# unmounts them too where unshare is missing.
set -euo pipefail

usage() {
  echo "usage: $0 trixie|forky DIR [-- CMD [ARG...]]" >&2
  exit 2
}
[[ $# -ge 2 ]] || usage
suite="$1"
dir="$2"
shift 2
run=()
if [[ $# -gt 0 ]]; then
  [[ "$1" == "--" ]] || usage
  shift
  [[ $# -gt 0 ]] || usage
  run=("$@")
fi
[[ "$dir" == /* ]] || dir="$PWD/$dir"
dir="${dir%/}"
[[ -n "$dir" && "$dir" != "/" ]] || { echo "$0: refusing to use / as the root" >&2; exit 2; }

if [[ $(id -u) -ne 0 ]]; then
  echo "$0: building and entering a Debian root needs root (debootstrap, chroot, mount)" >&2
  exit 1
fi

# What the tests and the manual runs use inside the root. Debian 13 and forky name the
# OpenSSL and GnuTLS libraries libssl3t64 and libgnutls30t64 (64-bit time_t);
# nginx-light is gone, `nginx` is the server.
packages=(
  openssl libssl3t64 libssl-dev pkg-config ca-certificates
  openssh-server openssh-client
  gnutls-bin libgnutls30t64
  nginx apache2 haproxy stunnel4
  cargo rustc rustfmt rust-clippy
  procps iproute2 python3 ssh-audit testssl.sh
)
case "$suite" in
  trixie)
    name=debian13
    # Debian 13's updates and security updates too, as a Debian 13 user has them.
    pockets=("$suite" "$suite-updates")
    check_valid_until=yes
    ;;
  forky)
    name=forky
    # NZBGet 21 as forky ships it (tests/forky.rs runs its own server test).
    packages+=(nzbget)
    pockets=("$suite")
    check_valid_until=no
    ;;
  *) usage ;;
esac
# Changing this number or the suite rebuilds cached roots; a package added to the list
# is installed into a cached root (add_missing), without a rebuild.
base="cipherbench-$name-root/1 $suite"
recipe="$base ${packages[*]}"
marker="$dir/.cipherbench-root"

log() { echo "$name-root: $*" >&2; }

# The mirror the host's apt uses (scripts/host-mirror.sh), unless given.
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
host_mirror() { "$scripts_dir/host-mirror.sh"; }

# Mounts for a command inside root $1; used only inside a private mount namespace,
# or, without unshare, undone by the EXIT trap.
mounted=()
mount_root() {
  local r="$1"
  mkdir -p "$r/proc" "$r/sys" "$r/dev"
  mount -t proc proc "$r/proc" && mounted+=("$r/proc")
  mount --rbind /sys "$r/sys" && mounted+=("$r/sys")
  mount --rbind /dev "$r/dev" && mounted+=("$r/dev")
}
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R -l "${mounted[$i]}" 2>/dev/null || true
  done
  mounted=()
}

# Runs CMD inside root $1 with /proc, /sys and /dev mounted for it alone.
in_root() {
  local r="$1"
  shift
  local env=(env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    DEBIAN_FRONTEND=noninteractive)
  [[ -n "${CI:-}" ]] && env+=(CI="$CI")
  [[ -n "${NO_COLOR:-}" ]] && env+=(NO_COLOR="$NO_COLOR")
  if command -v unshare >/dev/null 2>&1; then
    unshare --mount --propagation private --fork -- /bin/sh -euc '
      r="$1"; shift
      mount -t proc proc "$r/proc"
      mount --rbind /sys "$r/sys"
      mount --rbind /dev "$r/dev"
      exec chroot "$r" "$@"
    ' sh "$r" "${env[@]}" "$@"
  else
    mount_root "$r"
    local rc=0
    chroot "$r" "${env[@]}" "$@" || rc=$?
    unmount_all
    return "$rc"
  fi
}

# Nothing of ours may stay mounted under a root we are about to delete.
unmount_under() {
  local r="$1" m
  while read -r m; do
    umount -R -l "$m" 2>/dev/null || true
  done < <(awk -v r="$r/" 'index($2 "/", r) == 1 { print $2 }' /proc/self/mounts | sort -r)
}

build() {
  local part="$dir.partial" mirror started
  mirror="${DEBIAN_MIRROR:-}"
  [[ -n "$mirror" || "$suite" != trixie ]] || mirror="${DEBIAN13_MIRROR:-}"
  [[ -n "$mirror" ]] || mirror=$(host_mirror)
  started=$(date +%s)
  if [[ -e "$dir" ]]; then
    log "removing $dir: not a finished root of this recipe"
    unmount_under "$dir"
    rm -rf --one-file-system "$dir"
  fi
  if [[ -e "$part" ]]; then
    log "removing $part, left by an interrupted build"
    unmount_under "$part"
    rm -rf --one-file-system "$part"
  fi
  if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap </dev/null >/dev/null \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap </dev/null >/dev/null; }
  fi
  mkdir -p "$(dirname "$part")"
  # A debootstrap older than the suite has no script for it: sid's makes the same
  # base system (forky on Debian 12).
  local script=()
  if [[ ! -e "/usr/share/debootstrap/scripts/$suite" ]]; then
    script=(/usr/share/debootstrap/scripts/sid)
  fi
  log "debootstrap --variant=minbase $suite $part $mirror ${script[*]}"
  nice debootstrap --variant=minbase "$suite" "$part" "$mirror" "${script[@]}" >"$part.log" 2>&1 || {
    tail -20 "$part.log" >&2
    return 1
  }
  mv "$part.log" "$part/debootstrap.log"
  # No daemon of the root's packages may start while they install: the tests start
  # private ones.
  printf '#!/bin/sh\nexit 101\n' >"$part/usr/sbin/policy-rc.d"
  chmod 755 "$part/usr/sbin/policy-rc.d"
  # Never write the host's own files: the root must be the one debootstrap just
  # made, with its suite and mirror known.
  if [[ -z "$part" || "$(realpath -m "$part")" == / || ! -x "$part/usr/bin/apt-get" || -z "$suite" || -z "$mirror" ]]; then
    log "refusing to configure apt in '$part' (suite '$suite', mirror '$mirror'): not a fresh root"
    return 1
  fi
  cp -L /etc/resolv.conf "$part/etc/resolv.conf"
  local pocket security="${DEBIAN_SECURITY_MIRROR:-${DEBIAN13_SECURITY_MIRROR:-${mirror%/debian}/debian-security}}"
  {
    for pocket in "${pockets[@]}"; do echo "deb $mirror $pocket main"; done
    echo "deb $security $suite-security main"
  } >"$part/etc/apt/sources.list"
  if [[ $check_valid_until == no ]]; then
    # A testing mirror's Release files may be past their Valid-Until.
    echo 'Acquire::Check-Valid-Until "false";' >"$part/etc/apt/apt.conf.d/99cipherbench-valid-until"
  fi
  log "installing ${#packages[@]} packages inside"
  in_root "$part" apt-get update -qq >"$part/apt.log" 2>&1 || {
    tail -20 "$part/apt.log" >&2
    return 1
  }
  in_root "$part" nice apt-get install -y -qq --no-install-recommends "${packages[@]}" </dev/null >"$part/apt.log" 2>&1 || {
    tail -20 "$part/apt.log" >&2
    return 1
  }
  in_root "$part" apt-get clean
  versions "$part" "from $mirror in $(($(date +%s) - started)) s"
  echo "$recipe" >"$part/.cipherbench-root"
  mv "$part" "$dir"
  log "built $dir in $(($(date +%s) - started)) s"
}

# DIR/.versions of root $1: its packages, then the software's own version lines.
versions() {
  local r="$1"
  in_root "$r" dpkg-query -W -f='${Package} ${Version}\n' >"$r/.versions.new"
  {
    echo "# $(date -u +%FT%TZ) $2"
    in_root "$r" /bin/sh -c 'openssl version; ssh -V 2>&1; gnutls-cli --version | head -1; nginx -v 2>&1
      apache2 -v 2>/dev/null | head -1; haproxy -v 2>/dev/null | head -1; stunnel -version 2>&1 | grep -m1 '^stunnel'
      rustc --version; cargo --version; if command -v nzbget >/dev/null; then nzbget -v | head -1; fi'
  } >>"$r/.versions.new"
  mv "$r/.versions.new" "$r/.versions"
}

# A cached root of this suite and number that lacks packages the list has gained:
# installs only those (bounded: 10 minutes), then records the new list.
add_missing() {
  local missing=() p started have
  started=$(date +%s)
  have=$(in_root "$dir" dpkg-query -W -f='${Package} ${Status}\n' 2>/dev/null | awk '/ installed$/ { print $1 }')
  for p in "${packages[@]}"; do
    grep -qx -- "$p" <<<"$have" || missing+=("$p")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    log "adding ${missing[*]} to $dir"
    in_root "$dir" timeout 600 apt-get update -qq >/dev/null 2>&1 || true
    in_root "$dir" timeout 600 nice apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >"$dir/apt.log" 2>&1 || {
      tail -20 "$dir/apt.log" >&2
      return 1
    }
    in_root "$dir" apt-get clean
    versions "$dir" "added ${missing[*]} in $(($(date +%s) - started)) s"
  fi
  echo "$recipe" >"$marker"
}

trap unmount_all EXIT
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [[ ! -f "$marker" ]] || ! grep -q "^$base " "$marker"; then
  build
elif [[ "$(cat "$marker")" != "$recipe" ]]; then
  add_missing
fi
flock -u 9
exec 9>&-

if [[ ${#run[@]} -eq 0 ]]; then
  echo "$dir"
  exit 0
fi
in_root "$dir" "${run[@]}"

#!/usr/bin/env bash
# `make deb ARCH=arm64`: cross-builds cipherbench for arm64 and packages it, inside
# the cached Debian 13 root (scripts/debian13-root.sh), so that the host is not
# changed: no foreign architecture added to its dpkg, no cross compiler installed.
#
# Usage: scripts/cross-deb.sh ARCH NATIVE_BINARY   (ARCH: arm64)
#
# The build runs in an overlay of that root (scripts/pkg-root.sh run --upper): the
# shared root stays as it is; the upper layer, cached in
# /var/cache/cipherbench/debian13-cross-ARCH, holds what the cross build adds:
# `dpkg --add-architecture arm64`, gcc-aarch64-linux-gnu, libstd-rust-dev:arm64 (the
# standard library of Debian 13's own Rust 1.85 for aarch64), libssl-dev:arm64 and
# dpkg-dev, and the build's target directory, so a second build compiles only what
# changed. The checkout is bind-mounted at /src; the package is made there by
# scripts/make-deb.sh, with Depends from dpkg-shlibdeps against Debian 13's arm64
# libraries (libssl3t64), and the man pages and completions written by
# NATIVE_BINARY (this machine's build of the same sources).
set -euo pipefail
cd "$(dirname "$0")/.."
arch="${1:-}"
native="${2:-}"
case "$arch" in
  arm64) triple=aarch64-unknown-linux-gnu gnu=aarch64-linux-gnu ;;
  *) echo "cross-deb: ARCH must be arm64 (got '$arch')" >&2; exit 2 ;;
esac
[[ -x "$native" ]] || { echo "cross-deb: no native binary $native" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "cross-deb: needs root (the Debian 13 root: chroot, mount)" >&2; exit 1; }

lower=${CIPHERBENCH_DEBIAN13_ROOT:-/var/cache/cipherbench/debian13-root}
layer=${CIPHERBENCH_CROSS_LAYER:-/var/cache/cipherbench/debian13-cross-$arch}
scripts/debian13-root.sh "$lower" >/dev/null

# The layer is rebuilt when the root under it was rebuilt or changed its package list.
recipe="cipherbench-cross/1 $arch on $(cat "$lower/.cipherbench-root")"
tools=(gcc-"$gnu" libc6-dev-"$arch"-cross libstd-rust-dev:"$arch" libssl-dev:"$arch" dpkg-dev binutils-"$gnu")
ca=()
if [[ -r /etc/ssl/certs/ca-certificates.crt ]]; then
  # Behind a TLS-intercepting proxy cargo needs the host's CA bundle.
  ca=(--bind /etc/ssl/certs:/host-certs)
fi
in_layer() { scripts/pkg-root.sh run "$lower" --upper "$layer" --bind "$PWD:/src" "${ca[@]}" -- "$@"; }

exec 9>"$layer.lock"
flock 9
if [[ "$(cat "$layer.recipe" 2>/dev/null)" != "$recipe" ]]; then
  echo "cross-deb: preparing $layer (${tools[*]})" >&2
  rm -rf --one-file-system "$layer"
  mkdir -p "$layer"
  in_layer /bin/sh -c "dpkg --add-architecture $arch && apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends ${tools[*]} && apt-get clean" </dev/null >"$layer.log" 2>&1 || {
    tail -20 "$layer.log" >&2
    exit 1
  }
  echo "$recipe" >"$layer.recipe"
fi

started=$(date +%s)
cainfo=CARGO_TERM_COLOR=never
[[ ${#ca[@]} -eq 0 ]] || cainfo=CARGO_HTTP_CAINFO=/host-certs/ca-certificates.crt
env_up=$(echo "$triple" | tr a-z- A-Z_)
in_layer env CARGO_HOME=/root/.cargo CARGO_TARGET_DIR=/build/target "$cainfo" \
  "CARGO_TARGET_${env_up}_LINKER=$gnu-gcc" "CC_${triple//-/_}=$gnu-gcc" \
  PKG_CONFIG_ALLOW_CROSS=1 PKG_CONFIG_LIBDIR="/usr/lib/$gnu/pkgconfig:/usr/share/pkgconfig" \
  CB_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  CB_DATE="$(git log -1 --format=%aD 2>/dev/null || date -R)" \
  /bin/sh -euc "cd /src && cargo build --release --locked --target $triple >&2 && \
    scripts/make-deb.sh --arch $arch --bin /build/target/$triple/release/cipherbench --gen /src/$native --out /src/target/debian" |
  sed "s|^/src/|$PWD/|"
echo "cross-deb: built for $arch in $(($(date +%s) - started)) s" >&2

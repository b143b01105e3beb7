#!/usr/bin/env bash
# `make openssl4` (issue 39, "OpenSSL 4"): builds, tests and packages cipherbench
# against Debian experimental's OpenSSL 4 (openssl, libssl4, libssl-dev 4.0.x)
# inside an overlay of the cached forky root (scripts/debian-root.sh forky), then
# installs the package in a clean forky root with experimental's archives and runs
# the main job there. The host and the cached roots are never changed.
#
# Usage: scripts/openssl4.sh [STEP...]   STEP: prepare build test deb install (default: all)
#   prepare  the build layer: an overlay of the forky root whose upper layer is kept
#            in /var/cache/cipherbench/forky-openssl4 (CIPHERBENCH_OPENSSL4_LAYER):
#            experimental in its apt sources, openssl, libssl4 and libssl-dev from
#            experimental, build-essential, pkg-config and dpkg-dev (the root already
#            has Debian's cargo and rustc). Made once; remade when the forky root's
#            recipe changes.
#   build    `cargo build --release --locked` of the checkout (bind-mounted at /src)
#            in that layer, with Debian's cargo and rustc; crates from crates.io
#            (CARGO_HOME and the target directory are kept in the layer, so a second
#            build compiles only what changed).
#   test     `cargo test --release --locked --bins` (the unit tests: the crate has no
#            library target), then each integration test of
#            OPENSSL4_TESTS (default: tls ssh recommend gnutls_tls cli exit_codes
#            installed defaults): a line per binary with its result and time; the
#            logs are in target/openssl4/test-NAME.log.
#   deb      scripts/make-deb.sh there on the last build's binary:
#            target/openssl4/cipherbench_VERSION_amd64.deb, whose Depends
#            (dpkg-shlibdeps) must name libssl4.
#   install  a clean minbase forky root (scripts/pkg-root.sh build forky amd64) with
#            a kept layer (/var/cache/cipherbench/forky-openssl4-clean) that adds
#            experimental to its sources and downloads libssl4's archives; in a
#            throw-away overlay of both, `apt install ./cipherbench_*.deb` (apt takes
#            libssl4 from experimental, the only suite that has it) and
#            `cipherbench --budget 20s` must answer. tests/package.rs's
#            openssl4_package_installs_answers_and_purges repeats this when the
#            package and the layer exist.
# Results go to stdout and to target/openssl4/results.txt; a failed test binary
# does not stop the later steps but makes the exit status 1. Needs root and a Debian
# mirror (the host's, or DEBIAN_MIRROR=http://...).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $(id -u) -eq 0 ]] || { echo "openssl4: needs root (chroot, mount)" >&2; exit 1; }

cache=/var/cache/cipherbench
forky=${CIPHERBENCH_FORKY_ROOT:-$cache/forky-root}
layer=${CIPHERBENCH_OPENSSL4_LAYER:-$cache/forky-openssl4}
clean_root=$cache/forky-amd64-root
clean_layer=$cache/forky-openssl4-clean
out=target/openssl4
mirror=${DEBIAN_MIRROR:-$(scripts/host-mirror.sh)}
tests=${OPENSSL4_TESTS:-tls ssh recommend gnutls_tls cli exit_codes installed defaults}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
mkdir -p "$out"
results="$out/results.txt"

say() { echo "openssl4: $*" | tee -a "$results"; }
log() { echo "openssl4: $*" >&2; }

ca=()
if [[ -r /etc/ssl/certs/ca-certificates.crt ]]; then
  # Behind a TLS-intercepting proxy cargo needs the host's CA bundle.
  ca=(--bind /etc/ssl/certs:/host-certs)
fi
in_layer() { scripts/pkg-root.sh run "$forky" --upper "$layer" --bind "$PWD:/src" "${ca[@]}" -- "$@"; }
cargo_env=(env CARGO_HOME=/root/.cargo CARGO_TARGET_DIR=/build/target CARGO_TERM_COLOR=never)
[[ ${#ca[@]} -eq 0 ]] || cargo_env+=(CARGO_HTTP_CAINFO=/host-certs/ca-certificates.crt)

# What experimental adds: OpenSSL 4 (its legacy provider is a separate package).
ossl4="openssl/experimental libssl4/experimental libssl-dev/experimental openssl-provider-legacy/experimental"
experimental="deb $mirror experimental main"

prepare() {
  scripts/debian-root.sh forky "$forky" >/dev/null
  local recipe started
  recipe="cipherbench-openssl4/1 on $(cat "$forky/.cipherbench-root")"
  exec 8>"$layer.lock"
  flock 8
  if [[ "$(cat "$layer.recipe" 2>/dev/null)" != "$recipe" ]]; then
    started=$(date +%s)
    log "preparing $layer (experimental's OpenSSL 4, build-essential, pkg-config, dpkg-dev)"
    rm -rf --one-file-system "$layer"
    mkdir -p "$layer"
    in_layer /bin/sh -euc "echo '$experimental' >/etc/apt/sources.list.d/experimental.list
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends $ossl4
      apt-get install -y -qq --no-install-recommends build-essential pkg-config dpkg-dev
      apt-get clean" </dev/null >"$layer.log" 2>&1 || {
      tail -20 "$layer.log" >&2
      exit 1
    }
    echo "$recipe" >"$layer.recipe"
    say "prepared the build layer in $(($(date +%s) - started)) s"
  fi
  flock -u 8
  say "build layer: $(in_layer /bin/sh -c 'openssl version; pkg-config --modversion openssl; rustc --version; cargo --version' | tr '\n' ';')"
}

build() {
  local started rc=0
  started=$(date +%s)
  in_layer "${cargo_env[@]}" /bin/sh -euc 'cd /src && cargo build --release --locked' >"$out/build.log" 2>&1 </dev/null || rc=$?
  if [[ $rc -ne 0 ]]; then
    tail -40 "$out/build.log" >&2
    say "build: FAILED (exit $rc) after $(($(date +%s) - started)) s; log: $out/build.log"
    exit 1
  fi
  say "build: cargo build --release in $(($(date +%s) - started)) s ($(grep -c '^ *Compiling' "$out/build.log") crates compiled)"
  say "linked: $(in_layer /bin/sh -c 'ldd /build/target/release/cipherbench | grep -E "libssl|libcrypto" | sed "s/ (0x.*//" | tr -s "\t " " "' | tr '\n' ';')"
  say "list primitives: $(in_layer /build/target/release/cipherbench list primitives 2>&1 | grep -m1 "^OpenSSL" || true)"
}

failed=()
test_one() {
  local name="$1" started rc=0 summary
  shift
  started=$(date +%s)
  in_layer "${cargo_env[@]}" /bin/sh -euc "cd /src && cargo test --release --locked $*" >"$out/test-$name.log" 2>&1 </dev/null || rc=$?
  summary=$(grep -E '^test result:' "$out/test-$name.log" | tail -1 || true)
  if [[ $rc -eq 0 ]]; then
    say "test $name: ok in $(($(date +%s) - started)) s: ${summary:-no summary}"
  else
    failed+=("$name")
    say "test $name: FAILED (exit $rc) in $(($(date +%s) - started)) s: ${summary:-no summary}; failures: $(grep -E '^    [a-z_0-9:]+$' "$out/test-$name.log" | tr -d ' ' | tr '\n' ' ' || true)"
  fi
}

run_tests() {
  # The crate is a binary: its unit tests are the binary's (`--bins`, not `--lib`).
  test_one unit --bins
  local t
  for t in $tests; do test_one "$t" --test "$t"; done
}

deb() {
  local started deb depends
  started=$(date +%s)
  deb=$(in_layer env CB_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    CB_DATE="$(git log -1 --format=%aD 2>/dev/null || date -R)" \
    /bin/sh -euc "cd /src && scripts/make-deb.sh --bin /build/target/release/cipherbench --out /src/$out" | sed "s|^/src/||")
  [[ -f "$deb" ]] || { say "deb: FAILED: no package"; exit 1; }
  depends=$(dpkg-deb -f "$deb" Depends)
  say "deb: $deb, $(stat -c %s "$deb") bytes, Installed-Size $(dpkg-deb -f "$deb" Installed-Size) KiB, in $(($(date +%s) - started)) s"
  say "deb Depends: $depends"
  [[ "$depends" == *libssl4* ]] || { say "deb: FAILED: Depends does not name libssl4"; exit 1; }
}

# The clean forky root and its kept layer with experimental's lists and archives.
clean() {
  scripts/pkg-root.sh build forky amd64 "$clean_root" >/dev/null
  local recipe
  recipe="cipherbench-openssl4-clean/1 on $(cat "$clean_root/.cipherbench-root") $ossl4"
  exec 8>"$clean_layer.lock"
  flock 8
  if [[ "$(cat "$clean_layer.recipe" 2>/dev/null)" != "$recipe" ]]; then
    log "preparing $clean_layer (experimental's lists, OpenSSL 4 archives)"
    rm -rf --one-file-system "$clean_layer"
    mkdir -p "$clean_layer"
    scripts/pkg-root.sh run "$clean_root" --upper "$clean_layer" -- /bin/sh -euc "
      echo '$experimental' >/etc/apt/sources.list.d/experimental.list
      apt-get update -qq
      apt-get install -y -qq --download-only libssl4 openssl-provider-legacy/experimental openssl/experimental" \
      </dev/null >"$clean_layer.log" 2>&1 || {
      tail -20 "$clean_layer.log" >&2
      exit 1
    }
    echo "$recipe" >"$clean_layer.recipe"
  fi
  flock -u 8
}

install() {
  local deb="$out/cipherbench_${version}_amd64.deb" started rc=0
  [[ -f "$deb" ]] || { say "install: no $deb (the deb step makes it)"; exit 1; }
  clean
  started=$(date +%s)
  scripts/pkg-root.sh run "$clean_root" --layer "$clean_layer" --bind "$PWD/$out:/pkg" -- /bin/sh -euc "
    cd /pkg; apt install -y ./$(basename "$deb") >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
    dpkg-query -W -f='pkg: \${Package} \${Version}\n' libssl4 libssl3t64 openssl openssl-provider-legacy 2>/dev/null || true
    echo \"openssl: \$(openssl version)\"
    echo \"library: \$(cipherbench list primitives 2>&1 | head -1)\"
    echo \"legacy: \$(cipherbench list primitives 2>&1 | grep -c 'available (legacy provider)') algorithms available through the legacy provider\"
    cd /root; rc=0; start=\$(date +%s)
    cipherbench --budget 20s >/tmp/run.out 2>/tmp/run.err || rc=\$?
    echo \"main-job: rc=\$rc in \$(( \$(date +%s) - start )) s\"
    sed 's/^/out: /' /tmp/run.out; tail -5 /tmp/run.err | sed 's/^/err: /'
    [ \$rc -eq 0 ]" </dev/null >"$out/install.log" 2>&1 || rc=$?
  grep -E '^(pkg|openssl|library|legacy|main-job):' "$out/install.log" | while read -r l; do say "install: $l"; done
  grep -E '^out:   (TLS|SSH)' "$out/install.log" | while read -r l; do say "install: $l"; done
  if [[ $rc -ne 0 ]]; then
    tail -30 "$out/install.log" >&2
    say "install: FAILED (exit $rc) in $(($(date +%s) - started)) s; log: $out/install.log"
    exit 1
  fi
  say "install: apt install and the main job in a clean forky+experimental root in $(($(date +%s) - started)) s"
}

# A step that needs the build layer prepares it first when it is missing.
need_layer() { [[ -f "$layer.recipe" ]] || prepare; }

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(prepare build test deb install)
echo "# $(date -u +%FT%TZ) scripts/openssl4.sh ${steps[*]} at $(git rev-parse --short HEAD 2>/dev/null)" >>"$results"
for s in "${steps[@]}"; do
  case "$s" in
    prepare) prepare ;;
    build) need_layer; build ;;
    test) need_layer; run_tests ;;
    deb) need_layer; deb ;;
    install) install ;;
    *) echo "openssl4: unknown step $s (prepare build test deb install)" >&2; exit 2 ;;
  esac
done
# Failed test binaries do not stop the package and its install; they make the exit 1.
if [[ ${#failed[@]} -gt 0 ]]; then
  say "failed test binaries: ${failed[*]} (logs: $out/test-NAME.log)"
  exit 1
fi

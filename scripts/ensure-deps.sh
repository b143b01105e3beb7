#!/usr/bin/env bash
# Installs the system packages cipherbench needs, when they are missing.
# As root it uses apt-get; otherwise it prints the exact command to run.
# Usage: scripts/ensure-deps.sh run|test|bench|deb
set -euo pipefail

profile="${1:-run}"
# Building against and measuring the system libraries, and the peers the
# measurements use (OpenSSH client and server, GnuTLS).
packages=(libssl-dev pkg-config openssl openssh-client openssh-server gnutls-bin libgnutls28-dev)
case "$profile" in
  run) ;;
  # chromium: the HTML report is rendered in a real browser (tests/report_browser.rs).
  # apache2, haproxy, stunnel4: `check` against the real servers (tests/installed.rs).
  # man-db: the man pages are rendered by `man -l` (tests/ux.rs).
  # nzbget: its own server test against a private news server (tests/nzbget.rs).
  test) packages+=(nginx-light python3-venv testssl.sh chromium apache2 haproxy stunnel4 man-db nzbget dpkg-dev) ;;
  # dpkg-dev: dpkg-shlibdeps and dpkg-architecture for `make deb` (scripts/make-deb.sh).
  deb) packages+=(dpkg-dev) ;;
  bench) packages+=(nginx-light python3-venv testssl.sh hyperfine apache2-utils sslscan nzbget) ;;
  *) echo "usage: $0 run|test|bench|deb" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ! command -v cargo >/dev/null 2>&1; then
  echo "cipherbench needs Rust (cargo) on PATH: see https://rustup.rs" >&2
  exit 1
fi

# `make test` runs `cargo fmt` and `cargo clippy`: Debian's cargo (the package,
# /usr/bin/cargo) has them only with the packages rustfmt and rust-clippy; a rustup
# toolchain adds them with rustup.
if [[ "$profile" == test ]]; then
  cargo_path=$(command -v cargo)
  debian_cargo=no
  if dpkg-query -S "$(readlink -f "$cargo_path")" >/dev/null 2>&1; then debian_cargo=yes; fi
  for tool in fmt clippy; do
    cargo "$tool" --version >/dev/null 2>&1 && continue
    if [[ $debian_cargo == yes ]]; then
      [[ $tool == fmt ]] && missing+=(rustfmt) || missing+=(rust-clippy)
    else
      echo "cargo $tool is missing: add it with \`rustup component add ${tool/fmt/rustfmt}\`" >&2
      exit 1
    fi
  done
fi

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
  # The tests start private instances of these servers; the packages' own services
  # (apache2's postinst starts one on port 80 where services may start) must not
  # stay up.
  for service in apache2 haproxy stunnel4 nzbget; do
    if [[ " ${missing[*]} " == *" $service "* ]] && command -v invoke-rc.d >/dev/null 2>&1; then
      invoke-rc.d "$service" stop >/dev/null 2>&1 || true
    fi
  done
else
  echo "cipherbench needs these system packages: ${missing[*]}" >&2
  echo "install them with:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

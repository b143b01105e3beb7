#!/usr/bin/env bash
# The Python tools the tests use as real peers, pinned, in a private virtualenv
# (.venv beside this script's folder; not committed):
#   - ssh-audit: the current release (Debian's 2.5.0 predates the post-quantum
#     and Terrapin checks);
#   - ansible-core: the engine `cipherbench fleet` is driven by.
# Needs python3 with venv (Debian: python3-venv), which ensure-deps.sh installs.
# Prints the venv's bin directory on stdout.
#
# Every clone on a machine uses the same pins, so the venv is made once per pins
# and Python under the machine's cache (CIPHERBENCH_CACHE, default
# /var/cache/cipherbench, as the Debian test roots are) and .venv is a link to it;
# where that folder cannot be written, .venv is made in the clone.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
link="$root/.venv"
want=(ssh-audit==3.9.0 ansible-core==2.19.14)

ready() { [[ -x "$1/bin/python" && -f "$1/.cipherbench-pins" && "$(cat "$1/.cipherbench-pins")" == "${want[*]}" ]] && "$1/bin/python" -c '' 2>/dev/null; }

make_venv() {
  local venv=$1
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "cipherbench's tests need python3 with venv: sudo apt-get install -y python3-venv" >&2
    exit 1
  fi
  echo "installing into $venv: ${want[*]}" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${want[@]}" >&2
  echo "${want[*]}" >"$venv/.cipherbench-pins"
}

if ready "$link"; then
  echo "$link/bin"
  exit 0
fi

cache=${CIPHERBENCH_CACHE:-/var/cache/cipherbench}
if mkdir -p "$cache" 2>/dev/null && [[ -w "$cache" ]]; then
  key=$(printf '%s\n' "${want[@]}" "$(python3 -c 'import sys; print(sys.version)' 2>/dev/null)" "$(readlink -f "$(command -v python3)")" |
    sha256sum | cut -c1-12)
  shared="$cache/venv-$key"
  # One clone makes it; another waits for it rather than making its own.
  exec 9>"$cache/venv-$key.lock"
  flock 9
  ready "$shared" || make_venv "$shared"
  flock -u 9
  rm -rf "$link"
  ln -s "$shared" "$link"
else
  make_venv "$link"
fi
echo "$link/bin"

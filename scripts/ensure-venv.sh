#!/usr/bin/env bash
# The Python tools the tests use as real peers, pinned, in a private virtualenv
# (.venv beside this script's folder; not committed):
#   - ssh-audit: the current release (Debian's 2.5.0 predates the post-quantum
#     and Terrapin checks);
#   - ansible-core: the engine `cipherbench fleet` is driven by.
# Needs python3 with venv (Debian: python3-venv), which ensure-deps.sh installs.
# Prints the venv's bin directory on stdout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
want=(ssh-audit==3.9.0 ansible-core==2.19.14)
stamp="$venv/.cipherbench-pins"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "${want[*]}" ]]; then
  echo "$venv/bin"
  exit 0
fi
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "cipherbench's tests need python3 with venv: sudo apt-get install -y python3-venv" >&2
  exit 1
fi
echo "installing into $venv: ${want[*]}" >&2
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${want[@]}" >&2
echo "${want[*]}" >"$stamp"
echo "$venv/bin"

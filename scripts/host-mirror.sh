#!/usr/bin/env bash
# Prints the Debian mirror the host's apt uses (its deb822 .sources or one-line
# .list files), or deb.debian.org: what scripts/debian-root.sh and
# scripts/pkg-root.sh build their roots from unless a mirror is given.
set -euo pipefail
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [[ -r "$f" ]] || continue
  uri=$(awk '
    /^[[:space:]]*#/ { next }
    /^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }
    /^deb[[:space:]]/ { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):\/\// && $i ~ /\/debian\/?$/) { print $i; exit } }
  ' "$f")
  if [[ -n "$uri" ]]; then
    echo "${uri%/}"
    exit 0
  fi
done
echo "http://deb.debian.org/debian"

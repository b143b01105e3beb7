#!/usr/bin/env bash
# The Debian 13 (trixie) root: `scripts/debian-root.sh trixie DIR [-- CMD ARG...]`.
exec "$(dirname "$0")/debian-root.sh" trixie "$@"

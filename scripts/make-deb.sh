#!/usr/bin/env bash
# Builds the Debian package cipherbench_VERSION_ARCH.deb (issue 39) from a built
# binary, with dpkg-deb: no cargo plug-in to install, and Depends computed by
# dpkg-shlibdeps from the binary's own shared libraries.
#
# Usage: scripts/make-deb.sh --bin BINARY [--gen BINARY] [--arch ARCH] [--out DIR]
#   --bin   the binary to package (stripped into the package; the file is not changed)
#   --gen   a binary that runs here, made from the same sources, to write the man pages
#           and completions (default: --bin; for a cross-built --bin, the native one)
#   --arch  the Debian architecture of --bin (default: dpkg --print-architecture)
#   --out   where the .deb goes (default: target/debian); its path is printed
#
# The package holds /usr/bin/cipherbench, the man pages (cipherbench man), the bash,
# zsh and fish completions (cipherbench completions), README.md and docs/ under
# /usr/share/doc/cipherbench with a DEP-5 copyright file and a changelog, and the
# Ansible playbooks under /usr/share/cipherbench/ansible.
#
# Depends: dpkg-shlibdeps on the binary. Built on Debian 12 that is libc6 and
# libssl3 (>= 3.0.x): Debian 13's libssl3t64 Provides libssl3 (= its version), so the
# one package installs on both. And openssl, the command: the main job checks the
# lines it emits for OpenSSL with `openssl ciphers` (and fails without it). Recommends: what the main job uses when present:
# OpenSSH's client and server, and GnuTLS, which is dlopen'ed at run time
# (libgnutls.so.30) and so never a shared-library dependency. Suggests: gnutls-bin
# (gnutls-cli: `--for gnutls` checks the priority strings it emits with it).
set -euo pipefail
cd "$(dirname "$0")/.."

bin="" gen="" arch="" out="target/debian"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --gen) gen="$2"; shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 --bin BINARY [--gen BINARY] [--arch ARCH] [--out DIR]" >&2; exit 2 ;;
  esac
done
[[ -n "$bin" && -x "$bin" ]] || { echo "make-deb: no executable --bin ($bin)" >&2; exit 2; }
gen="${gen:-$bin}"
arch="${arch:-$(dpkg --print-architecture)}"
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
  command -v "$tool" >/dev/null || { echo "make-deb: $tool is missing (apt-get install dpkg-dev)" >&2; exit 1; }
done

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
[[ -n "$version" ]] || { echo "make-deb: no version in Cargo.toml" >&2; exit 1; }
gnu=$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null)
strip=strip
[[ "$arch" == "$(dpkg --print-architecture)" ]] || strip="$gnu-strip"
command -v "$strip" >/dev/null || { echo "make-deb: $strip is missing" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
umask 022
pkg="$work/pkg"
doc="$pkg/usr/share/doc/cipherbench"
install -d "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/usr/share/man/man1" "$doc/docs" \
  "$pkg/usr/share/bash-completion/completions" "$pkg/usr/share/zsh/vendor-completions" \
  "$pkg/usr/share/fish/vendor_completions.d" "$pkg/usr/share/cipherbench"

"$strip" --strip-unneeded -o "$pkg/usr/bin/cipherbench" "$bin"
chmod 755 "$pkg/usr/bin/cipherbench"

"$gen" man --dir "$pkg/usr/share/man/man1" >/dev/null
gzip -9n "$pkg"/usr/share/man/man1/*.1
"$gen" completions bash >"$pkg/usr/share/bash-completion/completions/cipherbench"
"$gen" completions zsh >"$pkg/usr/share/zsh/vendor-completions/_cipherbench"
"$gen" completions fish >"$pkg/usr/share/fish/vendor_completions.d/cipherbench.fish"

cp README.md "$doc/"
cp docs/*.md "$doc/docs/"
cp -r deploy/ansible "$pkg/usr/share/cipherbench/ansible"
find "$pkg/usr/share/cipherbench" -name '__pycache__' -prune -exec rm -rf {} +

# CB_COMMIT and CB_DATE: given by scripts/cross-deb.sh, whose root has no git.
date=${CB_DATE:-$(git log -1 --format=%aD 2>/dev/null || date -R)}
commit=${CB_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
cat >"$work/changelog" <<EOF
cipherbench ($version) unstable; urgency=medium

  * Built from the cipherbench sources at commit $commit.

 -- cipherbench maintainers <maintainers@cipherbench.invalid>  $date
EOF
gzip -9nc "$work/changelog" >"$doc/changelog.gz"

cat >"$doc/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: cipherbench
Comment: The binary links statically the Rust crates named in the sources'
 Cargo.lock, each under its own licence (MIT, Apache-2.0, or both, for nearly all),
 and SQLite (bundled by rusqlite), which is in the public domain.

Files: *
Copyright: cipherbench authors
License: MIT or Apache-2.0

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of
 this software and associated documentation files (the "Software"), to deal in the
 Software without restriction, including without limitation the rights to use, copy,
 modify, merge, publish, distribute, sublicense, and/or sell copies of the Software,
 and to permit persons to whom the Software is furnished to do so, subject to the
 following conditions:
 .
 The above copyright notice and this permission notice shall be included in all
 copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
 PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT
 HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
 CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE
 OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
EOF

# Permissions as dpkg expects them (the checkout's umask and modes do not leak in).
find "$pkg" -type d -exec chmod 755 {} +
find "$pkg/usr/share" -type f -exec chmod 644 {} +

# dpkg-shlibdeps wants a debian/control naming the package.
mkdir -p "$work/src/debian"
printf 'Source: cipherbench\n\nPackage: cipherbench\nArchitecture: any\n' >"$work/src/debian/control"
shlibs=$(cd "$work/src" && dpkg-architecture -a"$arch" -c dpkg-shlibdeps -O "$pkg/usr/bin/cipherbench" 2>"$work/shlibdeps.err") || {
  cat "$work/shlibdeps.err" >&2
  exit 1
}
depends=${shlibs#shlibs:Depends=}
[[ "$depends" == *libssl* ]] || { echo "make-deb: dpkg-shlibdeps found no libssl: $shlibs" >&2; exit 1; }

(cd "$pkg" && find usr -type f -printf '%P\n' | sort | sed 's|^|usr/|' | xargs md5sum >DEBIAN/md5sums)
chmod 644 "$pkg/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
cat >"$pkg/DEBIAN/control" <<EOF
Package: cipherbench
Version: $version
Architecture: $arch
Maintainer: cipherbench maintainers <maintainers@cipherbench.invalid>
Installed-Size: $size
Depends: $depends, openssl
Recommends: openssh-client, openssh-server, libgnutls30t64 | libgnutls30
Suggests: gnutls-bin
Section: net
Priority: optional
Description: measure which cipher makes this machine fastest, securely
 cipherbench measures the TLS and SSH ciphers, key exchanges and MACs with
 the system's own OpenSSL, GnuTLS and OpenSSH (TLS over real sockets, SSH
 through a private sshd), grades each option against a security policy, and
 prints the fastest one the policy accepts, with the configuration lines to
 paste for nginx, Apache, HAProxy, stunnel, curl, OpenSSL, GnuTLS, ssh and
 sshd.
 .
 The Ansible playbooks for profiling a fleet are in
 /usr/share/cipherbench/ansible.
EOF

mkdir -p "$out"
deb="$out/cipherbench_${version}_${arch}.deb"
# CB_DEB_COMPRESSION=none: the tests' packages, made in a second and thrown away.
dpkg-deb --root-owner-group -Z"${CB_DEB_COMPRESSION:-xz}" --build "$pkg" "$deb" >/dev/null
echo "$deb"

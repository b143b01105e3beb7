# The two commands: `make run` runs the main job, `make test` passes the tests.
# Each installs missing system packages first (scripts/ensure-deps.sh).

CARGO ?= cargo
BIN := target/release/cipherbench

# In CI (a fresh clone, CI=true) incremental compilation only writes caches no
# later build reads: without it the test build takes 35-40% less time here.
ifneq ($(CI),)
export CARGO_INCREMENTAL ?= 0
endif

.PHONY: run test build bench deps clean install uninstall debian13-root forky-root deb openssl4

run:
	@scripts/ensure-deps.sh run
	$(CARGO) build --release --locked
	$(BIN)

build:
	@scripts/ensure-deps.sh run
	$(CARGO) build --release --locked

test:
	@scripts/ensure-deps.sh test
	@scripts/ensure-venv.sh >/dev/null
	$(CARGO) fmt --check
	$(CARGO) clippy --locked --all-targets -- -D warnings
	CARGO=$(CARGO) scripts/run-tests.sh

bench: build
	@scripts/ensure-deps.sh bench
	@scripts/ensure-venv.sh >/dev/null
	bench/speed-vs-openssl.sh

# The Debian roots tests/debian13.rs and tests/forky.rs run the binary in (as root;
# built once, cached outside the clone so that every clone reuses it: docs/debian13.md).
DEBIAN13_ROOT ?= $(or $(CIPHERBENCH_DEBIAN13_ROOT),/var/cache/cipherbench/debian13-root)
debian13-root:
	scripts/debian-root.sh trixie $(DEBIAN13_ROOT)

FORKY_ROOT ?= $(or $(CIPHERBENCH_FORKY_ROOT),/var/cache/cipherbench/forky-root)
forky-root:
	scripts/debian-root.sh forky $(FORKY_ROOT)

# `make deb` (as root for ARCH=arm64): target/debian/cipherbench_VERSION_ARCH.deb, the
# binary, man pages, completions, docs and Ansible playbooks, Depends from the
# binary's shared libraries (scripts/make-deb.sh). ARCH=arm64 cross-builds inside
# an overlay of the Debian 13 root (scripts/cross-deb.sh); the host is not changed.
HOST_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
ARCH ?= $(HOST_ARCH)
deb: build
	@scripts/ensure-deps.sh deb
ifeq ($(ARCH),$(HOST_ARCH))
	scripts/make-deb.sh --bin $(BIN)
else
	scripts/cross-deb.sh $(ARCH) $(BIN)
endif

# `sudo make openssl4`: builds, tests and packages cipherbench against Debian
# experimental's OpenSSL 4 in an overlay of the forky root, then installs the
# package in a clean forky root with experimental's archives (scripts/openssl4.sh;
# results in target/openssl4/results.txt). Minutes: not part of `make test`.
openssl4:
	scripts/openssl4.sh $(STEPS)

# `make install PREFIX=~/.local` (default /usr/local): the binary, the man pages and
# the bash, zsh and fish completions, all made from the binary's own definitions.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR := $(DESTDIR)$(PREFIX)/bin
MANDIR := $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

install: build
	install -d "$(BINDIR)" "$(MANDIR)" "$(BASHDIR)" "$(ZSHDIR)" "$(FISHDIR)"
	install -m 755 $(BIN) "$(BINDIR)/cipherbench"
	$(BIN) man --dir "$(MANDIR)"
	$(BIN) completions bash > "$(BASHDIR)/cipherbench"
	$(BIN) completions zsh > "$(ZSHDIR)/_cipherbench"
	$(BIN) completions fish > "$(FISHDIR)/cipherbench.fish"
	@echo "installed cipherbench in $(BINDIR); man cipherbench; completions for bash, zsh and fish"

uninstall:
	rm -f "$(BINDIR)/cipherbench" "$(MANDIR)"/cipherbench.1 "$(MANDIR)"/cipherbench-*.1 \
	  "$(BASHDIR)/cipherbench" "$(ZSHDIR)/_cipherbench" "$(FISHDIR)/cipherbench.fish"

clean:
	$(CARGO) clean

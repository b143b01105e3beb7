# The two commands: `make run` runs the main job, `make test` passes the tests.
# Each installs missing system packages first (scripts/ensure-deps.sh).

CARGO ?= cargo
BIN := target/release/cipherbench

.PHONY: run test build bench deps clean

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
	$(CARGO) test --locked

bench: build
	@scripts/ensure-deps.sh bench
	@scripts/ensure-venv.sh >/dev/null
	bench/speed-vs-openssl.sh

clean:
	$(CARGO) clean

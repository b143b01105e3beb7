//! For tests only: what a test does when a peer or tool it needs is missing.

/// A tool or peer the test needs (nginx, sshd, gnutls-cli ...) is not installed.
/// Under CI (`CI=true`) that fails the test: `make test` installs every one of
/// them (scripts/ensure-deps.sh test), so a missing one is a broken set-up, not a
/// reason to pass. Elsewhere the test says why it skipped. A skip for what the
/// machine itself cannot do (no AES-NI, not root) is not this.
pub fn missing(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what}, under CI=true: `make test` installs it (scripts/ensure-deps.sh test)");
    }
    eprintln!("skipped: {what}");
}

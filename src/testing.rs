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

/// A finished run's document around `results` (a JSON array of result records),
/// on a made-up host: the fixture the report, recommend and diff tests build on.
pub fn doc(results: serde_json::Value) -> crate::model::Document {
    serde_json::from_value(serde_json::json!({
        "schema": "cipherbench/1",
        "run": {"id": "t", "started_at": "2026-01-01T00:00:00Z", "status": "complete", "command": "speed",
                "host": {"cpu_model": "x", "cores": 1, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                "libraries": {}, "settings": {}},
        "results": results,
    }))
    .expect("the fixture is a document")
}

/// [`doc`] around typed records.
pub fn doc_of(results: Vec<crate::model::ResultRecord>) -> crate::model::Document {
    let mut d = doc(serde_json::json!([]));
    d.results = results;
    d
}

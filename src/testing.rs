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

/// An address of 127.0.0.1 where nothing listens, for as long as the returned
/// socket lives: bound there (so no other test can take the port meanwhile) but
/// not listening, so a connection to it is refused. (Binding a port and releasing
/// it would let a parallel test's server take it.)
pub fn closed_port() -> (std::os::fd::OwnedFd, std::net::SocketAddr) {
    use std::os::fd::{AsRawFd, FromRawFd};
    // SAFETY: plain socket calls on a socket this function owns; the address
    // structures are initialised before use and sized as the calls expect.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let fd = std::os::fd::OwnedFd::from_raw_fd(fd);
        let mut sa: libc::sockaddr_in = std::mem::zeroed();
        sa.sin_family = libc::AF_INET as libc::sa_family_t;
        sa.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let rc = libc::bind(fd.as_raw_fd(), &sa as *const libc::sockaddr_in as *const libc::sockaddr, len);
        assert_eq!(rc, 0, "bind: {}", std::io::Error::last_os_error());
        let mut got: libc::sockaddr_in = std::mem::zeroed();
        let mut glen = len;
        let rc = libc::getsockname(fd.as_raw_fd(), &mut got as *mut libc::sockaddr_in as *mut libc::sockaddr, &mut glen);
        assert_eq!(rc, 0, "getsockname: {}", std::io::Error::last_os_error());
        (
            fd,
            std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, u16::from_be(got.sin_port))),
        )
    }
}

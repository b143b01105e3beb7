//! A private stunnel: the system binary started by absolute path with its
//! configuration file (`foreground = yes`, no pid file) on a free random
//! 127.0.0.1 port (`backend::private`: the 0700 directory, the generated
//! identity, the cleanup), one service that accepts TLS and connects to a
//! plaintext HTTP server of this process on 127.0.0.1 ([`PlainHttp`]) that
//! answers every GET with one body, as stunnel fronts a plaintext service. So
//! what a user's TLS lines cost can be measured through stunnel
//! (`measure::tls::through`).
//!
//! The TLS lines are the caller's service options (`ciphers = …`,
//! [`tls_line_ok`]). stunnel has no check mode: it reads them when it starts,
//! and a line it refuses ends it ("Configuration failed"), with its words in
//! the error. As root it reads the key, binds, then runs as `nobody`
//! (`setuid`/`setgid`).

use crate::backend::private::{self, Daemon, Layout, Proxy, Start};
use anyhow::{bail, Result};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

const PREFIX: &str = "cipherbench-stunnel-";
/// The programs that are stunnel.
pub const PROGRAMS: &[&str] = &["stunnel4", "stunnel"];
/// The service options a private stunnel takes (lower case).
const OPTIONS: &[&str] = &[
    "sslversion",
    "sslversionmin",
    "sslversionmax",
    "ciphers",
    "ciphersuites",
    "curves",
    "options",
];

pub use crate::backend::private::Spec;

/// Whether `line` is one TLS option of a service (`ciphers = …`) and nothing else.
pub fn tls_line_ok(line: &str) -> bool {
    let Some((key, _)) = line.split_once('=') else { return false };
    OPTIONS.contains(&key.trim().to_ascii_lowercase().as_str()) && private::one_line(line) && !line.contains(';')
}

/// The configuration of a private instance: in the foreground, one service on
/// 127.0.0.1:`port` with `tls`, connecting to `backend`.
pub fn config_text(l: &Layout, port: u16, backend: SocketAddr, tls: &[String]) -> Result<String> {
    if let Some(bad) = tls.iter().find(|l| !tls_line_ok(l)) {
        bail!("not one TLS option: '{bad}' (the private stunnel takes a service's TLS options only)");
    }
    let mut c = String::from("; cipherbench private stunnel\nforeground = yes\npid =\ndebug = notice\n");
    if let Some((u, g)) = &l.user {
        c.push_str(&format!("setuid = {u}\nsetgid = {g}\n"));
    }
    c.push_str(&format!(
        "[tls]\naccept = 127.0.0.1:{port}\nconnect = {backend}\ncert = {d}/cert.pem\nkey = {d}/key.pem\n",
        d = l.dir.display()
    ));
    for t in tls {
        c.push_str(t.trim());
        c.push('\n');
    }
    Ok(c)
}

/// Starts the plaintext backend, writes the directory and configuration,
/// starts stunnel and waits until it accepts.
pub fn start(spec: &Spec) -> Result<Proxy> {
    if let Some(bad) = spec.tls_lines.iter().find(|l| !tls_line_ok(l)) {
        bail!("not one TLS option: '{bad}' (the private stunnel takes a service's TLS options only)");
    }
    let command = |_: &Layout, conf: &Path| {
        let mut c = Command::new(spec.binary);
        c.arg(conf);
        c
    };
    Proxy::start(spec.body, |to| {
        let config = |l: &Layout, port: u16| config_text(l, port, to, spec.tls_lines);
        Daemon::start(&Start {
            what: "stunnel",
            prefix: PREFIX,
            binary: spec.binary,
            identity: spec.identity,
            body: None,
            file: "",
            start_within: spec.start_within,
            config_file: "stunnel.conf",
            config: &config,
            check: None,
            refusal: &[],
            command: &command,
            ready: &|_| true,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::private::tests::{starts_serves_refuses_and_leaves_nothing_behind as check, Case};

    /// It starts with a service's TLS options, answers a GET over TLS with the
    /// backend's body under them, and leaves nothing behind; an option stunnel
    /// refuses comes back in its words; anything else never reaches it.
    #[test]
    fn starts_serves_refuses_and_leaves_nothing_behind() {
        check(
            start,
            &Case {
                programs: PROGRAMS,
                good: &["sslVersionMax = TLSv1.2", "ciphers = ECDHE-RSA-AES128-SHA"],
                refused: "ciphers = NO-SUCH-SUITE",
                said: "stunnel",
                outside: &["exec = /bin/sh", "ciphers = X\n[x]", "ciphers = X ; y", "[other]"],
            },
        );
    }
}

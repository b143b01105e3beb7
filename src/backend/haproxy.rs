//! A private HAProxy: the system binary started by absolute path with `-db -f
//! DIR/haproxy.cfg` (foreground, one thread) on a free random 127.0.0.1 port
//! (`backend::private`: the 0700 directory, the generated identity, the cleanup),
//! terminating TLS in HTTP mode in front of a plaintext HTTP server of this
//! process on 127.0.0.1 ([`PlainHttp`]) that answers every GET with one body, as
//! HAProxy fronts a web server. So what a user's TLS lines cost can be measured
//! through HAProxy (`measure::tls::through`). (HAProxy's own `http-request return
//! … file` answers only with a file that fits in one buffer, `tune.bufsize`,
//! 16 KiB by default: not the 1 MiB measured, hence the backend.)
//!
//! The TLS lines are the caller's `ssl-default-bind-…` lines of the `global`
//! section, one per line ([`tls_line_ok`]). As root it reads the certificate,
//! binds, then runs as `nobody` (`user`/`group`).

use crate::backend::private::{self, Daemon, Layout, Proxy, Start};
use anyhow::{bail, Result};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

const PREFIX: &str = "cipherbench-haproxy-";

pub use crate::backend::private::Spec;

/// Whether `line` is one `ssl-default-bind-…` line and nothing else.
pub fn tls_line_ok(line: &str) -> bool {
    line.trim_start().starts_with("ssl-default-bind-") && private::one_line(line)
}

/// The configuration of a private instance: one thread, HTTP mode, TLS on
/// 127.0.0.1:`port` with `tls` in its `global` section, in front of `backend`.
pub fn config_text(l: &Layout, port: u16, backend: SocketAddr, tls: &[String]) -> Result<String> {
    if let Some(bad) = tls.iter().find(|l| !tls_line_ok(l)) {
        bail!("not one TLS directive: '{bad}' (the private HAProxy takes ssl-default-bind-… lines only)");
    }
    let mut c = String::from("# cipherbench private HAProxy\nglobal\n    nbthread 1\n    maxconn 256\n");
    if let Some((u, g)) = &l.user {
        c.push_str(&format!("    user {u}\n    group {g}\n"));
    }
    for t in tls {
        c.push_str(&format!("    {}\n", t.trim()));
    }
    c.push_str(&format!(
        "defaults\n    mode http\n    timeout connect 5s\n    timeout client 60s\n    timeout server 60s\n    timeout http-keep-alive 60s\n\
         frontend tls\n    bind 127.0.0.1:{port} ssl crt {d}/both.pem\n    default_backend plain\n\
         backend plain\n    server plain {backend}\n",
        d = l.dir.display()
    ));
    Ok(c)
}

/// Starts the plaintext backend, writes the directory and configuration,
/// checks it with `haproxy -c`, starts HAProxy and waits until it accepts.
pub fn start(spec: &Spec) -> Result<Proxy> {
    if let Some(bad) = spec.tls_lines.iter().find(|l| !tls_line_ok(l)) {
        bail!("not one TLS directive: '{bad}' (the private HAProxy takes ssl-default-bind-… lines only)");
    }
    let run = |extra: &[&str], conf: &Path| {
        let mut c = Command::new(spec.binary);
        c.args(extra).arg("-f").arg(conf);
        c
    };
    let check = |_: &Layout, conf: &Path| run(&["-c"], conf);
    let command = |_: &Layout, conf: &Path| run(&["-db"], conf);
    Proxy::start(spec.body, |to| {
        let config = |l: &Layout, port: u16| config_text(l, port, to, spec.tls_lines);
        Daemon::start(&Start {
            what: "HAProxy",
            prefix: PREFIX,
            binary: spec.binary,
            identity: spec.identity,
            body: None,
            file: "",
            start_within: spec.start_within,
            config_file: "haproxy.cfg",
            config: &config,
            check: Some(&check),
            refusal: &["[ALERT]"],
            command: &command,
            ready: &|_| true,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::private::tests::{starts_serves_refuses_and_leaves_nothing_behind as check, Case};

    /// It starts with `ssl-default-bind-…` lines, answers a GET over TLS with the
    /// backend's body under them, and leaves nothing behind; a line HAProxy
    /// refuses comes back in its words; anything else never reaches it.
    #[test]
    fn starts_serves_refuses_and_leaves_nothing_behind() {
        check(
            start,
            &Case {
                programs: &["haproxy"],
                good: &[
                    "ssl-default-bind-ciphers ECDHE-RSA-AES128-SHA",
                    "ssl-default-bind-options ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2",
                ],
                refused: "ssl-default-bind-options no-such-option",
                said: "no-such-option",
                outside: &[
                    "stats socket /tmp/x",
                    "ssl-default-bind-ciphers X\nlisten x",
                    "ssl-default-bind-ciphers X # y",
                ],
            },
        );
    }
}

//! A private Apache httpd (mod_ssl): the system binary started by absolute path
//! with `-d DIR -f DIR/apache2.conf -DFOREGROUND` on a free random 127.0.0.1
//! port (`backend::private`: the 0700 directory, the generated identity, the
//! cleanup). Its configuration loads only what serving a file over TLS needs
//! from the system's module directory (an MPM, authz_core, ssl), one child
//! process, and serves one generated file, so that what a user's TLS lines
//! cost can be measured through Apache (`measure::tls::through`).
//!
//! The TLS lines are the caller's: only mod_ssl's protocol and cipher
//! directives ([`tls_line_ok`]), one per line. As root the parent reads the key
//! and binds, and its child serves as `nobody` (`User`/`Group`: Apache refuses
//! to serve as root).

use crate::backend::private::{self, Daemon, Layout, Served, Start};
use crate::backend::process::descendants;
use anyhow::{anyhow, bail, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The path of the served file.
pub const PATH: &str = private::PATH;
const PREFIX: &str = "cipherbench-apache-";
/// The programs that are Apache httpd.
pub const PROGRAMS: &[&str] = &["apache2", "httpd"];
/// The directives a private Apache takes (lower case).
const DIRECTIVES: &[&str] = &[
    "sslprotocol",
    "sslciphersuite",
    "sslopensslconfcmd",
    "sslhonorcipherorder",
    "sslsessiontickets",
    "sslcompression",
];

pub use crate::backend::private::Spec;

/// A running private Apache. Dropping it stops it and removes its directories.
pub struct PrivateApache {
    daemon: Daemon,
}

/// Whether `line` is one mod_ssl protocol or cipher directive and nothing else.
pub fn tls_line_ok(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or_default().to_ascii_lowercase();
    DIRECTIVES.contains(&first.as_str()) && private::one_line(line)
}

/// The system's module directory (Debian's, Red Hat's, a source build's).
pub fn modules() -> Option<PathBuf> {
    [
        "/usr/lib/apache2/modules",
        "/usr/lib64/httpd/modules",
        "/usr/lib/httpd/modules",
        "/usr/local/apache2/modules",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|d| d.join("mod_ssl.so").exists())
}

/// The modules a TLS file server needs: an MPM (event, else prefork, unless
/// one is built in), authz_core, ssl.
fn load_modules(dir: &Path) -> String {
    let mpm = ["mpm_event", "mpm_prefork", "mpm_worker"]
        .into_iter()
        .find(|m| dir.join(format!("mod_{m}.so")).exists());
    mpm.into_iter()
        .chain(["authz_core", "ssl"])
        .map(|m| format!("LoadModule {m}_module {}/mod_{m}.so\n", dir.display()))
        .collect()
}

/// The server-wide part of a private configuration: its own root, pid file,
/// runtime directory and log, the modules, and `tls`; `None` when a line is
/// not one mod_ssl directive.
pub fn base_config(dir: &Path, log: &Path, modules: &Path, tls: &[String]) -> Result<String> {
    if let Some(bad) = tls.iter().find(|l| !tls_line_ok(l)) {
        bail!("not one TLS directive: '{bad}' (the private Apache takes mod_ssl protocol and cipher lines only)");
    }
    let d = dir.display();
    let mut c = format!(
        "# cipherbench private Apache\nServerRoot {d}\nServerName localhost\nPidFile {d}/apache.pid\nDefaultRuntimeDir {d}\nErrorLog {log}\nLogLevel warn\n{}",
        load_modules(modules),
        log = log.display()
    );
    for l in tls {
        c.push_str(l.trim());
        c.push('\n');
    }
    Ok(c)
}

/// The configuration of a private instance: one child process, keep-alive,
/// TLS on 127.0.0.1:`port`, serving `www`.
pub fn config_text(l: &Layout, modules: &Path, port: u16, tls: &[String]) -> Result<String> {
    let mut c = base_config(&l.dir, &l.log, modules, tls)?;
    if let Some((u, g)) = &l.user {
        c.push_str(&format!("User {u}\nGroup {g}\n"));
    }
    let www = l
        .www
        .as_deref()
        .ok_or_else(|| anyhow!("the private Apache has no document directory"))?;
    c.push_str(&format!(
        "StartServers 1\nServerLimit 1\nThreadsPerChild 16\nThreadLimit 16\nMaxRequestWorkers 16\nMinSpareThreads 1\nMaxSpareThreads 16\n\
         MaxConnectionsPerChild 0\nKeepAlive On\nMaxKeepAliveRequests 0\nKeepAliveTimeout 60\n\
         Listen 127.0.0.1:{port} https\nDocumentRoot {www}\n<Directory {www}>\n    Require all granted\n</Directory>\n\
         SSLEngine on\nSSLCertificateFile {d}/cert.pem\nSSLCertificateKeyFile {d}/key.pem\n",
        www = www.display(),
        d = l.dir.display()
    ));
    Ok(c)
}

impl PrivateApache {
    /// Writes the directories and configuration, checks it with `apache2 -t`,
    /// starts Apache and waits until it accepts connections and has its child.
    pub fn start(spec: &Spec) -> Result<PrivateApache> {
        let modules = modules().ok_or_else(|| anyhow!("no Apache module directory with mod_ssl.so"))?;
        if let Some(bad) = spec.tls_lines.iter().find(|l| !tls_line_ok(l)) {
            bail!("not one TLS directive: '{bad}' (the private Apache takes mod_ssl protocol and cipher lines only)");
        }
        let config = |l: &Layout, port: u16| config_text(l, &modules, port, spec.tls_lines);
        let run = |extra: &[&str], l: &Layout, conf: &Path| {
            let mut c = Command::new(spec.binary);
            c.arg("-d").arg(&l.dir).arg("-f").arg(conf).args(extra);
            c
        };
        let check = |l: &Layout, conf: &Path| run(&["-t"], l, conf);
        let command = |l: &Layout, conf: &Path| run(&["-DFOREGROUND"], l, conf);
        let daemon = Daemon::start(&Start {
            what: "Apache",
            prefix: PREFIX,
            binary: spec.binary,
            identity: spec.identity,
            body: Some(spec.body),
            file: PATH.trim_start_matches('/'),
            start_within: spec.start_within,
            config_file: "apache2.conf",
            config: &config,
            check: Some(&check),
            refusal: &["AH0", "Syntax error", "Invalid command", "rror"],
            command: &command,
            ready: &|pid| !descendants(pid).is_empty(),
        })?;
        Ok(PrivateApache { daemon })
    }
}

impl Served for PrivateApache {
    fn daemon(&self) -> &Daemon {
        &self.daemon
    }
    /// The parent and its child.
    fn serving(&self) -> Vec<u32> {
        self.pid()
            .into_iter()
            .flat_map(|p| std::iter::once(p).chain(descendants(p)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::private::tests::{starts_serves_refuses_and_leaves_nothing_behind as check, Case};

    /// It starts with mod_ssl lines, serves the file over TLS with them, and
    /// leaves nothing behind; a line Apache refuses comes back in its words;
    /// anything but a mod_ssl cipher directive never reaches it.
    #[test]
    fn starts_serves_refuses_and_leaves_nothing_behind() {
        check(
            PrivateApache::start,
            &Case {
                programs: PROGRAMS,
                good: &[
                    "SSLProtocol -all +TLSv1.2",
                    "SSLCipherSuite ECDHE-RSA-AES128-SHA",
                    "SSLHonorCipherOrder on",
                ],
                refused: "SSLCipherSuite NO-SUCH-SUITE",
                said: "Apache",
                outside: &[
                    "DocumentRoot /",
                    "SSLProtocol all\nListen 80",
                    "SSLProtocol all # x",
                    "<VirtualHost *:80>",
                ],
            },
        );
    }
}

//! `tls --serve ADDR`: the benchmark server alone until Ctrl-C, for a peer such
//! as `gnutls-cli`, `openssl s_client` or another cipherbench. Any library's
//! `TlsLibrary` serves; `--priority` is its own configuration text, for a
//! library that takes one.

use super::libraries::{library, pairs};
use super::probe::{Log, Refusals, Server};
use crate::backend::openssl::certs::Identity;
use crate::backend::tls::Selection;
use crate::catalog::Library;
use crate::error::UsageError;
use anyhow::{anyhow, Context, Result};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

/// Serves until Ctrl-C. Prints the address it listens on, then one line per
/// connection (negotiated protocol, suite, group, or why the handshake failed).
pub fn serve(a: &crate::options::TlsOptions, addr: &str, quiet: bool) -> Result<()> {
    let sa: SocketAddr = addr
        .parse()
        .map_err(|_| UsageError::Invalid(format!("--serve wants IP:PORT (e.g. 127.0.0.1:4433), got '{addr}'")))?;
    let libs: Vec<Library> = pairs(&a.libraries).into_iter().filter(|(c, s)| c == s).map(|(c, _)| c).collect();
    let [lib] = libs[..] else {
        return Err(UsageError::Invalid(format!("--serve runs one library: {}", crate::backend::libraries::every_lib())).into());
    };
    let tls = library(lib)?;
    let selection = match (&a.priority, crate::backend::libraries::native_text(lib)) {
        (Some(_), None) => {
            return Err(UsageError::Invalid(format!(
                "--priority is a library's own configuration text: use {}",
                crate::backend::libraries::native_libs()
            ))
            .into())
        }
        // Checked by the library first: a typo is exit 2.
        (Some(text), Some(_)) => {
            tls.native_suites(text)
                .unwrap_or_else(|| Err(anyhow!("{} takes no configuration text of its own", tls.version())))?;
            Selection {
                native: Some(text.clone()),
                ..Default::default()
            }
        }
        // The library's default.
        (None, _) => Selection::default(),
    };
    let cert = crate::measure::tls::parse_certs(&a.certs)?[0];
    let timeout = Duration::from_secs_f64(a.timeout.0);
    let id = Identity::generate(cert)?;
    let end = tls.server(&selection, &id)?;
    let listener = TcpListener::bind(sa).with_context(|| format!("cannot listen on {sa}"))?;
    let local = listener.local_addr()?;
    let log: Log = Arc::new(move |m: &str| {
        if !quiet {
            eprintln!("{}", crate::untrusted::for_terminal(m));
        }
    });
    let server = Server::start(listener, end, a.threads as usize, timeout, false, Refusals::Log(log))?;
    // Always printed: a peer (or test) needs the port.
    eprintln!(
        "cipherbench: serving TLS with {}{} and a {} certificate on {local}; Ctrl-C stops",
        tls.version(),
        a.priority.as_deref().map(|p| format!(", priority '{p}'")).unwrap_or_default(),
        cert.name()
    );
    server.wait();
    Ok(())
}

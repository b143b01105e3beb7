//! Before the first `ssh` to a remote host, the host's banner read directly, so a
//! host that accepts and stays silent, drips bytes, or speaks something else is
//! named as such (not "unreachable").

use super::{Client, Destination, SshError};
use std::io::Read;
use std::process::Command;
use std::time::{Duration, Instant};

impl Client {
    /// For a remote host: connects to the address and port ssh would use (from
    /// `ssh -G`) and reads the SSH banner within 10 s (capped by the run's
    /// deadline), so the first failure names its real cause: refused,
    /// unreachable, silent, too slow or not SSH. Skipped when ssh goes through a
    /// proxy (ProxyJump, ProxyCommand): ssh's own messages then tell.
    pub fn reach(&self) -> Result<(), SshError> {
        let Destination::Remote {
            destination,
            port,
            options,
            ..
        } = &self.target
        else {
            return Ok(());
        };
        let mut g = Command::new(&self.ssh);
        g.arg("-G");
        for opt in options {
            g.arg("-o").arg(opt);
        }
        if let Some(p) = port {
            g.arg("-p").arg(p.to_string());
        }
        g.arg("--").arg(destination);
        let out = crate::backend::process::output_within(&mut g, crate::backend::process::QUERY_LIMIT);
        let Some(out) = out.ok().flatten().filter(|o| o.status.success()) else {
            return Ok(()); // ssh itself will say what is wrong with the destination
        };
        let text = String::from_utf8_lossy(&out.stdout);
        // Keywords in any case (OpenSSH 10.6 capitalises them).
        let get = |k: &str| crate::backend::openssh::dump_value(&text, k).map(str::to_string);
        let proxied = get("proxyjump").is_some_and(|v| v != "none") || get("proxycommand").is_some_and(|v| v != "none");
        let (Some(host), Some(port)) = (get("hostname"), get("port").and_then(|p| p.parse::<u16>().ok())) else {
            return Ok(());
        };
        if proxied {
            return Ok(());
        }
        read_banner(&host, port, Duration::from_secs(10))
    }
}

/// Reads an SSH server's banner at `host:port` within `limit` (capped by the
/// run's deadline), reading a slice at a time, and says what went wrong in the
/// user's terms.
pub fn read_banner(host: &str, port: u16, limit: Duration) -> Result<(), SshError> {
    use std::net::ToSocketAddrs;
    let t0 = Instant::now();
    let addrs: Vec<std::net::SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| SshError::Unreachable(format!("cannot resolve {host}: {e}")))?
        .collect();
    let Some(addr) = addrs.first() else {
        return Err(SshError::Unreachable(format!("{host} has no address")));
    };
    let dl = crate::deadline::op(limit);
    let mut tcp = crate::backend::openssl::tls::tcp(*addr, limit).map_err(|e| match e {
        crate::backend::openssl::tls::ConnectError::Interrupted => SshError::Interrupted,
        e => SshError::Unreachable(format!("{host} port {port}: {e}")),
    })?;
    let mut got: Vec<u8> = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        // RFC 4253 4.2: lines before the version line are allowed; the version
        // line starts with "SSH-" and ends with a newline.
        let mut lines: Vec<&[u8]> = got.split(|&b| b == b'\n').collect();
        lines.pop(); // what follows the last newline is not a complete line
        if lines.iter().any(|l| l.starts_with(b"SSH-")) {
            return Ok(());
        }
        let printable = |b: &u8| matches!(b, b'\r' | b'\n' | b'\t' | 0x20..=0x7e);
        if !got.iter().all(printable) || lines.len() > 4 || got.len() > 8192 {
            let shown: String = String::from_utf8_lossy(&got[..got.len().min(40)]).escape_default().to_string();
            return Err(SshError::NotSsh(format!(
                "{host} port {port} accepted the connection but answered with something that is not SSH: \"{shown}\""
            )));
        }
        let Some(slice) = dl.slice() else {
            if crate::interrupt::by_user() {
                return Err(SshError::Interrupted);
            }
            let secs = t0.elapsed().as_secs_f64();
            return Err(SshError::Stalled(if got.is_empty() {
                format!("{host} port {port} accepted the connection but sent nothing for {secs:.1} s")
            } else {
                format!(
                    "{host} port {port} accepted the connection but sent {} bytes in {secs:.1} s without a complete SSH banner: too slow to measure",
                    got.len()
                )
            }));
        };
        let _ = tcp.set_read_timeout(Some(slice));
        match tcp.read(&mut buf) {
            Ok(0) => {
                return Err(SshError::Stalled(format!(
                    "{host} port {port} accepted the connection, then closed it after {} bytes, without an SSH banner",
                    got.len()
                )))
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(SshError::Unreachable(format!("{host} port {port}: {e}"))),
        }
    }
}

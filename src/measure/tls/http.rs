//! HTTP/1.1 downloads over one suite, through any TLS library whose clients give
//! streams that keep a timeout per read (`ClientConfig::stream`): `--connect
//! --http-get` with the `--lib` library, and the private nginx of `through.rs`
//! with libssl.

use crate::backend::tls::{Bounded, ClientConfig};
use crate::measure::engine::sampler::{thread_cpu_time, Probe};
use crate::units::Seconds;
use anyhow::{anyhow, bail, Result};
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// HTTP/1.1 GETs of one path over one suite; times request to last body byte.
pub(super) struct HttpProbe {
    /// The client library's configuration offering the suite.
    pub(super) client: Arc<dyn ClientConfig>,
    pub(super) plan_addr: SocketAddr,
    pub(super) sni: Option<String>,
    pub(super) host: String,
    pub(super) path: String,
    pub(super) timeout: Duration,
    pub(super) stream: Option<Bounded>,
    pub(super) buf: Vec<u8>,
    pub(super) timed: (Seconds, Seconds),
    /// The size of the last body.
    pub(super) body: Option<u64>,
    /// When set, every body byte is hashed into it (a known-answer check of what
    /// was served, outside the timed samples; `Content-Length` bodies only).
    pub(super) digest: Option<openssl::sha::Sha256>,
}

impl HttpProbe {
    /// A probe that connects on its first GET of `path` (`host` for the Host header).
    pub(super) fn new(
        client: &Arc<dyn ClientConfig>,
        addr: SocketAddr,
        sni: Option<String>,
        host: String,
        path: &str,
        timeout: Duration,
    ) -> HttpProbe {
        HttpProbe {
            client: client.clone(),
            plan_addr: addr,
            sni,
            host,
            path: path.to_string(),
            timeout,
            stream: None,
            buf: vec![0u8; 1 << 16],
            timed: (Seconds(0.0), Seconds(0.0)),
            body: None,
            digest: None,
        }
    }

    pub(super) fn get(&mut self) -> Result<u64> {
        if self.stream.is_none() {
            let s = self
                .client
                .stream(self.plan_addr, self.sni.as_deref(), self.timeout)
                .map_err(|e| anyhow!("{}: {e}", self.host))?;
            self.stream = Some(s);
        }
        // Reads keep the run's deadline: a server dripping its body cannot hold the run.
        let s = self.stream.as_mut().expect("connected");
        let (t0, c0) = (Instant::now(), thread_cpu_time());
        let req = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: cipherbench/{}\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n",
            self.path,
            self.host,
            env!("CARGO_PKG_VERSION")
        );
        s.write_all(req.as_bytes())?;
        let (head, body_start) = read_head(s, &mut self.buf, &self.path)?;
        let text = String::from_utf8_lossy(&head[..body_start]).to_ascii_lowercase();
        let status = text.split_whitespace().nth(1).unwrap_or("");
        if status != "200" {
            let line = String::from_utf8_lossy(&head[..body_start]);
            let first = line.lines().next().unwrap_or("");
            bail!(
                "GET {} answered '{}'",
                self.path,
                crate::untrusted::shown(&crate::untrusted::bounded(first, 200))
            );
        }
        let header = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
        // RFC 9112 6.3: chunked framing wins over any Content-Length.
        let chunked = header("transfer-encoding:").is_some_and(|v| v.split(',').any(|c| c.trim() == "chunked"));
        let length: Option<u64> = header("content-length:").and_then(|v| v.parse().ok());
        let close =
            header("connection:").is_some_and(|v| v.contains("close")) || text.starts_with("http/1.0") || (length.is_none() && !chunked);
        let got = if chunked {
            if self.digest.is_some() {
                bail!("GET {} answered with a chunked body, which this check cannot hash", self.path);
            }
            read_chunked(s, &mut self.buf, head[body_start..].to_vec())?
        } else {
            let mut got = (head.len() - body_start) as u64;
            if let Some(d) = self.digest.as_mut() {
                d.update(&head[body_start..]);
            }
            loop {
                if length.is_some_and(|l| got >= l) {
                    break;
                }
                let k = s.read(&mut self.buf)?;
                if k == 0 {
                    if let Some(l) = length {
                        bail!("the body ended after {got} of {l} bytes");
                    }
                    break;
                }
                if let Some(d) = self.digest.as_mut() {
                    d.update(&self.buf[..k]);
                }
                got += k as u64;
            }
            got
        };
        self.body = Some(got);
        self.timed.0 .0 += t0.elapsed().as_secs_f64();
        self.timed.1 .0 += thread_cpu_time().0 - c0.0;
        if close {
            self.stream = None;
        }
        Ok(got)
    }
}

/// Reads one `Transfer-Encoding: chunked` body (RFC 9112 7.1: hex size lines with
/// optional extensions, data, CRLF, a last chunk of size 0, optional trailers, an
/// empty line). `pending` holds what was already read past the headers. Returns the
/// number of body bytes (chunk data only).
pub(super) fn read_chunked<R: Read>(s: &mut R, buf: &mut [u8], mut pending: Vec<u8>) -> Result<u64> {
    let mut total = 0u64;
    loop {
        let line = take_line(s, buf, &mut pending)?;
        let hex = line.split(';').next().unwrap_or("").trim();
        let size = u64::from_str_radix(hex, 16)
            .ok()
            .filter(|_| !hex.is_empty() && hex.len() <= 16)
            .ok_or_else(|| anyhow!("bad chunk-size line '{}' in a chunked body", line.escape_default()))?;
        if size == 0 {
            // Trailer fields, then the empty line that ends the message.
            while !take_line(s, buf, &mut pending)?.is_empty() {}
            return Ok(total);
        }
        let mut left = size;
        let k = (pending.len() as u64).min(left) as usize;
        pending.drain(..k);
        left -= k as u64;
        while left > 0 {
            let n = s.read(buf)?;
            if n == 0 {
                bail!("the chunked body ended {left} bytes into a {size}-byte chunk");
            }
            let used = (n as u64).min(left) as usize;
            left -= used as u64;
            pending.extend_from_slice(&buf[used..n]);
        }
        total += size;
        if !take_line(s, buf, &mut pending)?.is_empty() {
            bail!("a {size}-byte chunk is not followed by CRLF");
        }
    }
}

/// One CRLF-terminated line of a chunked body, without the CRLF.
pub(super) fn take_line<R: Read>(s: &mut R, buf: &mut [u8], pending: &mut Vec<u8>) -> Result<String> {
    loop {
        if let Some(i) = pending.windows(2).position(|w| w == b"\r\n") {
            let line = String::from_utf8_lossy(&pending[..i]).into_owned();
            pending.drain(..i + 2);
            return Ok(line);
        }
        if pending.len() > 8 << 10 {
            bail!("a line of more than 8 KiB in a chunked body");
        }
        let n = s.read(buf)?;
        if n == 0 {
            bail!("the chunked body ended before its last chunk");
        }
        pending.extend_from_slice(&buf[..n]);
    }
}

impl Probe for HttpProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        self.timed = (Seconds(0.0), Seconds(0.0));
        let mut total = 0;
        for _ in 0..units {
            total += self.get()?;
        }
        Ok(total as f64)
    }
    fn timed_region(&self) -> Option<(Seconds, Seconds)> {
        Some(self.timed)
    }
}

/// Reads up to the end of the HTTP headers: what was read, and where the body starts.
fn read_head<R: Read>(s: &mut R, buf: &mut [u8], path: &str) -> Result<(Vec<u8>, usize)> {
    let mut head: Vec<u8> = Vec::new();
    loop {
        let k = s.read(buf)?;
        if k == 0 {
            bail!("the server closed the connection before answering GET {path}");
        }
        head.extend_from_slice(&buf[..k]);
        if let Some(i) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok((head, i + 4));
        }
        if head.len() > 64 << 10 {
            bail!("no end of HTTP headers in 64 KiB");
        }
    }
}

//! The probes every TLS library shares, written against `backend::tls`: the
//! in-process server (`wire`'s protocol behind any library's server
//! configuration), full and resumed handshakes through any client configuration,
//! and the bulk probe's connection.

use super::wire::{self as wire, serve_commands, Workers};
use super::Direction;
use crate::backend::tls::{ClientConfig, Connection, Negotiated, Resumption, ServerConfig};
use crate::measure::engine::sampler::Probe;
use anyhow::{anyhow, bail, Context, Result};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

// ---------------------------------------------------------------------------
// The server

/// What a server reports per connection (for `--serve`).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// How a server treats a handshake that did not complete.
#[derive(Clone)]
pub enum Refusals {
    /// A failure of the server (kept as its error), unless the client gave up.
    Fail,
    /// The client's result to record: the last one is kept for its message.
    Keep,
    /// One line per connection (`--serve`).
    Log(Log),
}

/// An in-process server on a TCP listener (`wire`'s protocol over any library):
/// one worker thread per client thread. It answers every handshake with one byte,
/// then serves bulk commands.
pub struct Server {
    pub addr: SocketAddr,
    workers: Workers,
    /// The last refused handshake (with [`Refusals::Keep`]).
    refusals: Arc<Mutex<Option<String>>>,
}

impl Server {
    /// A server on a new loopback port.
    pub fn loopback(end: Arc<dyn ServerConfig>, workers: usize, timeout: Duration, bulk: bool, refusals: Refusals) -> Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0").context("binding a loopback port")?;
        Server::start(listener, end, workers, timeout, bulk, refusals)
    }

    pub fn start(
        listener: TcpListener,
        end: Arc<dyn ServerConfig>,
        workers: usize,
        timeout: Duration,
        bulk: bool,
        refusals: Refusals,
    ) -> Result<Server> {
        let kept = Arc::new(Mutex::new(None));
        let keep = kept.clone();
        let log = match &refusals {
            Refusals::Log(l) => Some(l.clone()),
            _ => None,
        };
        let workers = Workers::start(listener, workers, move |tcp, peer, stop| {
            let mut conn = match end.accept(tcp, timeout, bulk) {
                Ok(c) => c,
                Err(r) => {
                    match &refusals {
                        Refusals::Fail if !r.gave_up => bail!("server handshake: {}", r.why),
                        Refusals::Fail => {}
                        Refusals::Keep if !stop.load(Ordering::SeqCst) => *keep.lock().unwrap() = Some(r.why),
                        Refusals::Keep => {}
                        Refusals::Log(l) => l(&format!("{peer}: handshake failed: {}", r.why)),
                    }
                    return Ok(());
                }
            };
            if let Some(l) = &log {
                let (v, s, g) = conn.negotiated();
                l(&format!("{peer}: {v} {s} {}", g.as_deref().unwrap_or("-")));
            }
            let r = serve_commands(&mut conn);
            // Only the library-pair servers say goodbye (as they always have).
            if !matches!(refusals, Refusals::Fail) {
                conn.close();
            }
            match (r, &log) {
                (Err(e), Some(l)) => {
                    l(&format!("{peer}: {e:#}"));
                    Ok(())
                }
                (r, _) => r,
            }
        })?;
        Ok(Server {
            addr: workers.addr,
            workers,
            refusals: kept,
        })
    }

    /// The first error a worker met, if any.
    pub fn error(&self) -> Option<String> {
        self.workers.error()
    }

    /// The last refused handshake (with [`Refusals::Keep`]).
    pub fn refusal(&self) -> Option<String> {
        self.refusals.lock().unwrap().clone()
    }

    /// Blocks until interrupted (Ctrl-C).
    pub fn wait(&self) {
        self.workers.wait()
    }
}

// ---------------------------------------------------------------------------
// Handshakes

/// Why a resumed-handshake subject could not run against a server.
pub(super) const NOT_RESUMED: &str = "the server did not resume the session it issued (no ticket or PSK resumption)";
pub(super) const NO_TICKET: &str = "the server issued no session ticket (TLS 1.2 ticket or TLS 1.3 PSK), so there is nothing to resume";

/// Full or resumed handshakes, one TCP connection each, through any library.
pub(super) struct HandshakeProbe {
    client: Arc<dyn ClientConfig>,
    addr: SocketAddr,
    sni: Option<String>,
    timeout: Duration,
    resumed: bool,
    /// Loopback: wait for the server's byte, so its side of the handshake is done too.
    ack: bool,
    session: Option<Resumption>,
    pub(super) durations: Vec<f64>,
    /// What the first connection negotiated.
    pub(super) negotiated: Negotiated,
}

impl HandshakeProbe {
    /// Connects once (twice when resuming), before anything is timed; `check`
    /// sees what the first connection negotiated.
    pub(super) fn new(
        client: &Arc<dyn ClientConfig>,
        addr: SocketAddr,
        sni: Option<&str>,
        timeout: Duration,
        (resumed, ack): (bool, bool),
        check: impl FnOnce(&Negotiated) -> Result<()>,
    ) -> Result<Self> {
        let mut p = HandshakeProbe {
            client: client.clone(),
            addr,
            sni: sni.map(str::to_string),
            timeout,
            resumed,
            ack,
            session: None,
            durations: Vec::new(),
            negotiated: Default::default(),
        };
        p.negotiated = p.once()?;
        check(&p.negotiated)?;
        if resumed {
            p.once()?;
        }
        p.durations.clear();
        Ok(p)
    }

    pub(super) fn once(&mut self) -> Result<Negotiated> {
        let offer = if self.resumed { self.session.clone() } else { None };
        let (mut s, elapsed) = wire::timed_handshake(self.ack, || {
            self.client
                .connect(self.addr, self.sni.as_deref(), self.timeout, offer.as_ref(), false)
                .map_err(|e| anyhow!("{}: {e}", self.addr))
        })?;
        if self.resumed {
            if offer.is_some() && !s.resumed() {
                bail!("{NOT_RESUMED}");
            }
            // Loopback: the server's tickets came before its byte. A remote server's
            // TLS 1.3 tickets follow the handshake; the wait is part of the run's
            // wall time (handshakes/s), not of the handshake's latency.
            if !self.ack && !s.await_ticket(self.timeout) {
                bail!("{NO_TICKET}");
            }
            self.session = s.session();
        }
        let n = s.negotiated();
        s.close();
        self.durations.push(elapsed);
        Ok(n)
    }
}

impl super::OneHandshake for HandshakeProbe {
    fn handshake_once(&mut self) -> Result<()> {
        self.once().map(|_| ())
    }
}

impl Probe for HandshakeProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        super::handshakes(self, units)
    }
}

/// The size of the ClientHello record `client` sends (its 5-byte header
/// included): a listener on loopback reads the client's first record and hangs
/// up, so no handshake is completed and nothing is timed.
pub(super) fn client_hello_bytes(client: &Arc<dyn ClientConfig>, timeout: Duration) -> Result<u64> {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let c = client.clone();
    let hello = std::thread::spawn(move || {
        // Fails when the listener hangs up: only the bytes it sent matter.
        let _ = c.connect(addr, None, timeout, None, false);
    });
    let read = (|| -> Result<u64> {
        let (mut tcp, _) = listener.accept()?;
        tcp.set_read_timeout(Some(timeout))?;
        let mut header = [0u8; 5];
        tcp.read_exact(&mut header)?;
        if header[0] != 22 {
            bail!("the client's first record is not a handshake record (type {})", header[0]);
        }
        let len = u16::from_be_bytes([header[3], header[4]]) as usize;
        let mut body = vec![0u8; len];
        tcp.read_exact(&mut body)?;
        if body.first() != Some(&1) {
            bail!("the client's first handshake message is not a ClientHello");
        }
        Ok(5 + len as u64)
    })();
    let _ = hello.join();
    read
}

/// The ClientHello records a client sends in one full handshake with `server`:
/// how many (two after a HelloRetryRequest) and their bytes, headers included.
/// A relay on loopback passes every byte both ways and reads the client's
/// records up to its first encrypted one; the handshake is not timed.
pub(super) fn client_hellos(client: &Arc<dyn ClientConfig>, server: SocketAddr, timeout: Duration) -> Result<(u32, u64)> {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let c = client.clone();
    let handshake = std::thread::spawn(move || -> Result<()> {
        let mut conn = c.connect(addr, None, timeout, None, false).map_err(|e| anyhow!("{e}"))?;
        conn.close();
        Ok(())
    });
    let counted = (|| -> Result<(u32, u64)> {
        let (mut from_client, _) = listener.accept()?;
        let mut to_server = TcpStream::connect_timeout(&server, timeout)?;
        from_client.set_read_timeout(Some(timeout))?;
        to_server.set_read_timeout(Some(timeout))?;
        let (mut back_from, mut back_to) = (to_server.try_clone()?, from_client.try_clone()?);
        let back = std::thread::spawn(move || {
            let _ = std::io::copy(&mut back_from, &mut back_to);
            let _ = back_to.shutdown(Shutdown::Write);
        });
        let (mut count, mut bytes) = (0u32, 0u64);
        let mut header = [0u8; 5];
        while from_client.read_exact(&mut header).is_ok() {
            let mut body = vec![0u8; u16::from_be_bytes([header[3], header[4]]) as usize];
            from_client.read_exact(&mut body)?;
            to_server.write_all(&header)?;
            to_server.write_all(&body)?;
            if header[0] == 22 && body.first() == Some(&1) {
                count += 1;
                bytes += 5 + body.len() as u64;
            }
            if header[0] == 23 {
                break;
            }
        }
        let _ = std::io::copy(&mut from_client, &mut to_server);
        let _ = to_server.shutdown(Shutdown::Write);
        let _ = back.join();
        Ok((count, bytes))
    })();
    let done = handshake.join().map_err(|_| anyhow!("the relayed client panicked"))?;
    let counted = counted?;
    done.map_err(|e| anyhow!("the relayed handshake failed: {e:#}"))?;
    Ok(counted)
}

/// Each probe's handshake latencies, for `handshake_records`.
pub(super) fn durations(probes: &[HandshakeProbe]) -> Vec<&[f64]> {
    probes.iter().map(|p| p.durations.as_slice()).collect()
}

// ---------------------------------------------------------------------------
// Bulk

/// One long-lived connection with the bulk transport (`wire`'s protocol).
pub(super) type BulkProbe = wire::BulkProbe<Box<dyn Connection>>;

/// Connects with the bulk transport, lets `check` see what was negotiated, and
/// waits for the server's byte.
pub(super) fn bulk_probe(
    client: &dyn ClientConfig,
    addr: SocketAddr,
    timeout: Duration,
    (direction, write_size, verify): (Direction, usize, bool),
    check: impl FnOnce(&Negotiated) -> Result<()>,
) -> Result<BulkProbe> {
    let c = client
        .connect(addr, None, timeout, None, true)
        .map_err(|e| anyhow!("{addr}: {e}"))?;
    check(&c.negotiated())?;
    BulkProbe::new(c, direction, write_size, verify)
}

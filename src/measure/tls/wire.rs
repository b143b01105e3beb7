//! The loopback benchmark's wire protocol, shared by every TLS library pair
//! (`loopback.rs` for the default library, `pairs.rs` for any library and mixed pairs): the client's
//! bulk probe, the server's command loop, the in-process server's worker threads,
//! and the records made from what was measured. Everything here runs over any
//! `Read + Write` connection; handshakes and sessions stay with each library.
//!
//! After the handshake the server sends one byte. A bulk command is a `HEADER`-byte
//! header (op, total bytes, write size, verify flag); the data follows (upload) or
//! comes back (download); the server answers with a `TRAILER`-byte receipt: its CPU
//! nanoseconds for the command and, when asked, SHA-256 of the bytes it saw.

use crate::measure::engine::rounds::Sweep;
use crate::measure::engine::sampler::{over_slices, thread_cpu_time, Measurement, Probe, Sliced};
use crate::model::Summary;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use anyhow::{bail, Context, Result};
use openssl::sha::Sha256;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Which way the bulk bytes go. The wire protocol owns it: the command a client
/// sends names the direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Upload,
    Download,
}

impl Direction {
    pub fn label(self) -> &'static str {
        match self {
            Direction::Upload => "client-to-server",
            Direction::Download => "server-to-client",
        }
    }
}

/// Test hook: flips one plaintext byte after hashing it, so `--verify` must fail.
pub const TAMPER_ENV: &str = "CIPHERBENCH_TEST_TLS_TAMPER";

pub(crate) const OP_UPLOAD: u8 = b'U';
pub(crate) const OP_DOWNLOAD: u8 = b'D';
pub(crate) const HEADER: usize = 14;
pub(crate) const TRAILER: usize = 40;
/// What the bulk transport does (`backend::tls::BULK_SEND`, `BULK_RECV`: TLS
/// records, of the write size and 16 KiB at most, gathered into large `send(2)`
/// calls; large `recv(2)` calls, libssl's read-ahead off), for settings and reports.
pub(crate) const BULK_TRANSPORT: &str = "each write is sent as TLS records of up to 16 KiB (one record for a 16 KiB write); records are gathered into send(2) calls of up to 256 KiB; the receiver reads with recv(2) calls of up to 64 KiB";

// ---------------------------------------------------------------------------
// Server side

/// Serves benchmark commands on an established connection: one byte after the
/// handshake, then upload/download commands answered with a receipt (server CPU
/// time and, when asked, SHA-256 of the bytes). Returns when the client closes.
pub fn serve_commands<S: Read + Write>(s: &mut S) -> Result<()> {
    s.write_all(b"k")?;
    let mut buf = vec![0u8; 1 << 16];
    let mut data: Vec<u8> = Vec::new();
    loop {
        let mut h = [0u8; HEADER];
        match s.read(&mut h[..1]) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(_) => {}
        }
        s.read_exact(&mut h[1..])?;
        let cpu0 = thread_cpu_time();
        let n = u64::from_be_bytes(h[1..9].try_into().unwrap());
        let ws = u32::from_be_bytes(h[9..13].try_into().unwrap()) as usize;
        let mut hasher = (h[13] != 0).then(Sha256::new);
        match h[0] {
            OP_UPLOAD => {
                let mut left = n;
                while left > 0 {
                    let want = (buf.len() as u64).min(left) as usize;
                    let k = s.read(&mut buf[..want])?;
                    if k == 0 {
                        bail!("the client closed the connection {left} bytes short");
                    }
                    if let Some(hs) = hasher.as_mut() {
                        hs.update(&buf[..k]);
                    }
                    left -= k as u64;
                }
            }
            OP_DOWNLOAD => {
                // `--write-size` is 1 byte to 16 MiB; anything else is not our client.
                if ws == 0 || ws > 1 << 24 {
                    bail!("bad write size {ws}");
                }
                if data.len() != ws {
                    data = vec![0u8; ws];
                    openssl::rand::rand_bytes(&mut data)?;
                }
                let mut left = n;
                while left > 0 {
                    let k = (data.len() as u64).min(left) as usize;
                    s.write_all(&data[..k])?;
                    if let Some(hs) = hasher.as_mut() {
                        hs.update(&data[..k]);
                    }
                    left -= k as u64;
                }
            }
            op => bail!("unknown command byte {op:#x} (this port speaks cipherbench's benchmark protocol, not HTTP)"),
        }
        let cpu = thread_cpu_time().0 - cpu0.0;
        let mut t = [0u8; TRAILER];
        t[..8].copy_from_slice(&((cpu * 1e9) as u64).to_be_bytes());
        if let Some(hs) = hasher {
            t[8..].copy_from_slice(&hs.finish());
        }
        s.write_all(&t)?;
    }
}

/// The worker threads of an in-process server on a TCP listener, one per client
/// thread. Each accepts connections and hands them to `serve`; an error `serve`
/// returns is kept (unless the server is stopping). Dropping stops and joins them.
pub(crate) struct Workers {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    errors: Arc<Mutex<Vec<String>>>,
    handles: Vec<JoinHandle<()>>,
}

impl Workers {
    /// `serve` gets the accepted socket, the peer and the stop flag.
    pub fn start<F>(listener: TcpListener, workers: usize, serve: F) -> Result<Workers>
    where
        F: Fn(TcpStream, SocketAddr, &AtomicBool) -> Result<()> + Send + Sync + 'static,
    {
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let serve = Arc::new(serve);
        let mut handles = Vec::new();
        for _ in 0..workers.max(1) {
            let listener = listener.try_clone()?;
            let (serve, stop, errors) = (serve.clone(), stop.clone(), errors.clone());
            handles.push(std::thread::spawn(move || loop {
                let accepted = listener.accept();
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok((tcp, peer)) = accepted else {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                };
                if let Err(e) = serve(tcp, peer, &stop) {
                    if !stop.load(Ordering::SeqCst) {
                        errors.lock().unwrap().push(format!("{e:#}"));
                    }
                }
            }));
        }
        Ok(Workers {
            addr,
            stop,
            errors,
            handles,
        })
    }

    /// The first error a worker met, if any.
    pub fn error(&self) -> Option<String> {
        self.errors.lock().unwrap().first().cloned()
    }

    /// Blocks until interrupted (Ctrl-C).
    pub fn wait(&self) {
        while !crate::interrupt::requested() && self.handles.iter().any(|h| !h.is_finished()) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake every worker blocked in accept().
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.handles.iter().any(|h| !h.is_finished()) && Instant::now() < deadline {
            let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
            std::thread::sleep(Duration::from_millis(2));
        }
        for h in self.handles.drain(..) {
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Client side

/// Times a client handshake: from before `connect` until, with `ack` (loopback),
/// the server's byte has come, so its side of the handshake is done too.
pub(crate) fn timed_handshake<S: Read>(ack: bool, connect: impl FnOnce() -> Result<S>) -> Result<(S, f64)> {
    let t0 = Instant::now();
    let mut s = connect()?;
    if ack {
        let mut b = [0u8; 1];
        s.read_exact(&mut b).context("waiting for the server to finish its side")?;
    }
    Ok((s, t0.elapsed().as_secs_f64()))
}

/// One long-lived connection pushing `units` writes of the write size per run.
pub(crate) struct BulkProbe<S> {
    pub s: S,
    direction: Direction,
    chunk: Vec<u8>,
    rbuf: Vec<u8>,
    verify: bool,
    pub tamper: bool,
    /// Per run: server CPU seconds and bytes.
    pub history: Vec<(f64, f64)>,
}

impl<S: Read + Write> BulkProbe<S> {
    /// Takes an established connection and waits for the server's first byte.
    pub fn new(mut s: S, direction: Direction, write_size: usize, verify: bool) -> Result<Self> {
        let mut b = [0u8; 1];
        s.read_exact(&mut b).context("waiting for the server's first byte")?;
        let mut chunk = vec![0u8; write_size.max(1)];
        openssl::rand::rand_bytes(&mut chunk)?;
        Ok(BulkProbe {
            s,
            direction,
            chunk,
            rbuf: vec![0u8; write_size.max(1 << 16)],
            verify,
            tamper: std::env::var_os(TAMPER_ENV).is_some(),
            history: Vec::new(),
        })
    }
}

impl<S: Read + Write + Send> Probe for BulkProbe<S> {
    fn run(&mut self, units: u64) -> Result<f64> {
        let ws = self.chunk.len();
        let n = units * ws as u64;
        let mut h = [0u8; HEADER];
        h[0] = match self.direction {
            Direction::Upload => OP_UPLOAD,
            Direction::Download => OP_DOWNLOAD,
        };
        h[1..9].copy_from_slice(&n.to_be_bytes());
        h[9..13].copy_from_slice(&(ws as u32).to_be_bytes());
        h[13] = self.verify as u8;
        self.s.write_all(&h)?;
        let mut hasher = self.verify.then(Sha256::new);
        match self.direction {
            Direction::Upload => {
                for i in 0..units {
                    if let Some(hs) = hasher.as_mut() {
                        hs.update(&self.chunk);
                    }
                    if self.tamper && i == 0 {
                        self.chunk[0] ^= 1;
                        let r = self.s.write_all(&self.chunk);
                        self.chunk[0] ^= 1;
                        r?;
                    } else {
                        self.s.write_all(&self.chunk)?;
                    }
                }
            }
            Direction::Download => {
                let mut left = n;
                let mut first = true;
                while left > 0 {
                    let want = (self.rbuf.len() as u64).min(left) as usize;
                    let k = self.s.read(&mut self.rbuf[..want])?;
                    if k == 0 {
                        bail!("the server closed the connection {left} bytes short");
                    }
                    if self.tamper && first {
                        self.rbuf[0] ^= 1;
                        first = false;
                    }
                    if let Some(hs) = hasher.as_mut() {
                        hs.update(&self.rbuf[..k]);
                    }
                    left -= k as u64;
                }
            }
        }
        let mut t = [0u8; TRAILER];
        self.s.read_exact(&mut t).context("reading the server's receipt")?;
        if let Some(hs) = hasher {
            if hs.finish()[..] != t[8..] {
                bail!("SHA-256 mismatch: the bytes that came out of TLS on the far side are not the bytes that went in");
            }
        }
        let server_cpu = u64::from_be_bytes(t[..8].try_into().unwrap()) as f64 * 1e-9;
        self.history.push((server_cpu, n as f64));
        Ok(n as f64)
    }
}

// ---------------------------------------------------------------------------
// Records

pub(crate) fn percentile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let idx = ((s.len() as f64 - 1.0) * q).round() as usize;
    Some(s[idx.min(s.len() - 1)])
}

/// Handshakes per second and per-handshake latency (with p95). `durations` holds
/// each probe's latencies; only the sampled runs count (calibration and warm-up
/// left out).
pub(crate) fn handshake_records(kind: Kind, subject: Subject, durations: &[&[f64]], m: &Measurement) -> Vec<ResultRecord> {
    let mut out = vec![match m.wall() {
        Some(w) => ResultRecord::ok(kind, subject.clone(), Metric::HandshakesPerSec, &w, m.cpu().as_ref()),
        None => ResultRecord::not_ok(kind, subject.clone(), Metric::HandshakesPerSec, Status::Failed, "no samples"),
    }];
    let n = (m.units as usize).saturating_mul(m.samples.len());
    let lat: Vec<f64> = durations
        .iter()
        .flat_map(|d| d[d.len().saturating_sub(n)..].iter().copied())
        .collect();
    out.push(latency_record(kind, subject, &lat));
    out
}

/// The latency record of a handshake subject: its handshakes' own durations.
fn latency_record(kind: Kind, subject: Subject, lat: &[f64]) -> ResultRecord {
    let mut ls = subject;
    ls.mode = Some("latency".into());
    match Summary::of(lat) {
        Some(s) => {
            let mut r = ResultRecord::ok(kind, ls, Metric::Seconds, &s, None);
            r.p95 = percentile(lat, 0.95);
            r
        }
        None => ResultRecord::not_ok(kind, ls, Metric::Seconds, Status::Failed, "no samples"),
    }
}

/// Handshakes per second measured in slices (one value per slice, each with
/// its round's key from `sweep`: `ResultRecord::rounds`), then the latency of
/// the timed handshakes (`latencies`, every slice's).
pub(crate) fn sliced_handshake_records(kind: Kind, subject: Subject, m: &Sliced, latencies: &[f64], sweep: &Sweep) -> Vec<ResultRecord> {
    let rate = match m.wall() {
        Some(w) => {
            let mut r = ResultRecord::ok(kind, subject.clone(), Metric::HandshakesPerSec, &w, m.cpu().as_ref())
                .with_values(m.combined.values_wall());
            r.rounds = m.round_values(sweep);
            r
        }
        None => ResultRecord::not_ok(kind, subject.clone(), Metric::HandshakesPerSec, Status::Failed, "no samples"),
    };
    vec![rate, latency_record(kind, subject, latencies)]
}

/// Bytes per second, then client and server CPU seconds per GB.
pub(crate) fn bulk_records<S>(subject: Subject, probes: &[BulkProbe<S>], m: &Measurement) -> Vec<ResultRecord> {
    let kind = Kind::TlsBulk;
    let mut out = vec![match m.wall() {
        Some(w) => ResultRecord::ok(kind, subject.clone(), Metric::BytesPerSec, &w, m.cpu().as_ref()),
        None => ResultRecord::not_ok(kind, subject.clone(), Metric::BytesPerSec, Status::Failed, "no samples"),
    }];
    let client: Vec<f64> = m.samples.iter().filter(|s| s.work > 0.0).map(|s| s.cpu.0 / s.work * 1e9).collect();
    let server: Vec<f64> = server_samples(probes, m.samples.len())
        .iter()
        .filter(|(_, bytes)| *bytes > 0.0)
        .map(|(cpu, bytes)| cpu / bytes * 1e9)
        .collect();
    for (mode, values) in [("client-cpu-per-gb", client), ("server-cpu-per-gb", server)] {
        let mut s = subject.clone();
        s.mode = Some(mode.into());
        out.push(match Summary::of(&values) {
            Some(sum) => ResultRecord::ok(kind, s, Metric::Seconds, &sum, None),
            None => ResultRecord::not_ok(kind, s, Metric::Seconds, Status::Failed, "no samples"),
        });
    }
    out
}

/// Server CPU seconds and bytes of the last `n` runs (the sampled ones), summed over
/// the probes (threads) run by run; shorter when a probe has fewer runs.
pub(crate) fn server_samples<S>(probes: &[BulkProbe<S>], n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map_while(|i| {
            let (mut cpu, mut bytes) = (0.0, 0.0);
            for p in probes {
                let h = &p.history[p.history.len().saturating_sub(n)..];
                let (c, b) = h.get(i)?;
                cpu += c;
                bytes += b;
            }
            Some((cpu, bytes))
        })
        .collect()
}

/// `bulk_records` for a subject measured in slices (`sampler::interleave`): every
/// figure is over slices, one value per slice. Throughput is each slice's bytes
/// over its wall time; client CPU per GB its client CPU over its bytes; server CPU
/// per GB its server CPU (`server[i]`: the slice's sampled runs, from
/// `server_samples`) over its bytes. Fewer than `sampler::MIN_SLICES` slices widen
/// the intervals (`sampler::over_slices`).
pub(crate) fn sliced_bulk_records(subject: Subject, m: &Sliced, server: &[Vec<(f64, f64)>], sweep: &Sweep) -> Vec<ResultRecord> {
    let kind = Kind::TlsBulk;
    let mut out = vec![match m.wall() {
        Some(w) => {
            let mut r =
                ResultRecord::ok(kind, subject.clone(), Metric::BytesPerSec, &w, m.cpu().as_ref()).with_values(m.combined.values_wall());
            r.rounds = m.round_values(sweep);
            r
        }
        None => ResultRecord::not_ok(kind, subject.clone(), Metric::BytesPerSec, Status::Failed, "no samples"),
    }];
    let per_gb = |pairs: &[(f64, f64)]| -> Vec<f64> {
        pairs
            .iter()
            .filter(|(_, bytes)| *bytes > 0.0)
            .map(|(cpu, bytes)| cpu / bytes * 1e9)
            .collect()
    };
    let total = |pairs: &[(f64, f64)]| -> (f64, f64) { pairs.iter().fold((0.0, 0.0), |(c, b), (x, y)| (c + x, b + y)) };
    let client: Vec<Vec<(f64, f64)>> = m
        .slices
        .iter()
        .map(|sl| sl.samples.iter().map(|s| (s.cpu.0, s.work)).collect())
        .collect();
    for (mode, slices) in [("client-cpu-per-gb", client.as_slice()), ("server-cpu-per-gb", server)] {
        let per_slice = per_gb(&slices.iter().map(|sl| total(sl)).collect::<Vec<_>>());
        let within: Vec<Vec<f64>> = slices.iter().map(|sl| per_gb(sl)).collect();
        let mut s = subject.clone();
        s.mode = Some(mode.into());
        out.push(match over_slices(&per_slice, &within) {
            Some(sum) => ResultRecord::ok(kind, s, Metric::Seconds, &sum, None).with_values(per_slice),
            None => ResultRecord::not_ok(kind, s, Metric::Seconds, Status::Failed, "no samples"),
        });
    }
    out
}

/// The records of a run, or one failed record per metric with the error.
pub(crate) fn record_or_fail(
    session: &mut crate::measure::sink::Measurements,
    r: Result<Vec<ResultRecord>>,
    subject: &Subject,
    metrics: &[(Metric, Option<&str>)],
    kind: Kind,
) -> Result<()> {
    match r {
        Ok(rs) => {
            for r in rs {
                session.record(r)?;
            }
        }
        Err(e) => {
            for (metric, mode) in metrics {
                let mut s = subject.clone();
                s.mode = mode.map(str::to_string);
                session.record(ResultRecord::not_ok(kind, s, *metric, Status::Failed, format!("{e:#}")))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.95), Some(95.0));
        assert_eq!(percentile(&v, 0.5), Some(51.0));
        assert_eq!(percentile(&[], 0.5), None);
    }
}

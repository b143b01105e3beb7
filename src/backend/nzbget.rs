//! A private NZBGet: the system binary in server mode (`nzbget -c CONF -s`, in
//! the foreground), with its own configuration, queue and logs in a private
//! temporary directory, its control port (JSON-RPC) on 127.0.0.1 and nothing else
//! of the user's NZBGet. NZBGet cannot bind port 0, so it is started on a random
//! port above 20000 and below the kernel's ephemeral range, and started again on
//! another one when it says "Address already in use", a bounded number of times.
//!
//! It is there to run NZBGet's own server test (`testserver`, a real connection
//! and handshake) with the lines under test: `OPENSSL_CONF` for the OpenSSL
//! configuration NZBGet alone reads, and the ServerX.Cipher value.
//!
//! `Drop` stops it (SIGTERM, then SIGKILL after 3 s, its children too) and
//! removes its directory, on every path: a normal end, an error, a panic. When
//! cipherbench is killed outright, NZBGet gets SIGTERM from the kernel (its
//! parent-death signal); only its temporary directory then stays behind.

use super::process::{descendants, reap, signal};
use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How many control ports are tried before giving up.
const TRIES: usize = 8;

/// What NZBGet says when its control port is taken.
const TAKEN: &str = "Address already in use";

/// A running private NZBGet; dropping it stops it and removes its directory.
pub struct PrivateNzbget {
    child: Child,
    port: u16,
    /// Its configuration, queue and logs: removed when it drops.
    _dir: tempfile::TempDir,
}

impl PrivateNzbget {
    /// Starts `binary` with `openssl_conf` as its `OPENSSL_CONF` (none: the
    /// variable removed, as a service runs it), up within `within`.
    pub fn start(binary: &Path, openssl_conf: Option<&Path>, within: Duration) -> Result<PrivateNzbget> {
        let end = Instant::now() + within;
        for _ in 0..TRIES {
            let dir = tempfile::Builder::new().prefix("cipherbench-nzbget-").tempdir()?;
            let port = candidate();
            let conf = dir.path().join("nzbget.conf");
            std::fs::write(&conf, config(dir.path(), port)).with_context(|| format!("cannot write {}", conf.display()))?;
            let log = dir.path().join("stdout.log");
            let out = std::fs::File::create(&log)?;
            let mut cmd = Command::new(binary);
            cmd.arg("-c").arg(&conf).arg("-s").env_remove("OPENSSL_CONF");
            if let Some(c) = openssl_conf {
                cmd.env("OPENSSL_CONF", c);
            }
            // SAFETY: between fork and exec only prctl runs, a plain system call.
            // NZBGet then gets SIGTERM when the thread that started it ends,
            // however it ends (a forced exit included), and is never left behind.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                    Ok(())
                });
            }
            let child = cmd
                .stdin(Stdio::null())
                .stdout(out.try_clone()?)
                .stderr(out)
                .spawn()
                .with_context(|| format!("cannot start {}", binary.display()))?;
            // From here on Drop stops it and removes its directory, whatever happens.
            let mut n = PrivateNzbget { child, port, _dir: dir };
            let said = || std::fs::read_to_string(&log).unwrap_or_default();
            loop {
                if said().contains(TAKEN) {
                    break;
                }
                if let Ok(Some(st)) = n.child.try_wait() {
                    bail!("nzbget exited ({st}) before it answered; it said: {}", said().trim());
                }
                // Its own answer (a version), on a port it did not say was taken.
                if let Ok(v) = n.rpc("version", json!([]), Duration::from_secs(2)) {
                    if v.is_string() && !said().contains(TAKEN) {
                        return Ok(n);
                    }
                }
                if Instant::now() >= end {
                    bail!(
                        "nzbget did not answer on 127.0.0.1:{port} within {within:?}; it said: {}",
                        said().trim()
                    );
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            // Taken: this one stops (Drop), the next try takes another port.
        }
        Err(anyhow!("nzbget: {TRIES} control ports in a row were taken"))
    }

    /// JSON-RPC `method(params)`: its `result`.
    pub fn rpc(&self, method: &str, params: Value, timeout: Duration) -> Result<Value> {
        let body = json!({"method": method, "params": params}).to_string();
        let mut s = TcpStream::connect_timeout(&(std::net::Ipv4Addr::LOCALHOST, self.port).into(), timeout)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        write!(
            s,
            "POST /jsonrpc HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )?;
        let mut out = Vec::new();
        s.take(1 << 20).read_to_end(&mut out)?;
        let out = String::from_utf8_lossy(&out);
        let (_, json) = out.split_once("\r\n\r\n").ok_or_else(|| anyhow!("not an HTTP answer"))?;
        let v: Value = serde_json::from_str(json).context("NZBGet's answer is not JSON")?;
        v.get("result")
            .cloned()
            .ok_or_else(|| anyhow!("NZBGet answered without a result: {v}"))
    }

    /// NZBGet's server test (`testserver`) against `host:port` over TLS with
    /// ServerX.Cipher `cipher`: `Ok(None)` when it passed, `Ok(Some(what NZBGet
    /// said))` when it failed.
    pub fn test_server(&self, host: &str, port: u16, cipher: &str, timeout: Duration) -> Result<Option<String>> {
        let secs = timeout.as_secs().max(1);
        let r = self.rpc(
            "testserver",
            json!([host, port, "", "", true, cipher, secs]),
            timeout + Duration::from_secs(5),
        )?;
        match r.as_str() {
            Some("") => Ok(None),
            Some(e) => Ok(Some(e.to_string())),
            None => bail!("testserver answered {r}"),
        }
    }
}

impl Drop for PrivateNzbget {
    fn drop(&mut self) {
        let kids = descendants(self.child.id());
        signal(self.child.id(), libc::SIGTERM);
        reap(&mut self.child, &kids);
    }
}

/// A control port to try (see the module doc).
fn candidate() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
        .filter(|&l| l > 21000)
        .unwrap_or(32768);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    h.write_u32(std::process::id());
    (20000 + (h.finish() % u64::from(low - 20000)) as u32) as u16
}

/// The configuration: everything in `dir`, the control port on 127.0.0.1 without
/// a password, no news server of its own, logs to the file only.
fn config(dir: &Path, port: u16) -> String {
    let m = dir.display();
    format!(
        "MainDir={m}\nDestDir={m}/dst\nInterDir={m}/inter\nNzbDir={m}/nzb\nQueueDir={m}/queue\nTempDir={m}/tmp\n\
         ScriptDir={m}/scripts\nLockFile={m}/nzbget.lock\nLogFile={m}/nzbget.log\nWebDir=\n\
         ControlIP=127.0.0.1\nControlPort={port}\nControlUsername=\nControlPassword=\nRestrictedUsername=\n\
         AddUsername=\nSecureControl=no\nOutputMode=log\nUpdateCheck=none\nWriteLog=append\nNzbDirInterval=0\n"
    )
}

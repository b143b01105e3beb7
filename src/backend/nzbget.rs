//! A private NZBGet: the system binary in server mode (`nzbget -c CONF -s`, in
//! the foreground), with its own configuration, queue and logs in a private
//! temporary directory, its control port (JSON-RPC) on 127.0.0.1 and nothing else
//! of the user's NZBGet. NZBGet cannot bind port 0, so it is started on a random
//! port above 20000 and below the kernel's ephemeral range, and started again on
//! another one when it says "Address already in use", a bounded number of times.
//!
//! It is there to run NZBGet's own server test (`testserver`, a real connection
//! and handshake) with the lines under test: `OPENSSL_CONF` for the OpenSSL
//! configuration NZBGet alone reads, and the ServerX.Cipher value; and, with a
//! news server of its own ([`Download`]: Server1), to download
//! NZBs through it (`append`, then its `history`), as `check` measures NZBGet's
//! gain (`measure::tls::nzbget`).
//!
//! `Drop` stops it (SIGTERM, then SIGKILL after 3 s, its children too) and
//! removes its directory, on every path: a normal end, an error, a panic. When
//! cipherbench is killed outright, NZBGet gets SIGKILL from the kernel (its
//! parent-death signal); only its temporary directory (`cipherbench-nzbget-*`,
//! with the owner's pid in it) then stays behind, and the next start removes
//! every such directory whose owner is gone ([`sweep_leftovers`]), as
//! `backend::nginx` does.

use super::process::{descendants, reap, signal, OWNER};
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

/// How its private directories are named in the temporary directory.
const PREFIX: &str = "cipherbench-nzbget-";

/// The news server a downloading NZBGet uses as its Server1.
#[derive(Debug, Clone, Copy)]
pub struct Download<'a> {
    /// On 127.0.0.1, over TLS.
    pub port: u16,
    /// Server1.Cipher.
    pub cipher: &'a str,
    /// Server1.Connections (at least one).
    pub connections: usize,
}

/// What one download ended as, from NZBGet's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Downloaded {
    /// NZBGet's own verdict: `SUCCESS/HEALTH`, `FAILURE/...`.
    pub status: String,
    /// Articles downloaded and decoded, and those that failed.
    pub success_articles: u64,
    pub failed_articles: u64,
    /// The decoded size NZBGet counts.
    pub file_bytes: u64,
    /// Where it put the files.
    pub dest: std::path::PathBuf,
}

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
        Self::start_with(binary, openssl_conf.map(OpensslConf::Path), None, within)
    }

    /// Starts `binary` that downloads from `server`, with the OpenSSL
    /// configuration `openssl_conf` (its text, written into its own directory),
    /// up within `within`.
    pub fn downloading(binary: &Path, openssl_conf: Option<&str>, server: Download, within: Duration) -> Result<PrivateNzbget> {
        Self::start_with(binary, openssl_conf.map(OpensslConf::Text), Some(server), within)
    }

    fn start_with(binary: &Path, openssl_conf: Option<OpensslConf>, server: Option<Download>, within: Duration) -> Result<PrivateNzbget> {
        let within = crate::deadline::run().cap(within);
        let end = Instant::now() + within;
        sweep_leftovers(&std::env::temp_dir());
        for _ in 0..TRIES {
            let dir = tempfile::Builder::new().prefix(PREFIX).tempdir()?;
            std::fs::write(dir.path().join(OWNER), std::process::id().to_string())?;
            let port = candidate();
            let conf = dir.path().join("nzbget.conf");
            std::fs::write(&conf, config(dir.path(), port, server)).with_context(|| format!("cannot write {}", conf.display()))?;
            let openssl_conf = match openssl_conf {
                Some(OpensslConf::Text(t)) => {
                    let p = dir.path().join("openssl.cnf");
                    std::fs::write(&p, t).with_context(|| format!("cannot write {}", p.display()))?;
                    Some(p)
                }
                Some(OpensslConf::Path(p)) => Some(p.to_path_buf()),
                None => None,
            };
            let log = dir.path().join("stdout.log");
            let out = std::fs::File::create(&log)?;
            let mut cmd = Command::new(binary);
            cmd.arg("-c").arg(&conf).arg("-s").env_remove("OPENSSL_CONF");
            if let Some(c) = &openssl_conf {
                cmd.env("OPENSSL_CONF", c);
            }
            // SAFETY: between fork and exec only prctl and getppid run, plain
            // system calls. NZBGet is then killed when the thread that started it
            // ends, however it ends (a forced exit included). Where the owner died
            // between fork and prctl, the child never starts NZBGet at all.
            let owner = std::process::id() as libc::pid_t;
            unsafe {
                cmd.pre_exec(move || {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != owner {
                        libc::_exit(1);
                    }
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

    /// Adds `nzb` to the queue as `name` (`append`): its NZB id.
    pub fn append(&self, name: &str, nzb: &str, timeout: Duration) -> Result<i64> {
        let content = openssl::base64::encode_block(nzb.as_bytes());
        let r = self.rpc("append", json!([name, content, "", 0, false, false, "", 0, "SCORE", []]), timeout)?;
        match r.as_i64() {
            Some(id) if id > 0 => Ok(id),
            _ => bail!("nzbget refused the NZB {name}: append answered {r}"),
        }
    }

    /// Waits until NZB `id` is in the history (downloaded, or given up), polling
    /// every 10 ms until `deadline`: what the history says of it.
    pub fn wait_history(&self, id: i64, deadline: crate::deadline::Deadline) -> Result<Downloaded> {
        loop {
            let Some(slice) = deadline.slice() else {
                bail!("nzbget did not finish NZB {id} in time");
            };
            if let Some(d) = self
                .history(deadline.cap(Duration::from_secs(5)).max(slice))?
                .into_iter()
                .find(|(i, _)| *i == id)
            {
                return Ok(d.1);
            }
            std::thread::sleep(Duration::from_millis(10).min(slice));
        }
    }

    /// Every NZB in the history: its id and what the history says of it.
    pub fn history(&self, timeout: Duration) -> Result<Vec<(i64, Downloaded)>> {
        let h = self.rpc("history", json!([false]), timeout)?;
        let Some(v) = h.as_array() else {
            bail!("nzbget's history is not a list: {h}");
        };
        Ok(v.iter()
            .filter_map(|e| {
                let n = |k: &str| e[k].as_u64().unwrap_or(0);
                Some((
                    e["NZBID"].as_i64()?,
                    Downloaded {
                        status: e["Status"].as_str().unwrap_or("").to_string(),
                        success_articles: n("SuccessArticles"),
                        failed_articles: n("FailedArticles"),
                        file_bytes: (n("FileSizeHi") << 32) + n("FileSizeLo"),
                        dest: e["DestDir"].as_str().unwrap_or("").into(),
                    },
                ))
            })
            .collect())
    }

    /// The bytes of NZB `id` still to download (`listgroups`); `None` once it
    /// has left the queue.
    pub fn remaining(&self, id: i64, timeout: Duration) -> Result<Option<u64>> {
        let g = self.rpc("listgroups", json!([0]), timeout)?;
        Ok(g.as_array()
            .and_then(|v| v.iter().find(|e| e["NZBID"].as_i64() == Some(id)))
            .map(|e| {
                let n = |k: &str| e[k].as_u64().unwrap_or(0);
                (n("RemainingSizeHi") << 32) + n("RemainingSizeLo")
            }))
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

/// Where its OpenSSL configuration comes from.
#[derive(Clone, Copy)]
enum OpensslConf<'a> {
    Path(&'a Path),
    Text(&'a str),
}

/// The configuration: everything in `dir`, the control port on 127.0.0.1 without
/// a password, logs to the file only; no news server of its own, or `server` as
/// Server1 (TLS) with nothing after a download (no par check,
/// unpacking or duplicate check: the same NZB is downloaded round after round).
fn config(dir: &Path, port: u16, server: Option<Download>) -> String {
    let m = dir.display();
    let mut c = format!(
        "MainDir={m}\nDestDir={m}/dst\nInterDir={m}/inter\nNzbDir={m}/nzb\nQueueDir={m}/queue\nTempDir={m}/tmp\n\
         ScriptDir={m}/scripts\nLockFile={m}/nzbget.lock\nLogFile={m}/nzbget.log\nWebDir=\n\
         ControlIP=127.0.0.1\nControlPort={port}\nControlUsername=\nControlPassword=\nRestrictedUsername=\n\
         AddUsername=\nSecureControl=no\nOutputMode=log\nUpdateCheck=none\nWriteLog=append\nNzbDirInterval=0\n"
    );
    if let Some(s) = server {
        // A value with a line break would start another option: cut there.
        let cipher = s.cipher.lines().next().unwrap_or("");
        c.push_str(&format!(
            "ParCheck=manual\nUnpack=no\nHealthCheck=none\nDupeCheck=no\nKeepHistory=1\nArticleRetries=0\n\
             Server1.Active=yes\nServer1.Name=private\nServer1.Level=0\nServer1.Host=127.0.0.1\nServer1.Port={}\n\
             Server1.Username=\nServer1.Password=\nServer1.Encryption=yes\nServer1.Cipher={cipher}\n\
             Server1.Connections={}\nServer1.Retention=0\n",
            s.port,
            s.connections.max(1)
        ));
    }
    c
}

/// Removes what a cipherbench stopped outright left in `tmp`: private NZBGet
/// directories of this user whose owner (the pid in their owner file) is gone,
/// and an NZBGet still running with a configuration from one of them. Returns
/// how many directories were removed.
pub fn sweep_leftovers(tmp: &Path) -> usize {
    super::process::sweep_orphans(crate::privdir::own(tmp, PREFIX), |d| d.join("nzbget.conf"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory whose owner is gone is removed (with an NZBGet still running
    /// from it); one whose owner is alive, or of another prefix, stays.
    #[test]
    fn leftovers_of_dead_runs_are_swept() {
        let root = tempfile::tempdir().unwrap();
        let mut gone = Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let dead = root.path().join(format!("{PREFIX}dead"));
        let live = root.path().join(format!("{PREFIX}live"));
        let other = root.path().join("cipherbench-nginx-dead");
        for (d, pid) in [(&dead, gone.id()), (&live, std::process::id()), (&other, gone.id())] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join(OWNER), pid.to_string()).unwrap();
        }
        // A process left running "with" the dead directory's configuration.
        let conf = dead.join("nzbget.conf");
        std::fs::write(&conf, "").unwrap();
        let mut orphan = Command::new("sh").args(["-c", "sleep 30; true"]).arg(&conf).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(!super::super::process::processes_with_arg(&conf.to_string_lossy()).is_empty());
        assert_eq!(sweep_leftovers(root.path()), 1);
        assert!(!dead.exists() && live.exists() && other.exists());
        let waited = crate::deadline::wait_child_by(&mut orphan, false, crate::deadline::Deadline::after(Duration::from_secs(5)));
        assert!(matches!(waited, Ok(Some(_))), "the orphan still runs: {waited:?}");
    }
}

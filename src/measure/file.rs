//! File encryption: the symmetric-cipher study, done right.
//!
//! The study timed whole `openssl enc` processes, so process start-up and I/O were
//! mixed into times of 0.025 s. Here a file is streamed in fixed chunks through the
//! same engines `speed` uses (so memory stays constant for any file size), and the
//! timed region is exactly what the mode says:
//! - `memory`: only the cipher calls; reading the next chunk from the page cache
//!   and verifying the output are outside the clock;
//! - `disk`: reading the input, the cipher, writing the output file and `fsync`.
//!
//! Every pass is verified: the output is decrypted (or the decryption compared)
//! and its SHA-256 must equal the original's.

use crate::backend::openssl::engine::{AeadKind, CipherEngine, Direction};
use crate::backend::openssl::first_error;
use crate::measure::engine::sampler::{thread_cpu_time, Probe};
use crate::measure::primitive::{Class, Fetched, Op, Primitive};
use crate::units::Seconds;
use anyhow::{anyhow, bail, Context, Result};
use openssl::cipher::Cipher;
use openssl::sha::Sha256;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Where the timed region ends (an option of `file --mode`).
pub use crate::options::IoMode;

/// XTS encrypts independent data units (disk sectors) with the unit number as tweak.
pub const XTS_UNIT: usize = 4096;

/// Whether a primitive can encrypt a file as a stream. CCM needs the whole message
/// length up front, and digests and MACs do not encrypt.
pub fn supports(p: &Primitive) -> bool {
    matches!(
        p.class,
        Class::Cipher | Class::Aead(AeadKind::Gcm | AeadKind::Ocb | AeadKind::ChaChaPoly)
    )
}

/// `openssl enc` refuses AEADs and XTS.
pub fn cli_supports(p: &Primitive) -> bool {
    matches!(p.class, Class::Cipher) && !is_xts(p.name)
}

/// ECB and CBC pad like `openssl enc` (PKCS#7); stream modes and AEADs do not.
fn pads(name: &str) -> bool {
    name.ends_with("-ecb") || name.ends_with("-cbc") || matches!(name, "des-ede3" | "bf" | "cast5" | "idea" | "seed" | "rc2")
}

fn is_xts(name: &str) -> bool {
    name.ends_with("-xts")
}

/// Key material for one cipher.
#[derive(Clone)]
pub struct Keys {
    pub key: Vec<u8>,
    pub iv: Vec<u8>,
}

impl Keys {
    pub fn random(cipher: &Cipher) -> Keys {
        let mut key = vec![0u8; cipher.key_length()];
        let mut iv = vec![0u8; cipher.iv_length()];
        crate::backend::openssl::random_bytes(&mut key);
        crate::backend::openssl::random_bytes(&mut iv);
        Keys { key, iv }
    }

    /// PBKDF2-HMAC-SHA256 over the password, deriving key || iv as `openssl enc
    /// -pbkdf2` does.
    pub fn from_password(cipher: &Cipher, password: &str, salt: &[u8], iterations: usize) -> Result<Keys> {
        let (kl, il) = (cipher.key_length(), cipher.iv_length());
        let mut out = vec![0u8; kl + il];
        openssl::pkcs5::pbkdf2_hmac(
            password.as_bytes(),
            salt,
            iterations,
            openssl::hash::MessageDigest::sha256(),
            &mut out,
        )
        .map_err(|e| anyhow!("PBKDF2: {}", first_error(&e)))?;
        Ok(Keys {
            key: out[..kl].to_vec(),
            iv: out[kl..].to_vec(),
        })
    }
}

/// A keyed, restartable file cipher in one direction: plain stream, XTS by
/// sectors, or streamed AEAD with a final tag.
struct FileCipher {
    engine: CipherEngine,
    name: &'static str,
    aead: bool,
    key: Vec<u8>,
    iv: Vec<u8>,
    /// PKCS#7 padding (ECB/CBC), re-applied after every restart.
    pad: bool,
    /// Number of the next XTS sector (XTS only).
    sector: u64,
}

impl FileCipher {
    fn new(p: &Primitive, cipher: &Cipher, dir: Direction, keys: &Keys) -> Result<FileCipher> {
        let err = |e: openssl::error::ErrorStack| anyhow!("{}: {}", p.name, first_error(&e));
        let aead = match p.class {
            Class::Aead(k) => Some(k),
            _ => None,
        };
        let iv = (!keys.iv.is_empty()).then_some(&keys.iv[..]);
        let engine = CipherEngine::new(cipher, aead, dir, &keys.key, iv, 16).map_err(err)?;
        Ok(FileCipher {
            engine,
            name: p.name,
            aead: aead.is_some(),
            key: keys.key.clone(),
            iv: keys.iv.clone(),
            pad: pads(p.name),
            sector: 0,
        })
    }

    fn slack(&self) -> usize {
        self.engine.slack().max(16)
    }

    /// Starts a new file.
    fn begin(&mut self) -> Result<()> {
        self.sector = 0;
        // Without an IV (RC4, ECB) only re-keying restarts the stream.
        let (key, iv) = match self.iv.is_empty() {
            true => (Some(&self.key[..]), None),
            false => (None, Some(&self.iv[..])),
        };
        self.engine
            .restart(key, iv)
            .map_err(|e| anyhow!("{}: {}", self.name, first_error(&e)))?;
        // Re-initialising resets the provider's padding flag.
        self.engine.set_padding(self.pad);
        Ok(())
    }

    /// Processes `input` into `out` (out of place: padded decryption holds a block
    /// back). Returns the bytes written. XTS callers pass whole sectors (the chunk
    /// size is a multiple of the sector).
    fn update(&mut self, input: &[u8], out: &mut [u8]) -> Result<usize> {
        let err = |e: openssl::error::ErrorStack| anyhow!("{}: {}", self.name, first_error(&e));
        if is_xts(self.name) {
            let mut off = 0;
            while off < input.len() {
                let n = XTS_UNIT.min(input.len() - off);
                if n < 16 {
                    bail!("{}: the last XTS data unit is {n} bytes; XTS needs at least 16", self.name);
                }
                let mut tweak = [0u8; 16];
                tweak[..8].copy_from_slice(&self.sector.to_le_bytes());
                self.engine.restart(None, Some(&tweak)).map_err(err)?;
                self.engine.stream_into(&input[off..off + n], &mut out[off..]).map_err(err)?;
                self.sector += 1;
                off += n;
            }
            return Ok(input.len());
        }
        self.engine.stream_into(input, out).map_err(err)
    }

    /// Ends the file: flushes padding, and produces (encrypt) or checks (decrypt)
    /// the AEAD tag. Returns bytes written to `out`.
    fn end(&mut self, out: &mut [u8], tag: &mut [u8; 16]) -> Result<usize> {
        let err = |e: openssl::error::ErrorStack| anyhow!("{}: {}", self.name, first_error(&e));
        if is_xts(self.name) {
            return Ok(0);
        }
        if self.aead {
            return self
                .engine
                .end_aead(out, tag)
                .map_err(|e| anyhow!("{}: authentication failed: {}", self.name, first_error(&e)));
        }
        self.engine.finish(out).map_err(err)
    }
}

/// Reads into `buf` until it is full or the file ends.
fn fill(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// What a path is, when it is not a regular file or a directory: devices, FIFOs
/// and sockets never end or block on open, so `file` refuses them up front.
pub fn special_kind(ft: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_char_device() {
        Some("a character device")
    } else if ft.is_block_device() {
        Some("a block device")
    } else if ft.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if ft.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// Opens an input for reading without ever blocking in `open(2)` (O_NONBLOCK,
/// which a FIFO would otherwise need a writer for), and checks on the open
/// file that it is a regular file (the path may have changed since `stat`).
pub fn open_input(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let ft = f.metadata()?.file_type();
    if let Some(kind) = special_kind(&ft) {
        bail!("{} is {kind}: give a regular file, or --size", path.display());
    }
    Ok(f)
}

/// SHA-256 of a file, read in chunks (stopping on Ctrl-C and at the run's deadline).
pub fn hash_file(path: &Path, chunk: usize) -> Result<[u8; 32]> {
    let mut f = open_input(path)?;
    let mut buf = vec![0u8; chunk];
    let mut h = Sha256::new();
    loop {
        check_interrupt()?;
        let n = fill(&mut f, &mut buf).with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finish())
}

/// Accumulates the time of the timed region across a pass.
#[derive(Default)]
struct Clock {
    wall: f64,
    cpu: f64,
}

impl Clock {
    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let (w0, c0) = (Instant::now(), thread_cpu_time());
        let out = f();
        self.wall += w0.elapsed().as_secs_f64();
        self.cpu += thread_cpu_time().0 - c0.0;
        out
    }
}

/// One cipher, operation and file: a unit of work is one whole pass over the file.
pub struct FileProbe {
    op: Op,
    mode: IoMode,
    input: PathBuf,
    size: u64,
    /// Encrypted copy of the input (disk-mode decryption reads it).
    encrypted: Option<PathBuf>,
    encrypted_tag: [u8; 16],
    output: PathBuf,
    enc: FileCipher,
    dec: FileCipher,
    /// Input, intermediate and output chunks (ciphers run out of place).
    inbuf: Vec<u8>,
    midbuf: Vec<u8>,
    outbuf: Vec<u8>,
    original: [u8; 32],
    timed: (Seconds, Seconds),
}

impl FileProbe {
    /// Prepares buffers and contexts; in disk mode, decryption first needs an
    /// encrypted copy, made here (untimed) in `workdir`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        p: &'static Primitive,
        fetched: &Fetched,
        op: Op,
        mode: IoMode,
        input: &Path,
        original: [u8; 32],
        keys: &Keys,
        workdir: &Path,
        chunk: usize,
    ) -> Result<FileProbe> {
        let Some(cipher) = crate::backend::openssl::primitives::cipher(fetched) else {
            bail!("{} is not a cipher", p.name);
        };
        let cipher: &Arc<Cipher> = &cipher;
        // XTS works in whole sectors; keep chunks sector-aligned.
        let chunk = if is_xts(p.name) {
            chunk.div_ceil(XTS_UNIT) * XTS_UNIT
        } else {
            chunk
        };
        let enc = FileCipher::new(p, cipher, Direction::Encrypt, keys)?;
        let dec = FileCipher::new(p, cipher, Direction::Decrypt, keys)?;
        let slack = enc.slack().max(dec.slack());
        let size = std::fs::metadata(input)
            .with_context(|| format!("cannot read {}", input.display()))?
            .len();
        let stem = format!("{}.{}", p.name, op.as_str());
        let mut probe = FileProbe {
            op,
            mode,
            input: input.to_path_buf(),
            size,
            encrypted: None,
            encrypted_tag: [0u8; 16],
            output: workdir.join(format!("{stem}.out")),
            enc,
            dec,
            inbuf: vec![0u8; chunk],
            midbuf: vec![0u8; chunk + 2 * slack],
            outbuf: vec![0u8; chunk + 4 * slack],
            original,
            timed: (Seconds(0.0), Seconds(0.0)),
        };
        if mode == IoMode::Disk && op == Op::Decrypt {
            let path = workdir.join(format!("{stem}.enc"));
            probe.encrypted_tag = probe.encrypt_to(&path, &mut Clock::default())?;
            probe.encrypted = Some(path);
        }
        Ok(probe)
    }

    /// Disk: input → encrypt → `path`, fsynced, all on `clock`. Returns the tag.
    fn encrypt_to(&mut self, path: &Path, clock: &mut Clock) -> Result<[u8; 16]> {
        let mut tag = [0u8; 16];
        let input = self.input.clone();
        clock.time(|| -> Result<()> {
            let mut inf = File::open(&input).with_context(|| format!("cannot read {}", input.display()))?;
            let mut out = File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
            self.enc.begin()?;
            loop {
                check_interrupt()?;
                let n = fill(&mut inf, &mut self.inbuf).with_context(|| format!("reading {}", input.display()))?;
                if n == 0 {
                    break;
                }
                let m = self.enc.update(&self.inbuf[..n], &mut self.midbuf)?;
                out.write_all(&self.midbuf[..m])
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            let m = self.enc.end(&mut self.midbuf, &mut tag)?;
            out.write_all(&self.midbuf[..m])
                .with_context(|| format!("writing {}", path.display()))?;
            out.sync_all().with_context(|| format!("writing {}", path.display()))?;
            Ok(())
        })?;
        Ok(tag)
    }

    /// Disk: `from` → decrypt → `to`, fsynced, on `clock`; returns the SHA-256 of
    /// the plaintext, hashed outside the clock.
    fn decrypt_to(&mut self, from: &Path, tag: &[u8; 16], to: &Path, clock: &mut Clock) -> Result<[u8; 32]> {
        let mut h = Sha256::new();
        let mut inf = clock
            .time(|| File::open(from))
            .with_context(|| format!("cannot read {}", from.display()))?;
        let mut out = clock
            .time(|| File::create(to))
            .with_context(|| format!("cannot write {}", to.display()))?;
        clock.time(|| self.dec.begin())?;
        loop {
            check_interrupt()?;
            let n = clock
                .time(|| fill(&mut inf, &mut self.inbuf))
                .with_context(|| format!("reading {}", from.display()))?;
            if n == 0 {
                break;
            }
            let m = clock.time(|| -> Result<usize> {
                let m = self.dec.update(&self.inbuf[..n], &mut self.outbuf)?;
                out.write_all(&self.outbuf[..m])
                    .with_context(|| format!("writing {}", to.display()))?;
                Ok(m)
            })?;
            h.update(&self.outbuf[..m]);
        }
        let mut t = *tag;
        let m = clock.time(|| self.dec.end(&mut self.outbuf, &mut t))?;
        clock
            .time(|| out.write_all(&self.outbuf[..m]))
            .with_context(|| format!("writing {}", to.display()))?;
        h.update(&self.outbuf[..m]);
        clock.time(|| out.sync_all()).with_context(|| format!("writing {}", to.display()))?;
        Ok(h.finish())
    }

    /// Memory: one pass that encrypts and decrypts each chunk in turn, timing only
    /// the operation under test; the plaintext that comes back is hashed untimed.
    fn memory_pass(&mut self, clock: &mut Clock) -> Result<[u8; 32]> {
        let timed_enc = self.op == Op::Encrypt;
        let mut inf = File::open(&self.input).with_context(|| format!("cannot read {}", self.input.display()))?;
        let mut h = Sha256::new();
        let mut tag = [0u8; 16];
        self.enc.begin()?;
        self.dec.begin()?;
        // Times `f` only when it is the operation under test.
        fn maybe<T>(timed: bool, clock: &mut Clock, f: impl FnOnce() -> T) -> T {
            if timed {
                clock.time(f)
            } else {
                f()
            }
        }
        loop {
            check_interrupt()?;
            let n = fill(&mut inf, &mut self.inbuf).with_context(|| format!("reading {}", self.input.display()))?;
            let last = n < self.inbuf.len();
            let mut c = if n > 0 {
                maybe(timed_enc, clock, || self.enc.update(&self.inbuf[..n], &mut self.midbuf))?
            } else {
                0
            };
            if last {
                let (enc, mid) = (&mut self.enc, &mut self.midbuf);
                c += maybe(timed_enc, clock, || enc.end(&mut mid[c..], &mut tag))?;
            }
            let p = if c > 0 {
                maybe(!timed_enc, clock, || self.dec.update(&self.midbuf[..c], &mut self.outbuf))?
            } else {
                0
            };
            h.update(&self.outbuf[..p]);
            if last {
                let (dec, out) = (&mut self.dec, &mut self.outbuf);
                let f = maybe(!timed_enc, clock, || dec.end(out, &mut tag))?;
                h.update(&self.outbuf[..f]);
                break;
            }
        }
        Ok(h.finish())
    }
}

/// Between chunks: Ctrl-C and the run's deadline stop a pass mid-file.
fn check_interrupt() -> Result<()> {
    if crate::interrupt::by_user() {
        return Err(crate::error::Interrupted { kept: 0 }.into());
    }
    if crate::deadline::run_expired() {
        return Err(crate::deadline::DeadlinePassed::new("reading a file").into());
    }
    Ok(())
}

/// How the private directory of a `file` run is named, in `--output-dir` or the
/// temporary directory.
const PREFIX: &str = "cipherbench-file-";
/// The file in it naming its owner process (see [`crate::privdir::owner_token`]).
const OWNER: &str = "owner";

/// Creates the private directory of a `file` run in `parent`: mode 0700, its
/// owner written in it, removed by `Drop` or, on a forced exit, by the
/// interrupt handler. Leftovers of runs killed outright (SIGKILL) are swept
/// first, as the SSH ones are.
pub fn private_dir(parent: &Path) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    sweep_leftovers(parent);
    let dir = tempfile::Builder::new().prefix(PREFIX).tempdir_in(parent)?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
    std::fs::write(dir.path().join(OWNER), crate::privdir::owner_token())?;
    crate::interrupt::remove_on_forced_exit(dir.path().to_path_buf());
    Ok(dir)
}

/// Removes private directories in `parent` of this user whose owner process is
/// gone. Directories of live runs, and those without an owner file yet, stay.
/// Returns how many were removed.
pub fn sweep_leftovers(parent: &Path) -> usize {
    crate::privdir::own(parent, PREFIX)
        .into_iter()
        .filter(|dir| std::fs::read_to_string(dir.join(OWNER)).is_ok_and(|t| crate::privdir::owner_gone(t.trim())))
        .filter(|dir| std::fs::remove_dir_all(dir).is_ok())
        .count()
}

impl Probe for FileProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        let mut clock = Clock::default();
        for _ in 0..units {
            let got = match (self.mode, self.op) {
                (IoMode::Memory, _) => self.memory_pass(&mut clock)?,
                (IoMode::Disk, Op::Encrypt) => {
                    let out = self.output.clone();
                    let tag = self.encrypt_to(&out, &mut clock)?;
                    // Verify untimed: decrypt what was written.
                    let check = self.output.with_extension("check");
                    let h = self.decrypt_to(&out, &tag, &check, &mut Clock::default())?;
                    let _ = std::fs::remove_file(&check);
                    h
                }
                (IoMode::Disk, _) => {
                    let from = self.encrypted.clone().expect("prepared in new");
                    let (tag, out) = (self.encrypted_tag, self.output.clone());
                    self.decrypt_to(&from, &tag, &out, &mut clock)?
                }
            };
            if got != self.original {
                bail!(
                    "verification failed: the decrypted output of {} differs from the original (SHA-256 {} vs {})",
                    self.input.display(),
                    hex::encode(got),
                    hex::encode(self.original)
                );
            }
        }
        self.timed = (Seconds(clock.wall), Seconds(clock.cpu));
        Ok((self.size * units) as f64)
    }

    fn timed_region(&self) -> Option<(Seconds, Seconds)> {
        Some(self.timed)
    }
}

/// The same job done the study's way: one `openssl enc` process per pass, timed
/// whole (start-up, reading, writing). CPU time is the child's user + system time.
pub struct CliProbe {
    args: Vec<String>,
    input: PathBuf,
    output: PathBuf,
    size: u64,
    timed: (Seconds, Seconds),
}

/// Children's CPU time so far (user + system).
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

impl CliProbe {
    /// `openssl enc -e|-d -ALG -K .. -iv ..`; decryption first makes an encrypted
    /// copy with the same command (untimed).
    pub fn new(p: &Primitive, op: Op, mode: IoMode, input: &Path, keys: &Keys, workdir: &Path) -> Result<CliProbe> {
        let mut args = vec!["enc".to_string()];
        if p.legacy {
            args.extend(["-provider", "legacy", "-provider", "default"].map(String::from));
        }
        args.push(format!("-{}", p.name));
        args.extend(["-K".to_string(), hex::encode(&keys.key)]);
        if !keys.iv.is_empty() {
            args.extend(["-iv".to_string(), hex::encode(&keys.iv)]);
        }
        let size = std::fs::metadata(input)?.len();
        let out_of = |suffix: &str| match mode {
            IoMode::Memory => PathBuf::from("/dev/null"),
            IoMode::Disk => workdir.join(format!("{}.cli.{suffix}", p.name)),
        };
        let mut probe = CliProbe {
            args,
            input: input.to_path_buf(),
            output: out_of(op.as_str()),
            size,
            timed: (Seconds(0.0), Seconds(0.0)),
        };
        if op == Op::Decrypt {
            let enc = workdir.join(format!("{}.cli.enc", p.name));
            let output = probe.output.clone();
            probe.output = enc.clone();
            probe.once("-e")?;
            probe.input = enc;
            probe.output = output;
            probe.args.insert(1, "-d".into());
        } else {
            probe.args.insert(1, "-e".into());
        }
        Ok(probe)
    }

    fn once(&self, dir: &str) -> Result<()> {
        let mut args = self.args.clone();
        args.insert(1, dir.to_string());
        let mut cmd = std::process::Command::new("openssl");
        cmd.args(&args).arg("-in").arg(&self.input).arg("-out").arg(&self.output);
        // Stopped at the run's deadline or on Ctrl-C, like every child.
        let said = crate::backend::process::output_by(&mut cmd, crate::deadline::run())
            .context("cannot run the openssl command (is the openssl package installed?)")?;
        let Some(said) = said else {
            check_interrupt()?;
            bail!("openssl {} was stopped", args.join(" "));
        };
        if !said.status.success() {
            bail!(
                "openssl {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&said.stderr).trim()
            );
        }
        Ok(())
    }
}

impl Probe for CliProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        let (w0, c0) = (Instant::now(), children_cpu());
        for _ in 0..units {
            check_interrupt()?;
            let mut cmd = std::process::Command::new("openssl");
            cmd.args(&self.args).arg("-in").arg(&self.input).arg("-out").arg(&self.output);
            // The run's deadline holds for the child too: it is killed there.
            let st = crate::backend::process::output_by(&mut cmd, crate::deadline::run())
                .context("cannot run the openssl command")?
                .ok_or_else(|| crate::deadline::DeadlinePassed::new(format!("openssl {}", self.args.join(" "))))?;
            if !st.status.success() {
                bail!(
                    "openssl {} failed ({}): {}",
                    self.args.join(" "),
                    crate::backend::process::describe_status(st.status),
                    crate::untrusted::shown(String::from_utf8_lossy(&st.stderr).trim())
                );
            }
        }
        self.timed = (Seconds(w0.elapsed().as_secs_f64()), Seconds(children_cpu() - c0));
        Ok((self.size * units) as f64)
    }

    fn timed_region(&self) -> Option<(Seconds, Seconds)> {
        Some(self.timed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::openssl::primitives::fetch;
    use crate::measure::primitive::{lookup, Availability};

    fn cipher_of(name: &str) -> (&'static Primitive, Arc<Cipher>) {
        let p = lookup(name).unwrap();
        match fetch(p) {
            Availability::Available(f) => (p, crate::backend::openssl::primitives::cipher(&f).expect("a cipher")),
            _ => panic!("{name} unavailable"),
        }
    }

    #[test]
    fn padded_round_trip_over_chunks_and_passes() {
        let (p, c) = cipher_of("aes-128-cbc");
        let keys = Keys::random(&c);
        let mut enc = FileCipher::new(p, &c, Direction::Encrypt, &keys).unwrap();
        let mut dec = FileCipher::new(p, &c, Direction::Decrypt, &keys).unwrap();
        for pass in 0..2 {
            enc.begin().unwrap();
            dec.begin().unwrap();
            let (mut mid, mut out, mut got) = (vec![0u8; 96], vec![0u8; 96], Vec::new());
            let mut tag = [0u8; 16];
            for chunk in 0..3u8 {
                let n = enc.update(&[chunk; 32], &mut mid).unwrap();
                let m = dec.update(&mid[..n], &mut out).unwrap();
                got.extend_from_slice(&out[..m]);
            }
            let t = enc.end(&mut mid, &mut tag).unwrap();
            assert_eq!(t, 16, "pass {pass}: PKCS#7 adds a whole block");
            let m = dec.update(&mid[..t], &mut out).unwrap();
            got.extend_from_slice(&out[..m]);
            let f = dec.end(&mut out, &mut tag).unwrap();
            got.extend_from_slice(&out[..f]);
            let want: Vec<u8> = (0..3u8).flat_map(|c| [c; 32]).collect();
            assert_eq!(got, want, "pass {pass}");
        }
    }
}

//! Primitive throughput: ciphers, AEADs, digests and MACs by block size.
//!
//! The candidates are a fixed catalogue of OpenSSL EVP names. The probe processes
//! one buffer per unit of work, in place, with contexts built before timing:
//! - plain ciphers continue one stream (`EVP_CipherUpdate` over and over), exactly
//!   what `openssl speed -evp` times;
//! - AEADs are timed per record the way TLS uses them: new nonce, 13-byte AAD,
//!   update, final and tag (decryption verifies the tag every time);
//! - digests and MACs hash one independent message per unit.
//!
//! That is the default library's work, built here from its fetched handles.
//! Every other library builds its own work in its folder under `backend/` and
//! hands the probe a timed loop (`backend::primitives::Source`): nothing here
//! names it.

use crate::backend::openssl::engine::{CipherEngine, DigestEngine, Direction};
use crate::backend::openssl::first_error;
use crate::backend::openssl::mac::MacCtx;
use crate::backend::openssl::record as openssl_record;
use crate::backend::primitives::TimedLoop;
use crate::backend::record::{cbc_record, check_cbc_record, random, records, Block};
use crate::measure::engine::sampler::Probe;
use crate::measure::pq::PqWork;
use anyhow::{anyhow, Result};

pub use crate::catalog::*;

pub use crate::backend::libraries::fetch as fetch_from;
pub use crate::backend::openssl::primitives::fetch;
pub use crate::backend::primitives::{Availability, Fetched};

pub use crate::backend::record::{AAD_LEN, NONCE_LEN};

enum Work {
    Stream {
        engine: CipherEngine,
        buf: Block,
    },
    /// A timed loop a library built: OpenSSL's AEAD records (as TLS seals or
    /// opens them), or any other library's work.
    Loop(Box<dyn TimedLoop>),
    Digest {
        engine: DigestEngine,
        buf: Block,
    },
    Mac {
        ctx: MacCtx,
        buf: Block,
        out: [u8; 64],
    },
    /// TLS 1.2 CBC records (OpenSSL): MAC, pad, fresh IV, encrypt — or decrypt
    /// out of place and verify the MAC.
    CbcRecord {
        engine: CipherEngine,
        mac: MacCtx,
        iv: Vec<u8>,
        buf: Block,
        ciphertext: Block,
        decrypt: bool,
    },
    /// ML-KEM and ML-DSA, per operation (`measure::pq`).
    Pq(PqWork),
}

/// The timed probe for one primitive, operation and buffer size.
pub struct PrimitiveProbe {
    work: Work,
    len: usize,
    /// Counted in operations (ML-KEM, ML-DSA), not bytes.
    per_op: bool,
}

impl PrimitiveProbe {
    /// Builds contexts and buffers for `op` on `len`-byte records with random keys.
    pub fn new(p: &Primitive, fetched: &Fetched, op: Op, len: usize) -> Result<PrimitiveProbe> {
        let err = |e: openssl::error::ErrorStack| anyhow!("{}: {}", p.name, first_error(&e));
        let work = match (p.class, fetched, op) {
            (Class::Cipher, Fetched::Cipher(c), Op::Encrypt | Op::Decrypt) => Self::cipher_work(p, c, op, len)?,
            (Class::CbcHmac(d), Fetched::Cipher(c), Op::Encrypt | Op::Decrypt) => Self::cbc_hmac_work(p, c, d, op, len)?,
            (Class::Aead(kind), Fetched::Cipher(c), Op::Encrypt | Op::Decrypt) => Self::aead_work(p, c, kind, op, len)?,
            (Class::Digest, Fetched::Digest(md), Op::Digest) => Work::Digest {
                engine: DigestEngine::new(md.clone()).map_err(err)?,
                buf: Block::random(len),
            },
            (Class::Hmac(d), Fetched::Mac, Op::Mac) => Work::Mac {
                ctx: MacCtx::hmac(d, &random(32)).map_err(err)?,
                buf: Block::random(len),
                out: [0u8; 64],
            },
            (Class::Poly1305, Fetched::Mac, Op::Mac) => Work::Mac {
                ctx: MacCtx::poly1305(&random(32)).map_err(err)?,
                buf: Block::random(len),
                out: [0u8; 64],
            },
            (_, Fetched::Library(source), _) => Work::Loop(source.make(p, op, len)?),
            (Class::Kem(_) | Class::Signature(_), Fetched::Pkey(alg), _) => Work::Pq(PqWork::new(p.class, alg, op)?),
            _ => anyhow::bail!("{} has no {} operation", p.name, op.as_str()),
        };
        Ok(PrimitiveProbe {
            work,
            len,
            per_op: p.class.per_operation(),
        })
    }

    /// A plain cipher continuing one stream.
    fn cipher_work(p: &Primitive, c: &openssl::cipher::Cipher, op: Op, len: usize) -> Result<Work> {
        let err = |e: openssl::error::ErrorStack| anyhow!("{}: {}", p.name, first_error(&e));
        if p.name.ends_with("-xts") && len < 16 {
            anyhow::bail!("{}: XTS needs at least 16 bytes per data unit", p.name);
        }
        let dir = if op == Op::Encrypt {
            Direction::Encrypt
        } else {
            Direction::Decrypt
        };
        let key = random(c.key_length());
        let iv = random(c.iv_length());
        let engine = CipherEngine::new(c, None, dir, &key, (!iv.is_empty()).then_some(&iv[..]), 0).map_err(err)?;
        let buf = Block::random(len + engine.slack());
        Ok(Work::Stream { engine, buf })
    }

    /// TLS 1.2 CBC records with their HMAC; decryption gets a valid record first.
    fn cbc_hmac_work(p: &Primitive, c: &openssl::cipher::Cipher, d: &str, op: Op, len: usize) -> Result<Work> {
        let err = |e: openssl::error::ErrorStack| anyhow!("{}: {}", p.name, first_error(&e));
        let (key, iv) = (random(c.key_length()), random(c.iv_length()));
        let mut mac = MacCtx::hmac(d, &random(32)).map_err(err)?;
        let mut seal = CipherEngine::new(c, None, Direction::Encrypt, &key, Some(&iv), 0).map_err(err)?;
        let mut buf = Block::random(len + 64 + 32);
        let total = cbc_record(&mut buf, len, |m, out| mac.mac_message(m, out).map_err(err))?;
        if op == Op::Encrypt {
            Ok(Work::CbcRecord {
                engine: seal,
                mac,
                iv,
                buf,
                ciphertext: Block::zeroed(0),
                decrypt: false,
            })
        } else {
            seal.stream(&mut buf, total).map_err(err)?;
            let ciphertext = Block::copy_of(&buf[..total]);
            Ok(Work::CbcRecord {
                engine: CipherEngine::new(c, None, Direction::Decrypt, &key, Some(&iv), 0).map_err(err)?,
                mac,
                iv,
                buf,
                ciphertext,
                decrypt: true,
            })
        }
    }

    /// AEAD records as TLS seals them; opening gets a sealed record first.
    fn aead_work(p: &Primitive, c: &openssl::cipher::Cipher, kind: AeadKind, op: Op, len: usize) -> Result<Work> {
        let nonce = random(NONCE_LEN);
        let record = openssl_record::Record::new(c, kind, &random(c.key_length()), &nonce, &random(len))
            .map_err(|e| anyhow!("{}: {}", p.name, first_error(&e)))?;
        Ok(Work::Loop(records(record, &nonce, &random(AAD_LEN), op == Op::Decrypt)?))
    }

    /// The bytes the probe works on (for tests that prove the work is real).
    #[cfg(test)]
    pub fn buffer(&self) -> &[u8] {
        match &self.work {
            Work::Stream { buf, .. } | Work::Digest { buf, .. } | Work::Mac { buf, .. } => &buf[..self.len],
            Work::Loop(l) => l.buffer(),
            Work::CbcRecord { buf, .. } => &buf[..self.len],
            Work::Pq(w) => w.output(),
        }
    }

    /// Corrupts what a verifying probe checks (a sealed record, a CBC record's
    /// ciphertext): its next run must fail. False when it verifies nothing.
    #[cfg(test)]
    fn tamper(&mut self) -> bool {
        match &mut self.work {
            Work::Loop(l) => l.tamper(),
            Work::CbcRecord {
                ciphertext, decrypt: true, ..
            } => {
                ciphertext[0] ^= 1;
                true
            }
            _ => false,
        }
    }
}

impl Probe for PrimitiveProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        let len = self.len;
        match &mut self.work {
            Work::Pq(w) => w.run(units)?,
            Work::Loop(l) => l.run(units)?,
            work => work.run_openssl(units, len)?,
        }
        if self.per_op {
            // Operations, not bytes.
            return Ok(units as f64);
        }
        Ok((units as usize * len) as f64)
    }
}

impl Work {
    /// `units` records of OpenSSL work (the timed loop).
    #[inline(always)]
    fn run_openssl(&mut self, units: u64, len: usize) -> Result<()> {
        match self {
            Work::Stream { engine, buf } => {
                for _ in 0..units {
                    engine.stream(buf, len)?;
                }
            }
            Work::Digest { engine, buf } => {
                for _ in 0..units {
                    std::hint::black_box(engine.digest(&buf[..len])?);
                }
            }
            Work::Mac { ctx, buf, out } => {
                for _ in 0..units {
                    ctx.mac_message(&buf[..len], out)?;
                }
            }
            Work::CbcRecord {
                engine,
                mac,
                iv,
                buf,
                ciphertext,
                decrypt,
            } => {
                for _ in 0..units {
                    engine.restart(None, Some(iv))?;
                    if *decrypt {
                        engine.stream_into(ciphertext, buf)?;
                        let mut tag = [0u8; 64];
                        let n = mac.mac_message(&buf[..len], &mut tag)?;
                        check_cbc_record(buf, len, &tag[..n])?;
                    } else {
                        let total = cbc_record(buf, len, |m, out| Ok(mac.mac_message(m, out)?))?;
                        engine.stream(buf, total)?;
                    }
                }
            }
            _ => unreachable!("a library's loop or per-operation work"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::record::ALIGN;

    fn available(name: &str) -> (&'static Primitive, Fetched) {
        let p = lookup(name).unwrap();
        match fetch(p) {
            Availability::Available(f) => (p, f),
            Availability::Unavailable(why) => panic!("{name}: {why}"),
        }
    }

    #[test]
    fn lookup_is_case_insensitive_with_aliases() {
        assert_eq!(lookup("AES-128-GCM").unwrap().name, "aes-128-gcm");
        assert_eq!(lookup("3DES").unwrap().name, "des-ede3-cbc");
        assert_eq!(lookup("hmac(sha256)").unwrap().name, "hmac-sha256");
        assert!(lookup("aes-128-gcn").is_none());
    }

    #[test]
    fn catalog_names_are_unique() {
        let mut names: Vec<_> = CATALOG.iter().map(|p| p.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len());
    }

    /// The timed stream probe really encrypts: one unit over a known buffer equals
    /// what rust-openssl's independent `symm` path gives for the same key and IV.
    #[test]
    fn stream_probe_output_matches_independent_encryption() {
        let (p, f) = available("aes-128-cbc");
        let Fetched::Cipher(c) = &f else { panic!() };
        let key = [0x11u8; 16];
        let iv = [0x22u8; 16];
        let engine = CipherEngine::new(c, None, Direction::Encrypt, &key, Some(&iv), 0).unwrap();
        let mut probe = PrimitiveProbe {
            work: Work::Stream {
                engine,
                buf: Block::copy_of(&[0x33u8; 64 + 16]),
            },
            len: 64,
            per_op: false,
        };
        assert_eq!(probe.run(1).unwrap(), 64.0);
        let want = openssl::symm::encrypt(openssl::symm::Cipher::aes_128_cbc(), &key, Some(&iv), &[0x33u8; 64]).unwrap();
        assert_eq!(probe.buffer(), &want[..64]);
        let _ = p;
    }

    /// Every probe's data starts on a cache-line boundary, whatever the
    /// allocator hands out, so one run cannot differ from the next by alignment.
    #[test]
    fn probe_buffers_start_on_a_cache_line() {
        // Allocations of odd sizes in between shift what malloc returns next.
        let mut keep = Vec::new();
        for (i, (name, op)) in [
            ("aes-128-ctr", Op::Encrypt),
            ("aes-256-cbc", Op::Decrypt),
            ("aes-128-gcm", Op::Encrypt),
            ("aes-128-gcm", Op::Decrypt),
            ("chacha20-poly1305", Op::Encrypt),
            ("sha256", Op::Digest),
            ("hmac-sha256", Op::Mac),
        ]
        .into_iter()
        .enumerate()
        {
            keep.push(vec![0u8; 8 + 24 * i]);
            let (p, f) = available(name);
            for len in [16, 1024, 8192] {
                let probe = PrimitiveProbe::new(p, &f, op, len).unwrap();
                assert_eq!(probe.buffer().as_ptr() as usize % ALIGN, 0, "{name} {} {len}", op.as_str());
                assert_eq!(probe.buffer().len(), len);
            }
        }
    }

    /// Sealed records change with the nonce each unit (no work is skipped), and the
    /// decrypt probe keeps verifying a real tag.
    #[test]
    fn aead_probes_do_real_work() {
        let (p, f) = available("aes-128-gcm");
        let mut enc = PrimitiveProbe::new(p, &f, Op::Encrypt, 256).unwrap();
        enc.run(1).unwrap();
        let first = enc.buffer().to_vec();
        enc.run(1).unwrap();
        assert_ne!(first, enc.buffer(), "encrypting again in place must change the bytes");
        let mut dec = PrimitiveProbe::new(p, &f, Op::Decrypt, 256).unwrap();
        assert_eq!(dec.run(3).unwrap(), 768.0);
        assert!(dec.tamper());
        assert!(dec.run(1).is_err(), "a corrupted tag must fail verification");
    }

    #[test]
    fn every_default_primitive_builds_all_ops() {
        for p in CATALOG.iter().filter(|p| p.default) {
            if p.class.per_operation() && matches!(fetch(p), Availability::Unavailable(_)) {
                // Before OpenSSL 3.5 (measure::pq's tests check the reason).
                continue;
            }
            let (_, f) = available(p.name);
            let per_op = p.class.per_operation();
            for &op in p.class.ops() {
                let mut probe = PrimitiveProbe::new(p, &f, op, 64).unwrap();
                let want = if per_op { 2.0 } else { 128.0 };
                assert_eq!(probe.run(2).unwrap(), want, "{} {}", p.name, op.as_str());
            }
        }
    }

    /// Every registered library's default primitives build through the probe
    /// (each library's own loop behind `backend::primitives::Source`), count
    /// their bytes or operations, and a verifying probe (an AEAD's or a CBC
    /// record's decryption) fails once what it checks is corrupted.
    #[test]
    fn every_library_runs_its_primitives_through_the_probe() {
        let mut built = Vec::new();
        for e in crate::backend::libraries::ALL {
            let lib = crate::backend::libraries::named(e.name).unwrap();
            for p in CATALOG.iter().filter(|p| p.default || matches!(p.class, Class::CbcHmac(_))) {
                let Availability::Available(f) = fetch_from(p, lib) else { continue };
                for &op in p.class.ops() {
                    let mut probe = PrimitiveProbe::new(p, &f, op, 64).unwrap_or_else(|e| panic!("{}: {e:#}", lib.as_str()));
                    let want = if p.class.per_operation() { 2.0 } else { 128.0 };
                    assert_eq!(probe.run(2).unwrap(), want, "{} {} {}", lib.as_str(), p.name, op.as_str());
                    let verifies = op == Op::Decrypt && matches!(p.class, Class::Aead(_) | Class::CbcHmac(_));
                    if verifies {
                        assert!(probe.tamper(), "{} {}", lib.as_str(), p.name);
                        assert!(probe.run(1).is_err(), "{} {}: a corrupted record must fail", lib.as_str(), p.name);
                    }
                }
                built.push(format!("{} {}", lib.as_str(), p.name));
            }
        }
        // Every library has at least one (each is installed by make test).
        for e in crate::backend::libraries::ALL {
            assert!(
                built.iter().any(|b| b.starts_with(&format!("{} ", e.name))),
                "{}: {built:?}",
                e.name
            );
        }
    }

    /// TLS 1.2 CBC records round-trip in every library that has them, and a
    /// flipped ciphertext byte fails the MAC check: decryption verifies, it does
    /// not just run.
    #[test]
    fn cbc_hmac_records_verify() {
        let p = lookup("aes-128-cbc-hmac-sha1").unwrap();
        let mut checked = 0;
        for e in crate::backend::libraries::ALL {
            let lib = crate::backend::libraries::named(e.name).unwrap();
            let Availability::Available(f) = fetch_from(p, lib) else {
                assert_ne!(lib, Library::DEFAULT, "unavailable");
                continue;
            };
            let mut enc = PrimitiveProbe::new(p, &f, Op::Encrypt, 1000).unwrap();
            assert_eq!(enc.run(2).unwrap(), 2000.0);
            let mut dec = PrimitiveProbe::new(p, &f, Op::Decrypt, 1000).unwrap();
            assert_eq!(dec.run(2).unwrap(), 2000.0);
            assert!(dec.tamper(), "{}: not a CBC record probe", e.name);
            assert!(dec.run(1).is_err());
            checked += 1;
        }
        assert!(checked >= 2, "{checked} libraries");
    }

    #[test]
    fn xts_refuses_short_units() {
        let (p, f) = available("aes-128-xts");
        assert!(PrimitiveProbe::new(p, &f, Op::Encrypt, 8).is_err());
    }
}

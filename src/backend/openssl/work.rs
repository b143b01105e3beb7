//! OpenSSL's primitives as the probes time them, built from the handles
//! `primitives.rs` fetched:
//! - plain ciphers continue one stream (`EVP_CipherUpdate` over and over), exactly
//!   what `openssl speed -evp` times;
//! - AEADs are timed per record the way TLS uses them: new nonce, 13-byte AAD,
//!   update, final and tag (decryption verifies the tag every time; `record.rs`);
//! - TLS 1.2 CBC records are MACed, padded and enciphered under a fresh IV
//!   (decryption verifies the MAC);
//! - digests and MACs hash one independent message per unit;
//! - ML-KEM and ML-DSA run per operation (`pqwork.rs`).
//!
//! `primitives.rs` hands them to the probes behind the one seam every library
//! uses (`Source::make`).

use super::engine::{CipherEngine, DigestEngine, Direction};
use super::first_error;
use super::mac::MacCtx;
use super::pqwork::PqWork;
use crate::backend::primitives::TimedLoop;
use crate::backend::record::{cbc_record, check_cbc_record, random, records, Block, AAD_LEN, NONCE_LEN};
use crate::catalog::{AeadKind, Class, Op, Primitive};
use anyhow::{anyhow, Result};
use openssl::cipher::Cipher;
use openssl::md::Md;
use std::sync::Arc;

pub(crate) enum Work {
    Stream {
        engine: CipherEngine,
        buf: Block,
    },
    Digest {
        engine: DigestEngine,
        buf: Block,
    },
    Mac {
        ctx: MacCtx,
        buf: Block,
        out: [u8; 64],
    },
    /// TLS 1.2 CBC records: MAC, pad, fresh IV, encrypt — or decrypt out of
    /// place and verify the MAC.
    CbcRecord {
        engine: CipherEngine,
        mac: MacCtx,
        iv: Vec<u8>,
        buf: Block,
        ciphertext: Block,
        decrypt: bool,
    },
    /// ML-KEM and ML-DSA, per operation.
    Pq(PqWork),
}

/// OpenSSL's timed work on units of `len` bytes.
pub(crate) struct Loop {
    pub(crate) work: Work,
    pub(crate) len: usize,
}

/// What OpenSSL fetched for a primitive: a cipher (plain, AEAD or a CBC
/// record's), a digest, an EVP_MAC, or a key type (ML-KEM, ML-DSA) by name.
#[derive(Clone)]
pub enum Handle {
    Cipher(Arc<Cipher>),
    Digest(Arc<Md>),
    Mac,
    Pkey(&'static str),
}

/// OpenSSL work for `op` on `len`-byte records with random keys.
pub fn make(p: &Primitive, h: &Handle, op: Op, len: usize) -> Result<Box<dyn TimedLoop>> {
    let err = |e: openssl::error::ErrorStack| anyhow!("{}: {}", p.name, first_error(&e));
    let work = match (p.class, h, op) {
        (Class::Cipher, Handle::Cipher(c), Op::Encrypt | Op::Decrypt) => cipher_work(p, c, op, len)?,
        (Class::CbcHmac(d), Handle::Cipher(c), Op::Encrypt | Op::Decrypt) => cbc_hmac_work(p, c, d, op, len)?,
        (Class::Aead(kind), Handle::Cipher(c), Op::Encrypt | Op::Decrypt) => return aead_work(p, c, kind, op, len),
        (Class::Digest, Handle::Digest(md), Op::Digest) => Work::Digest {
            engine: DigestEngine::new(md.clone()).map_err(err)?,
            buf: Block::random(len),
        },
        (Class::Hmac(d), Handle::Mac, Op::Mac) => Work::Mac {
            ctx: MacCtx::hmac(d, &random(32)).map_err(err)?,
            buf: Block::random(len),
            out: [0u8; 64],
        },
        (Class::Poly1305, Handle::Mac, Op::Mac) => Work::Mac {
            ctx: MacCtx::poly1305(&random(32)).map_err(err)?,
            buf: Block::random(len),
            out: [0u8; 64],
        },
        (Class::Kem(_) | Class::Signature(_), Handle::Pkey(alg), _) => Work::Pq(PqWork::new(p.class, alg, op)?),
        _ => anyhow::bail!("{} has no {} operation", p.name, op.as_str()),
    };
    Ok(Box::new(Loop { work, len }))
}

/// A plain cipher continuing one stream.
fn cipher_work(p: &Primitive, c: &Cipher, op: Op, len: usize) -> Result<Work> {
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
fn cbc_hmac_work(p: &Primitive, c: &Cipher, d: &str, op: Op, len: usize) -> Result<Work> {
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
fn aead_work(p: &Primitive, c: &Cipher, kind: AeadKind, op: Op, len: usize) -> Result<Box<dyn TimedLoop>> {
    let nonce = random(NONCE_LEN);
    let record = super::record::Record::new(c, kind, &random(c.key_length()), &nonce, &random(len))
        .map_err(|e| anyhow!("{}: {}", p.name, first_error(&e)))?;
    records(record, &nonce, &random(AAD_LEN), op == Op::Decrypt)
}

impl TimedLoop for Loop {
    /// `units` units of OpenSSL work (the timed loop).
    fn run(&mut self, units: u64) -> Result<()> {
        let len = self.len;
        match &mut self.work {
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
            Work::Pq(w) => w.run(units)?,
        }
        Ok(())
    }
    #[cfg(test)]
    fn buffer(&self) -> &[u8] {
        match &self.work {
            Work::Stream { buf, .. } | Work::Digest { buf, .. } | Work::Mac { buf, .. } | Work::CbcRecord { buf, .. } => &buf[..self.len],
            Work::Pq(w) => w.output(),
        }
    }
    #[cfg(test)]
    fn tamper(&mut self) -> bool {
        match &mut self.work {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::primitives::{Availability, Source};
    use crate::backend::record::ALIGN;
    use crate::catalog::lookup;

    fn available(name: &str) -> (&'static Primitive, Arc<dyn Source>) {
        let p = lookup(name).unwrap();
        match super::super::primitives::fetch(p) {
            Availability::Available(s) => (p, s),
            Availability::Unavailable(why) => panic!("{name}: {why}"),
        }
    }

    /// The timed stream loop really encrypts: one unit over a known buffer equals
    /// what rust-openssl's independent `symm` path gives for the same key and IV.
    #[test]
    fn stream_probe_output_matches_independent_encryption() {
        let c = super::super::engine::fetch_cipher("aes-128-cbc").unwrap();
        let key = [0x11u8; 16];
        let iv = [0x22u8; 16];
        let engine = CipherEngine::new(&c, None, Direction::Encrypt, &key, Some(&iv), 0).unwrap();
        let mut probe = Loop {
            work: Work::Stream {
                engine,
                buf: Block::copy_of(&[0x33u8; 64 + 16]),
            },
            len: 64,
        };
        probe.run(1).unwrap();
        let want = openssl::symm::encrypt(openssl::symm::Cipher::aes_128_cbc(), &key, Some(&iv), &[0x33u8; 64]).unwrap();
        assert_eq!(probe.buffer(), &want[..64]);
    }

    /// Every loop's data starts on a cache-line boundary, whatever the
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
            let (p, s) = available(name);
            for len in [16, 1024, 8192] {
                let probe = s.make(p, op, len).unwrap();
                assert_eq!(probe.buffer().as_ptr() as usize % ALIGN, 0, "{name} {} {len}", op.as_str());
                assert_eq!(probe.buffer().len(), len);
            }
        }
    }

    /// Sealed records change with the nonce each unit (no work is skipped), and the
    /// decrypt loop keeps verifying a real tag.
    #[test]
    fn aead_probes_do_real_work() {
        let (p, s) = available("aes-128-gcm");
        let mut enc = s.make(p, Op::Encrypt, 256).unwrap();
        enc.run(1).unwrap();
        let first = enc.buffer().to_vec();
        enc.run(1).unwrap();
        assert_ne!(first, enc.buffer(), "encrypting again in place must change the bytes");
        let mut dec = s.make(p, Op::Decrypt, 256).unwrap();
        dec.run(3).unwrap();
        assert!(dec.tamper());
        assert!(dec.run(1).is_err(), "a corrupted tag must fail verification");
    }
    #[test]
    fn xts_refuses_short_units() {
        let (p, s) = available("aes-128-xts");
        assert!(s.make(p, Op::Encrypt, 8).is_err());
    }
}

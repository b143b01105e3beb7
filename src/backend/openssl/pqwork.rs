//! Post-quantum primitives timed per operation: ML-KEM key generation,
//! encapsulation and decapsulation, ML-DSA key generation, signing and verifying.
//!
//! Keys, ciphertexts and signatures are made before timing; every timed
//! operation is checked, so none can be skipped: a decapsulation must give the
//! secret its encapsulation gave, a verification must succeed. Signing and
//! verifying work on a 32-byte message (a digest's size, as `openssl speed`).

use crate::backend::openssl::first_error;
use crate::backend::openssl::pq::{Decapsulator, Encapsulator, KeyGen, SigCtx};
use crate::catalog::{Class, Op};
use anyhow::{anyhow, bail, Result};

/// The message signed and verified.
pub const MESSAGE_LEN: usize = 32;

/// One operation's prepared work.
pub enum PqWork {
    Keygen(KeyGen),
    Encaps {
        enc: Encapsulator,
        ct: Vec<u8>,
        ss: Vec<u8>,
    },
    Decaps {
        dec: Decapsulator,
        ct: Vec<u8>,
        /// The secret the encapsulation gave.
        expect: Vec<u8>,
        ss: Vec<u8>,
    },
    Sign {
        ctx: SigCtx,
        msg: Vec<u8>,
        sig: Vec<u8>,
    },
    Verify {
        ctx: SigCtx,
        msg: Vec<u8>,
        sig: Vec<u8>,
    },
}

fn random(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    crate::backend::openssl::random_bytes(&mut v);
    v
}

/// One encapsulation's ciphertext and secret under `enc`.
pub fn encapsulation(enc: &mut Encapsulator) -> Result<(Vec<u8>, Vec<u8>), openssl::error::ErrorStack> {
    let (mut ct, mut ss) = (vec![0u8; enc.lengths.0], vec![0u8; enc.lengths.1]);
    enc.encapsulate(&mut ct, &mut ss)?;
    Ok((ct, ss))
}

impl PqWork {
    /// The work of `op` for the key type `alg` of `class`, with a fresh key.
    pub fn new(class: Class, alg: &str, op: Op) -> Result<PqWork> {
        let err = |e: openssl::error::ErrorStack| anyhow!("{alg}: {}", first_error(&e));
        let mut gen = KeyGen::new(alg).map_err(err)?;
        Ok(match (class, op) {
            (Class::Kem(_) | Class::Signature(_), Op::Keygen) => PqWork::Keygen(gen),
            (Class::Kem(_), Op::Encaps) => {
                let enc = Encapsulator::new(&gen.generate().map_err(err)?).map_err(err)?;
                let (ct, ss) = (vec![0u8; enc.lengths.0], vec![0u8; enc.lengths.1]);
                PqWork::Encaps { enc, ct, ss }
            }
            (Class::Kem(_), Op::Decaps) => {
                let key = gen.generate().map_err(err)?;
                let (ct, expect) = encapsulation(&mut Encapsulator::new(&key).map_err(err)?).map_err(err)?;
                let ss = vec![0u8; expect.len()];
                PqWork::Decaps {
                    dec: Decapsulator::new(&key).map_err(err)?,
                    ct,
                    expect,
                    ss,
                }
            }
            (Class::Signature(_), Op::Sign | Op::Verify) => {
                let mut ctx = SigCtx::new(gen.generate().map_err(err)?).map_err(err)?;
                let msg = random(MESSAGE_LEN);
                let mut sig = vec![0u8; ctx.max_len];
                if op == Op::Sign {
                    PqWork::Sign { ctx, msg, sig }
                } else {
                    let n = ctx.sign(&msg, &mut sig).map_err(err)?;
                    sig.truncate(n);
                    PqWork::Verify { ctx, msg, sig }
                }
            }
            _ => bail!("{alg} has no {} operation", op.as_str()),
        })
    }

    /// `units` operations (the timed loop).
    #[inline(always)]
    pub fn run(&mut self, units: u64) -> Result<()> {
        match self {
            PqWork::Keygen(gen) => {
                for _ in 0..units {
                    std::hint::black_box(gen.generate()?);
                }
            }
            PqWork::Encaps { enc, ct, ss } => {
                for _ in 0..units {
                    enc.encapsulate(ct, ss)?;
                }
            }
            PqWork::Decaps { dec, ct, expect, ss } => {
                for _ in 0..units {
                    let n = dec.decapsulate(ct, ss)?;
                    if ss[..n] != expect[..] {
                        bail!("decapsulation gave a different secret");
                    }
                }
            }
            PqWork::Sign { ctx, msg, sig } => {
                for _ in 0..units {
                    std::hint::black_box(ctx.sign(msg, sig)?);
                }
            }
            PqWork::Verify { ctx, msg, sig } => {
                for _ in 0..units {
                    if !ctx.verify(msg, sig)? {
                        bail!("signature verification failed");
                    }
                }
            }
        }
        Ok(())
    }

    /// The bytes an operation last wrote (for tests that prove the work is real).
    #[cfg(test)]
    pub fn output(&self) -> &[u8] {
        match self {
            PqWork::Keygen(_) => &[],
            PqWork::Encaps { ct, .. } => ct,
            PqWork::Decaps { ss, .. } => ss,
            PqWork::Sign { sig, .. } | PqWork::Verify { sig, .. } => sig,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::openssl::primitives::fetch;
    use crate::backend::primitives::Availability;
    use crate::catalog::lookup;

    /// Runs `f` for every post-quantum primitive this OpenSSL has; on OpenSSL
    /// before 3.5, checks that each is unavailable with the reason, and says so.
    fn each_available(f: impl Fn(Class, &'static str)) {
        for name in ["ml-kem-512", "ml-kem-768", "ml-kem-1024", "ml-dsa-44", "ml-dsa-65", "ml-dsa-87"] {
            let p = lookup(name).unwrap();
            match (fetch(p), p.class) {
                (Availability::Available(_), Class::Kem(alg) | Class::Signature(alg)) => f(p.class, alg),
                (Availability::Unavailable(why), _) => {
                    assert!(openssl::version::number() < 0x3050_0000, "{name} unavailable on 3.5+: {why}");
                    assert!(why.contains("needs 3.5"), "{why}");
                    eprintln!("skipped {name}: {why}");
                }
                _ => unreachable!(),
            }
        }
    }

    /// Encapsulations differ from one to the next (fresh randomness each time),
    /// and decapsulation keeps checking its secret: a tampered ciphertext fails.
    #[test]
    fn kem_probes_do_real_work() {
        each_available(|class, alg| {
            if !matches!(class, Class::Kem(_)) {
                return;
            }
            let mut enc = PqWork::new(class, alg, Op::Encaps).unwrap();
            enc.run(1).unwrap();
            let first = enc.output().to_vec();
            enc.run(1).unwrap();
            assert_ne!(first, enc.output(), "{alg}: two encapsulations gave one ciphertext");
            let mut dec = PqWork::new(class, alg, Op::Decaps).unwrap();
            dec.run(3).unwrap();
            if let PqWork::Decaps { ct, .. } = &mut dec {
                ct[7] ^= 1;
            }
            assert!(dec.run(1).is_err(), "{alg}: a tampered ciphertext must not give the secret");
            PqWork::new(class, alg, Op::Keygen).unwrap().run(2).unwrap();
        });
    }

    /// Signatures verify, and the verify probe fails on a flipped byte.
    #[test]
    fn signature_probes_do_real_work() {
        each_available(|class, alg| {
            if !matches!(class, Class::Signature(_)) {
                return;
            }
            let mut sign = PqWork::new(class, alg, Op::Sign).unwrap();
            sign.run(2).unwrap();
            let mut verify = PqWork::new(class, alg, Op::Verify).unwrap();
            verify.run(2).unwrap();
            if let PqWork::Verify { sig, .. } = &mut verify {
                sig[10] ^= 0x40;
            }
            assert!(verify.run(1).is_err(), "{alg}: a flipped signature byte must fail");
            assert!(PqWork::new(class, alg, Op::Encaps).is_err());
        });
    }
}

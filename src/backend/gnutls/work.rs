//! GnuTLS's primitives as the probes time them, the same shapes as OpenSSL's
//! (`backend::openssl::work`): plain ciphers continue one stream, AEADs seal and
//! open TLS records (`backend::record`), TLS 1.2 CBC records are MACed, padded
//! and enciphered under a fresh IV (decryption verifies the MAC), digests and
//! MACs hash one independent message per unit. `primitives.rs` hands them to
//! the probes behind the one seam every library uses (`Source::make`).

use super::{Cipher, CipherInfo, GnutlsError, Hash, Hmac};
use crate::backend::primitives::TimedLoop;
use crate::backend::record::{cbc_record, check_cbc_record, random, records, Block, AAD_LEN, NONCE_LEN};
use crate::catalog::{Class, Op, Primitive};
use anyhow::{anyhow, bail, Result};

enum Work {
    /// TLS 1.2 CBC records: MAC, pad, fresh IV, encrypt — or decrypt out of
    /// place and verify the MAC.
    CbcRecord {
        cipher: Cipher,
        mac: Hmac,
        iv: Vec<u8>,
        buf: Block,
        ciphertext: Block,
        decrypt: bool,
    },
    Stream {
        cipher: Cipher,
        buf: Block,
        decrypt: bool,
    },
    Digest {
        hash: Hash,
        buf: Block,
        out: [u8; 64],
    },
    Mac {
        hmac: Hmac,
        buf: Block,
        out: [u8; 64],
    },
}

/// GnuTLS's timed work on units of `len` bytes.
struct Loop {
    work: Work,
    len: usize,
}

/// GnuTLS work for `op` on `len`-byte records, the same shapes as OpenSSL's.
pub fn make(p: &Primitive, name: &str, info: Option<CipherInfo>, op: Op, len: usize) -> Result<Box<dyn TimedLoop>> {
    let err = |e: GnutlsError| anyhow!("{} (GnuTLS {name}): {e}", p.name);
    let work = match (p.class, info, op) {
        (Class::Cipher, Some(info), Op::Encrypt | Op::Decrypt) => {
            if len % info.block != 0 {
                bail!("{}: GnuTLS needs whole {}-byte blocks; {len} is not a multiple", p.name, info.block);
            }
            Work::Stream {
                cipher: Cipher::new(&info, &random(info.key_len), &random(info.iv_len)).map_err(err)?,
                buf: Block::random(len),
                decrypt: op == Op::Decrypt,
            }
        }
        (Class::CbcHmac(d), Some(info), Op::Encrypt | Op::Decrypt) => {
            let (key, iv) = (random(info.key_len), random(info.iv_len));
            let mut mac = Hmac::new(d, &random(32)).map_err(err)?;
            let mut buf = Block::random(len + 64 + 32);
            let mut out = [0u8; 64];
            let total = cbc_record(&mut buf, len, |m, o| {
                let n = mac.mac(m, &mut out).map_err(err)?;
                o[..n].copy_from_slice(&out[..n]);
                Ok(n)
            })?;
            let mut cipher = Cipher::new(&info, &key, &iv).map_err(err)?;
            let ciphertext = if op == Op::Decrypt {
                cipher.encrypt(&mut buf[..total]).map_err(err)?;
                let ct = Block::copy_of(&buf[..total]);
                cipher = Cipher::new(&info, &key, &iv).map_err(err)?;
                ct
            } else {
                Block::zeroed(0)
            };
            Work::CbcRecord {
                cipher,
                mac,
                iv,
                buf,
                ciphertext,
                decrypt: op == Op::Decrypt,
            }
        }
        (Class::Aead(_), Some(info), Op::Encrypt | Op::Decrypt) => {
            let nonce = random(NONCE_LEN);
            let record = super::record::Record::new(&info, &random(info.key_len), &random(len)).map_err(err)?;
            return records(record, &nonce, &random(AAD_LEN), op == Op::Decrypt);
        }
        (Class::Digest, None, Op::Digest) => Work::Digest {
            hash: Hash::new(name).map_err(err)?,
            buf: Block::random(len),
            out: [0u8; 64],
        },
        (Class::Hmac(_), None, Op::Mac) => Work::Mac {
            hmac: Hmac::new(name, &random(32)).map_err(err)?,
            buf: Block::random(len),
            out: [0u8; 64],
        },
        _ => bail!("{} has no {} operation in GnuTLS", p.name, op.as_str()),
    };
    Ok(Box::new(Loop { work, len }))
}

impl TimedLoop for Loop {
    /// `units` records of GnuTLS work (the timed loop).
    fn run(&mut self, units: u64) -> Result<()> {
        let len = self.len;
        match &mut self.work {
            Work::CbcRecord {
                cipher,
                mac,
                iv,
                buf,
                ciphertext,
                decrypt,
            } => {
                let mut tag = [0u8; 64];
                for _ in 0..units {
                    cipher.set_iv(iv);
                    if *decrypt {
                        cipher.decrypt_into(ciphertext, buf)?;
                        let n = mac.mac(&buf[..len], &mut tag)?;
                        check_cbc_record(buf, len, &tag[..n])?;
                    } else {
                        let n = mac.mac(&buf[..len], &mut tag)?;
                        let total = cbc_record(buf, len, |_, out| {
                            out[..n].copy_from_slice(&tag[..n]);
                            Ok(n)
                        })?;
                        cipher.encrypt(&mut buf[..total])?;
                    }
                }
            }
            Work::Stream { cipher, buf, decrypt } => {
                for _ in 0..units {
                    if *decrypt {
                        cipher.decrypt(buf)?;
                    } else {
                        cipher.encrypt(buf)?;
                    }
                }
            }
            Work::Digest { hash, buf, out } => {
                for _ in 0..units {
                    hash.digest(buf, out)?;
                }
            }
            Work::Mac { hmac, buf, out } => {
                for _ in 0..units {
                    hmac.mac(buf, out)?;
                }
            }
        }
        Ok(())
    }
    #[cfg(test)]
    fn buffer(&self) -> &[u8] {
        match &self.work {
            Work::CbcRecord { buf, .. } | Work::Stream { buf, .. } | Work::Digest { buf, .. } | Work::Mac { buf, .. } => &buf[..self.len],
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
    use super::super::primitives::fetch;
    use crate::backend::primitives::{Availability, Source};
    use crate::catalog::{lookup, Op, Primitive};

    fn source(name: &str) -> (&'static Primitive, std::sync::Arc<dyn Source>) {
        let p = lookup(name).unwrap();
        match fetch(p) {
            Availability::Available(s) => (p, s),
            Availability::Unavailable(why) => panic!("{name}: {why} (libgnutls30 is installed by make test)"),
        }
    }

    /// GnuTLS probes do real work: sealed records change, and a corrupted tag
    /// fails verification.
    #[test]
    fn gnutls_probes_do_real_work() {
        let (p, s) = source("aes-128-gcm");
        let mut enc = s.make(p, Op::Encrypt, 256).unwrap();
        enc.run(1).unwrap();
        let first = enc.buffer().to_vec();
        enc.run(1).unwrap();
        assert_ne!(first, enc.buffer(), "a new nonce must change the ciphertext");
        let mut dec = s.make(p, Op::Decrypt, 256).unwrap();
        dec.run(2).unwrap();
        assert!(dec.tamper());
        assert!(dec.run(1).is_err());
        assert!(matches!(fetch(lookup("aes-128-ocb").unwrap()), Availability::Unavailable(_)));
        // A stream cipher continues its stream: the bytes change each unit.
        let (p, s) = source("aes-128-cbc");
        let mut stream = s.make(p, Op::Encrypt, 64).unwrap();
        stream.run(1).unwrap();
        let first = stream.buffer().to_vec();
        stream.run(1).unwrap();
        assert_ne!(first, stream.buffer());
        let e = s.make(p, Op::Encrypt, 17).err().expect("17 bytes");
        assert!(e.to_string().contains("whole 16-byte blocks"), "{e}");
        assert!(s.make(p, Op::Digest, 64).is_err());
    }

    /// TLS 1.2 CBC records round-trip in GnuTLS, and a flipped ciphertext byte
    /// fails the MAC check: decryption verifies, it does not just run.
    #[test]
    fn cbc_hmac_records_verify() {
        let (p, s) = source("aes-128-cbc-hmac-sha1");
        let mut enc = s.make(p, Op::Encrypt, 1000).unwrap();
        enc.run(2).unwrap();
        let mut dec = s.make(p, Op::Decrypt, 1000).unwrap();
        dec.run(2).unwrap();
        assert!(dec.tamper(), "not a CBC record probe");
        assert!(dec.run(1).is_err());
    }
}

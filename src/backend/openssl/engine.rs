//! Reusable cipher and digest contexts for one algorithm.
//!
//! The same methods serve the known-answer tests and the timed loops, so a probe
//! that passed its KAT is provably doing the work that is being timed. Contexts are
//! built once; per-message work is only what a real protocol does per record.

use foreign_types::ForeignType;
use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;
use openssl::error::ErrorStack;
use openssl::md::Md;
use openssl::md_ctx::MdCtx;
use openssl_sys as ffi;
use std::ffi::c_int;
use std::sync::Arc;

/// How an AEAD is driven; they differ in when the length and tag are set.
pub use crate::catalog::AeadKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Encrypt,
    Decrypt,
}

/// Fetches a cipher by EVP name from the loaded providers.
pub fn fetch_cipher(name: &str) -> Result<Cipher, ErrorStack> {
    Cipher::fetch(None, name, None)
}

/// Fetches a digest by name from the loaded providers.
pub fn fetch_digest(name: &str) -> Result<Md, ErrorStack> {
    Md::fetch(None, name, None)
}

/// A keyed cipher context in one direction.
pub struct CipherEngine {
    ctx: CipherCtx,
    aead: Option<AeadKind>,
    direction: Direction,
    /// Bytes an update may write beyond its input (block size, or 0 for stream modes).
    slack: usize,
}

impl CipherEngine {
    /// Builds a context for `cipher` keyed with `key`. For AEADs `iv` sets the nonce
    /// length (the nonce itself is given per record) and `tag_len` the tag length.
    pub fn new(
        cipher: &CipherRef,
        aead: Option<AeadKind>,
        direction: Direction,
        key: &[u8],
        iv: Option<&[u8]>,
        tag_len: usize,
    ) -> Result<CipherEngine, ErrorStack> {
        let mut ctx = CipherCtx::new()?;
        let init = |ctx: &mut CipherCtx, c: Option<&CipherRef>, k: Option<&[u8]>, i: Option<&[u8]>| match direction {
            Direction::Encrypt => ctx.encrypt_init(c, k, i),
            Direction::Decrypt => ctx.decrypt_init(c, k, i),
        };
        init(&mut ctx, Some(cipher), None, None)?;
        if let (Some(_), Some(iv)) = (aead, iv) {
            // Always set it: OpenSSL's CCM reports a 12-byte IV but its context
            // defaults to a 7-byte nonce (L = 8).
            ctx.set_iv_length(iv.len())?;
        }
        // CCM bakes the tag length into its first block when the key is set, in
        // both directions; OCB needs it before the key too.
        if matches!(aead, Some(AeadKind::Ccm | AeadKind::Ocb)) {
            ctx.set_tag_length(tag_len)?;
        }
        if aead.is_none() {
            ctx.set_padding(false);
        }
        // CCM wants the nonce with the key; others accept it per record.
        init(&mut ctx, None, Some(key), iv)?;
        let block = ctx.block_size();
        Ok(CipherEngine {
            ctx,
            aead,
            direction,
            slack: if block > 1 { block } else { 0 },
        })
    }

    /// Extra room a buffer needs beyond the data length.
    pub fn slack(&self) -> usize {
        self.slack
    }

    fn update_inplace(&mut self, buf: &mut [u8], len: usize) -> Result<usize, ErrorStack> {
        assert!(buf.len() >= len + self.slack, "buffer needs {} bytes of slack", self.slack);
        let inl = c_int::try_from(len).expect("record fits in int");
        let mut outl: c_int = 0;
        // SAFETY: ctx is initialised; EVP_CipherUpdate supports in == out, and the
        // buffer holds len + block size bytes as checked above.
        let rc = unsafe { ffi::EVP_CipherUpdate(self.ctx.as_ptr(), buf.as_mut_ptr(), &mut outl, buf.as_ptr(), inl) };
        if rc <= 0 {
            return Err(ErrorStack::get());
        }
        Ok(outl as usize)
    }

    /// Continues the stream over `buf[..len]` in place, as a file or `openssl
    /// speed` would. Returns the bytes written to the front of `buf`.
    pub fn stream(&mut self, buf: &mut [u8], len: usize) -> Result<usize, ErrorStack> {
        self.update_inplace(buf, len)
    }

    /// Continues the stream out of place: `input` → `out` (which needs
    /// [`slack`](Self::slack) extra bytes). Padded decryption holds a block back,
    /// so it must not run in place.
    pub fn stream_into(&mut self, input: &[u8], out: &mut [u8]) -> Result<usize, ErrorStack> {
        self.ctx.cipher_update(input, Some(out))
    }

    /// Finishes a plain-cipher stream: flushes (and with padding, pads or strips).
    pub fn finish(&mut self, out: &mut [u8]) -> Result<usize, ErrorStack> {
        self.ctx.cipher_final(out)
    }

    /// Turns PKCS#7 padding on for ECB/CBC files (as `openssl enc` does).
    pub fn set_padding(&mut self, on: bool) {
        self.ctx.set_padding(on);
    }

    /// Starts a new message (AEAD) or data unit (XTS sector) with `iv`, keeping
    /// the key schedule; with `key`, re-keys too (a stream cipher without an IV,
    /// such as RC4, only restarts its keystream that way).
    pub fn restart(&mut self, key: Option<&[u8]>, iv: Option<&[u8]>) -> Result<(), ErrorStack> {
        match self.direction {
            Direction::Encrypt => self.ctx.encrypt_init(None, key, iv),
            Direction::Decrypt => self.ctx.decrypt_init(None, key, iv),
        }
    }

    /// Ends a streamed AEAD message: encryption writes the tag into `tag`,
    /// decryption verifies it and fails on a mismatch.
    pub fn end_aead(&mut self, out: &mut [u8], tag: &mut [u8]) -> Result<usize, ErrorStack> {
        match self.direction {
            Direction::Encrypt => {
                let n = self.ctx.cipher_final(out)?;
                self.ctx.tag(tag)?;
                Ok(n)
            }
            Direction::Decrypt => {
                self.ctx.set_tag(tag)?;
                self.ctx.cipher_final(out)
            }
        }
    }

    /// AEAD encryption of one record in place: new nonce, AAD, data, final, tag.
    /// `buf` holds `len` bytes of plaintext plus [`slack`](Self::slack).
    pub fn seal(&mut self, nonce: &[u8], aad: &[u8], buf: &mut [u8], len: usize, tag: &mut [u8]) -> Result<usize, ErrorStack> {
        debug_assert_eq!(self.direction, Direction::Encrypt);
        let kind = self.aead.expect("seal needs an AEAD");
        self.ctx.encrypt_init(None, None, Some(nonce))?;
        if kind == AeadKind::Ccm {
            self.ctx.set_data_len(len)?;
        }
        if !aad.is_empty() {
            self.ctx.cipher_update(aad, None)?;
        }
        let n = self.update_inplace(buf, len)?;
        let f = self.ctx.cipher_final(&mut buf[n..])?;
        self.ctx.tag(tag)?;
        Ok(n + f)
    }

    /// AEAD decryption of one record: verifies `tag`, fails when it does not match.
    pub fn open(&mut self, nonce: &[u8], aad: &[u8], input: &[u8], out: &mut [u8], tag: &[u8]) -> Result<usize, ErrorStack> {
        debug_assert_eq!(self.direction, Direction::Decrypt);
        let kind = self.aead.expect("open needs an AEAD");
        self.ctx.decrypt_init(None, None, Some(nonce))?;
        if kind == AeadKind::Ccm {
            // CCM verifies inside the single update, so the tag goes first.
            self.ctx.set_tag(tag)?;
            self.ctx.set_data_len(input.len())?;
        }
        if !aad.is_empty() {
            self.ctx.cipher_update(aad, None)?;
        }
        let n = self.ctx.cipher_update(input, Some(out))?;
        if kind == AeadKind::Ccm {
            return Ok(n);
        }
        self.ctx.set_tag(tag)?;
        let f = self.ctx.cipher_final(&mut out[n..])?;
        Ok(n + f)
    }
}

/// A reusable digest context.
pub struct DigestEngine {
    ctx: MdCtx,
    md: Arc<Md>,
    out: [u8; 64],
}

impl DigestEngine {
    pub fn new(md: Arc<Md>) -> Result<DigestEngine, ErrorStack> {
        Ok(DigestEngine {
            ctx: MdCtx::new()?,
            md,
            out: [0u8; 64],
        })
    }

    /// Hashes one message: init, update, final.
    pub fn digest(&mut self, msg: &[u8]) -> Result<&[u8], ErrorStack> {
        self.ctx.digest_init(&self.md)?;
        self.ctx.digest_update(msg)?;
        let n = self.ctx.digest_final(&mut self.out)?;
        Ok(&self.out[..n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NIST SP 800-38D / GCM spec test case 4 through seal and open, and a flipped
    /// tag bit must be rejected: decryption really verifies.
    #[test]
    fn gcm_seal_open_and_reject_bad_tag() {
        use crate::backend::record::gcm_case4 as v;
        let (key, iv, pt, aad) = (v::key(), v::nonce(), v::data(), v::aad());
        let cipher = fetch_cipher("aes-128-gcm").unwrap();
        let mut enc = CipherEngine::new(&cipher, Some(AeadKind::Gcm), Direction::Encrypt, &key, Some(&iv), 16).unwrap();
        let mut buf = pt.clone();
        buf.resize(pt.len() + enc.slack(), 0);
        let mut tag = [0u8; 16];
        let n = enc.seal(&iv, &aad, &mut buf, pt.len(), &mut tag).unwrap();
        assert_eq!(n, pt.len());
        assert_eq!(hex::encode(&buf[..n]), v::SEALED);
        assert_eq!(hex::encode(tag), "5bc94fbc3221a5db94fae95ae7121a47");

        let mut dec = CipherEngine::new(&cipher, Some(AeadKind::Gcm), Direction::Decrypt, &key, Some(&iv), 16).unwrap();
        let mut out = vec![0u8; n + 16];
        let m = dec.open(&iv, &aad, &buf[..n], &mut out, &tag).unwrap();
        assert_eq!(&out[..m], &pt[..]);
        tag[0] ^= 1;
        assert!(dec.open(&iv, &aad, &buf[..n], &mut out, &tag).is_err());
    }

    #[test]
    fn sha256_abc() {
        let mut d = DigestEngine::new(Arc::new(fetch_digest("sha256").unwrap())).unwrap();
        for _ in 0..2 {
            assert_eq!(
                hex::encode(d.digest(b"abc").unwrap()),
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
            );
        }
    }
}

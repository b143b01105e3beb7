//! A TLS record's protection, one interface for every TLS library: an AEAD keyed
//! once, sealing and opening whole records with a nonce and additional data per
//! record, as TLS does. OpenSSL (`openssl::record`) and GnuTLS (`gnutls::record`)
//! implement it; the primitive probes time it through this trait, one loop for
//! every library, each library's calls as it makes them in TLS (OpenSSL seals in
//! place, GnuTLS out of place: the buffers are the implementation's). Also what
//! every library's probe shares: the TLS 1.2 CBC record's layout and check
//! ([`cbc_record`], [`check_cbc_record`]), aligned buffers ([`Block`]) and
//! random keys.

use crate::backend::primitives::TimedLoop;
use anyhow::Result;

/// Nonce and tag sizes of a TLS record (TLS uses 12 and 16).
pub const NONCE_LEN: usize = 12;
pub const TAG_LEN: usize = 16;
/// TLS 1.2 additional data: seq(8) || type(1) || version(2) || length(2).
pub const AAD_LEN: usize = 13;

/// One keyed AEAD with the record it works on (`len` bytes of data, made when
/// the implementation was built). Dispatch is static: a loop generic over this
/// trait calls the library directly, with no copy or allocation per record.
pub trait RecordCipher: Send {
    /// Seals the record's data under `nonce` and `aad`; the sealed record (the
    /// ciphertext and its tag) replaces the last one.
    fn seal(&mut self, nonce: &[u8], aad: &[u8]) -> Result<()>;
    /// Opens the last sealed record under `nonce` and `aad`: an error when its
    /// tag does not verify.
    fn open(&mut self, nonce: &[u8], aad: &[u8]) -> Result<()>;
    /// The ciphertext of the last sealed record (`len` bytes, the tag apart).
    #[cfg(test)]
    fn sealed(&self) -> &[u8];
    /// What the last open gave (`len` bytes).
    #[cfg(test)]
    fn opened(&self) -> &[u8];
    /// The ciphertext of the last sealed record, to corrupt it (tests: an open
    /// must then fail).
    #[cfg(test)]
    fn sealed_mut(&mut self) -> &mut [u8];
}

/// Advances to the next record: a fresh nonce as TLS 1.3 derives it (IV XOR
/// sequence number) and the sequence number in the AAD.
fn next_record(nonce: &[u8; NONCE_LEN], seq: &mut u64, aad: &mut [u8; AAD_LEN]) -> [u8; NONCE_LEN] {
    *seq += 1;
    let mut n = *nonce;
    for (b, s) in n[NONCE_LEN - 8..].iter_mut().zip(seq.to_be_bytes()) {
        *b ^= s;
    }
    aad[..8].copy_from_slice(&seq.to_be_bytes());
    n
}

/// TLS records through one library's [`RecordCipher`]: sealing with a fresh
/// nonce per record, or opening one sealed record again and again (verifying its
/// tag each time). One loop for every library, generic over the library's record
/// (static calls inside; one dynamic call per batch of units).
pub struct Records<R> {
    cipher: R,
    nonce: [u8; NONCE_LEN],
    seq: u64,
    aad: [u8; AAD_LEN],
    open: bool,
}

/// The timed loop over `cipher`'s record: sealing with a fresh nonce per record
/// from `nonce`, or (with `open`) opening one sealed record again and again.
/// `aad` is the record's additional data (the sequence number goes in its first
/// 8 bytes); opening seals a record first and opens it once.
pub fn records<R: RecordCipher + 'static>(mut cipher: R, nonce: &[u8], aad: &[u8], open: bool) -> Result<Box<dyn TimedLoop>> {
    let mut n = [0u8; NONCE_LEN];
    n.copy_from_slice(nonce);
    let mut a = [0u8; AAD_LEN];
    a.copy_from_slice(aad);
    if open {
        cipher.seal(&n, &a)?;
        cipher.open(&n, &a)?;
    }
    Ok(Box::new(Records {
        cipher,
        nonce: n,
        seq: 0,
        aad: a,
        open,
    }))
}

impl<R: RecordCipher> TimedLoop for Records<R> {
    fn run(&mut self, units: u64) -> Result<()> {
        if self.open {
            for _ in 0..units {
                self.cipher.open(&self.nonce, &self.aad)?;
            }
        } else {
            for _ in 0..units {
                let n = next_record(&self.nonce, &mut self.seq, &mut self.aad);
                self.cipher.seal(&n, &self.aad)?;
            }
        }
        Ok(())
    }
    #[cfg(test)]
    fn buffer(&self) -> &[u8] {
        if self.open {
            self.cipher.opened()
        } else {
            self.cipher.sealed()
        }
    }
    #[cfg(test)]
    fn tamper(&mut self) -> bool {
        self.cipher.sealed_mut()[0] ^= 1;
        true
    }
}

/// Lays out a TLS 1.2 CBC record in `buf`: data (already there, `len` bytes), its
/// MAC from `mac`, then padding (p bytes of value p-1) to the 16-byte block.
/// Returns the record length.
pub fn cbc_record(buf: &mut [u8], len: usize, mac: impl FnOnce(&[u8], &mut [u8]) -> Result<usize>) -> Result<usize> {
    let mut tag = [0u8; 64];
    let m = mac(&buf[..len], &mut tag)?;
    buf[len..len + m].copy_from_slice(&tag[..m]);
    let pad = 16 - (len + m) % 16;
    buf[len + m..len + m + pad].fill((pad - 1) as u8);
    Ok(len + m + pad)
}

/// Checks a decrypted CBC record: the MAC recomputed over the data must match the
/// one carried in the record, and the padding must be well formed.
pub fn check_cbc_record(buf: &[u8], len: usize, tag: &[u8]) -> Result<()> {
    let m = tag.len();
    let pad = 16 - (len + m) % 16;
    if buf[len..len + m] != *tag || buf[len + m..len + m + pad].iter().any(|&b| b as usize != pad - 1) {
        anyhow::bail!("CBC record failed its MAC or padding check");
    }
    Ok(())
}

/// `n` random bytes (keys, IVs, nonces and data of a probe).
pub fn random(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    crate::backend::openssl::random_bytes(&mut v);
    v
}

/// Where every data buffer of a probe starts: a cache-line boundary.
pub const ALIGN: usize = 64;

/// A data buffer, its first byte on an [`ALIGN`]-byte boundary. Heap addresses
/// change from run to run, and with them a buffer's offset within a cache line,
/// which some SIMD code is sensitive to: left to the allocator, one run's figure
/// could differ from the next for that alone. Fixed, it cannot.
pub struct Block {
    raw: Vec<u8>,
    off: usize,
    len: usize,
}

impl Block {
    pub fn zeroed(len: usize) -> Block {
        let raw = vec![0u8; len + ALIGN];
        // The heap allocation never moves: the Vec is never resized.
        let off = raw.as_ptr().align_offset(ALIGN);
        Block { raw, off, len }
    }
    pub fn copy_of(data: &[u8]) -> Block {
        let mut b = Block::zeroed(data.len());
        b.copy_from_slice(data);
        b
    }
    /// A block of `len` random bytes.
    pub fn random(len: usize) -> Block {
        let mut b = Block::zeroed(len);
        crate::backend::openssl::random_bytes(&mut b);
        b
    }
    /// `data` at the front of a block of `len` bytes (the rest zero).
    pub fn holding(data: &[u8], len: usize) -> Block {
        let mut b = Block::zeroed(len.max(data.len()));
        b[..data.len()].copy_from_slice(data);
        b
    }
}

impl std::ops::Deref for Block {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.raw[self.off..self.off + self.len]
    }
}

impl std::ops::DerefMut for Block {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.off..self.off + self.len]
    }
}

/// The GCM specification's test case 4 (AES-128, 12-byte nonce, 20 bytes of
/// additional data, 60 bytes of data), for the tests of both libraries' records.
#[cfg(test)]
pub mod gcm_case4 {
    fn hex(s: &str) -> Vec<u8> {
        hex::decode(s).expect("hex")
    }
    pub fn key() -> Vec<u8> {
        hex("feffe9928665731c6d6a8f9467308308")
    }
    pub fn nonce() -> Vec<u8> {
        hex("cafebabefacedbaddecaf888")
    }
    pub fn aad() -> Vec<u8> {
        hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
    }
    pub fn data() -> Vec<u8> {
        hex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
    }
    /// The ciphertext (the tag apart).
    pub const SEALED: &str =
        "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{gnutls, openssl};

    /// NIST's GCM test case 4 through both libraries' records: the same
    /// ciphertext, opened back to the data; a flipped ciphertext bit fails the open.
    #[test]
    fn both_libraries_seal_and_open_the_same_record() {
        use gcm_case4 as v;
        let (key, nonce, data, aad) = (v::key(), v::nonce(), v::data(), v::aad());
        let cipher = openssl::engine::fetch_cipher("aes-128-gcm").unwrap();
        let info = gnutls::cipher_info("AES-128-GCM").expect("libgnutls30 is installed by make test");
        let records: [Box<dyn RecordCipher>; 2] = [
            Box::new(openssl::record::Record::new(&cipher, crate::catalog::AeadKind::Gcm, &key, &nonce, &data).unwrap()),
            Box::new(gnutls::record::Record::new(&info, &key, &data).unwrap()),
        ];
        for mut r in records {
            r.seal(&nonce, &aad).unwrap();
            assert_eq!(hex::encode(r.sealed()), v::SEALED);
            r.open(&nonce, &aad).unwrap();
            assert_eq!(r.opened(), &data[..]);
            r.sealed_mut()[0] ^= 1;
            assert!(r.open(&nonce, &aad).unwrap_err().to_string().starts_with("tag verification failed"));
        }
    }
}

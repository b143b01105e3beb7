//! rustls's TLS 1.3 record protection ([`RecordCipher`]): the aws-lc-rs
//! provider's `MessageEncrypter` and `MessageDecrypter`, called as rustls's
//! record layer calls them, on whole application-data records.
//!
//! What is timed, per record, is what rustls does for one record:
//! - **seal**: `MessageEncrypter::encrypt(record, seq)`. rustls allocates the
//!   record's buffer, copies the data in, appends the inner content type (one
//!   byte, TLS 1.3's `TLSInnerPlaintext`), and seals in place under the nonce
//!   IV XOR seq with the record header (`17 03 03 len`) as additional data; the
//!   previous record's buffer is freed. Then `seq` advances (aws-lc-rs's TLS 1.3
//!   GCM key refuses a sequence number that does not grow).
//! - **open**: the sealed record's body is copied into a receive buffer (as a
//!   socket read into rustls's deframer buffer would put it there), then
//!   `MessageDecrypter::decrypt(record, seq)` opens it in place and strips the
//!   content type.
//!
//! So the `nonce` and `aad` the probe hands in are not used: rustls derives both
//! itself (nonce from the IV and its own sequence number, AAD from the record
//! header), exactly as in a connection. A record holds `len` bytes of data; the
//! sealed record is `5 + len + 1 + 16` bytes.

use crate::backend::record::{Block, RecordCipher, NONCE_LEN, TAG_LEN};
use ::rustls::crypto::cipher::{InboundOpaqueMessage, Iv, MessageDecrypter, MessageEncrypter, OutboundPlainMessage, Tls13AeadAlgorithm};
use ::rustls::crypto::tls13::{HkdfExpander, OkmBlock, OutputLengthError};
use ::rustls::{ContentType, ProtocolVersion};
use anyhow::{anyhow, bail, Result};

/// The catalogue's AEADs rustls has (as TLS 1.3 suites of its provider).
pub const AEADS: [&str; 3] = ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"];

/// The record header's length.
const HEADER: usize = 5;

/// The provider's TLS 1.3 AEAD for a catalogue name.
fn aead(name: &str) -> Option<&'static dyn Tls13AeadAlgorithm> {
    use ::rustls::crypto::aws_lc_rs::cipher_suite as cs;
    let suite = match name.to_ascii_lowercase().as_str() {
        "aes-128-gcm" => cs::TLS13_AES_128_GCM_SHA256,
        "aes-256-gcm" => cs::TLS13_AES_256_GCM_SHA384,
        "chacha20-poly1305" => cs::TLS13_CHACHA20_POLY1305_SHA256,
        _ => return None,
    };
    suite.tls13().map(|s| s.aead_alg)
}

/// Whether rustls has the catalogue AEAD `name`.
pub fn has(name: &str) -> bool {
    aead(name).is_some()
}

/// An "HKDF expansion" that is the given key itself. rustls 0.23 makes an
/// `AeadKey` shorter than 32 bytes only through its key schedule
/// (`derive_traffic_key`, which expands to the AEAD's key length); handing the
/// key schedule this expander makes that key exactly `key` (the known-answer
/// test proves the bytes go through unchanged).
struct GivenKey<'a>(&'a [u8]);

impl HkdfExpander for GivenKey<'_> {
    fn expand_slice(&self, _info: &[&[u8]], output: &mut [u8]) -> Result<(), OutputLengthError> {
        output.fill(0);
        let n = self.0.len().min(output.len());
        output[..n].copy_from_slice(&self.0[..n]);
        Ok(())
    }
    fn expand_block(&self, _info: &[&[u8]]) -> OkmBlock {
        OkmBlock::new(self.0)
    }
    fn hash_len(&self) -> usize {
        self.0.len()
    }
}

/// One direction's keys, sealing and opening TLS 1.3 application-data records of
/// one size.
pub struct Record {
    seal: Box<dyn MessageEncrypter>,
    open: Box<dyn MessageDecrypter>,
    data: Block,
    /// The last sealed record, header included (rustls's own buffer).
    sealed: Vec<u8>,
    /// The sequence number the last record was sealed under.
    seq: u64,
    /// The next sequence number to seal under.
    next: u64,
    /// Where an open works: the sealed body copied in, opened in place.
    work: Block,
}

impl Record {
    /// The AEAD `aead` (a catalogue name: `aes-128-gcm`, `aes-256-gcm`,
    /// `chacha20-poly1305`) keyed with `key` and the 12-byte `iv` rustls XORs
    /// with the sequence number, over a record holding `data`.
    pub fn new(aead_name: &str, key: &[u8], iv: &[u8], data: &[u8]) -> Result<Record> {
        let alg = aead(aead_name).ok_or_else(|| anyhow!("rustls has no TLS 1.3 AEAD {aead_name}"))?;
        if key.len() != alg.key_len() {
            bail!("{aead_name} takes a {}-byte key, not {}", alg.key_len(), key.len());
        }
        let iv: [u8; NONCE_LEN] = iv
            .try_into()
            .map_err(|_| anyhow!("{aead_name} takes a {NONCE_LEN}-byte IV, not {}", iv.len()))?;
        if data.len() > (1 << 14) {
            bail!("a TLS record holds at most 16384 bytes, not {}", data.len());
        }
        let k = || ::rustls::internal::derive_traffic_key(&GivenKey(key), alg);
        let len = data.len();
        Ok(Record {
            seal: alg.encrypter(k(), Iv::from(iv)),
            open: alg.decrypter(k(), Iv::from(iv)),
            data: Block::copy_of(data),
            sealed: Vec::new(),
            seq: 0,
            next: 0,
            work: Block::zeroed(len + 1 + TAG_LEN),
        })
    }

    /// The sequence number of the last sealed record (tests: the nonce is IV XOR it).
    #[cfg(test)]
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The whole last sealed record: header, ciphertext (data and content type), tag.
    #[cfg(test)]
    pub fn wire(&self) -> &[u8] {
        &self.sealed
    }
}

impl RecordCipher for Record {
    /// `nonce` and `aad` are not used: rustls derives them (see the module's docs).
    fn seal(&mut self, _nonce: &[u8], _aad: &[u8]) -> Result<()> {
        let msg = OutboundPlainMessage {
            typ: ContentType::ApplicationData,
            version: ProtocolVersion::TLSv1_2,
            payload: (&self.data[..]).into(),
        };
        let out = self
            .seal
            .encrypt(msg, self.next)
            .map_err(|e| anyhow!("rustls did not seal the record: {e}"))?;
        self.sealed = out.encode();
        self.seq = self.next;
        self.next += 1;
        Ok(())
    }

    /// `nonce` and `aad` are not used: rustls derives them (see the module's docs).
    fn open(&mut self, _nonce: &[u8], _aad: &[u8]) -> Result<()> {
        let body = self.sealed.get(HEADER..).ok_or_else(|| anyhow!("nothing sealed yet"))?;
        let work = &mut self.work[..body.len()];
        work.copy_from_slice(body);
        let msg = InboundOpaqueMessage::new(ContentType::ApplicationData, ProtocolVersion::TLSv1_2, work);
        let plain = self
            .open
            .decrypt(msg, self.seq)
            .map_err(|e| anyhow!("tag verification failed: {e}"))?;
        if plain.typ != ContentType::ApplicationData || plain.payload.len() != self.data.len() {
            bail!(
                "rustls opened a {:?} record of {} bytes, not application data of {}",
                plain.typ,
                plain.payload.len(),
                self.data.len()
            );
        }
        Ok(())
    }

    #[cfg(test)]
    fn sealed(&self) -> &[u8] {
        &self.sealed[HEADER..HEADER + self.data.len()]
    }
    #[cfg(test)]
    fn opened(&self) -> &[u8] {
        &self.work[..self.data.len()]
    }
    #[cfg(test)]
    fn sealed_mut(&mut self) -> &mut [u8] {
        let len = self.data.len();
        &mut self.sealed[HEADER..HEADER + len]
    }
}

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

use crate::backend::primitives::{Availability, Source, TimedLoop};
use crate::backend::record::{random, records, Block, RecordCipher, AAD_LEN, NONCE_LEN, TAG_LEN};
use crate::catalog::kat::{KatError, Passed, Vectors};
use crate::catalog::{Class, Op, Primitive};
use ::rustls::crypto::cipher::{InboundOpaqueMessage, Iv, MessageDecrypter, MessageEncrypter, OutboundPlainMessage, Tls13AeadAlgorithm};
use ::rustls::crypto::tls13::{HkdfExpander, OkmBlock, OutputLengthError};
use ::rustls::{ContentType, ProtocolVersion};
use anyhow::{anyhow, bail, Result};
use std::sync::Arc;

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

/// Which catalogue primitives rustls can time: its TLS 1.3 AEADs, as records
/// sealed and opened by its own record layer, after [`known_answer`].
pub fn fetch(p: &Primitive) -> Availability {
    if matches!(p.class, Class::Aead(_)) && has(p.name) {
        return Availability::Available(Arc::new(Aead(p.name)));
    }
    Availability::Unavailable(format!("not in rustls's provider (it has {})", AEADS.join(", ")))
}

/// One of rustls's AEADs by its catalogue name, as the probes time it (records
/// sealed or opened by rustls's record layer) and check it ([`known_answer`]).
struct Aead(&'static str);

impl Source for Aead {
    fn make(&self, p: &Primitive, op: Op, len: usize) -> Result<Box<dyn TimedLoop>> {
        match op {
            Op::Encrypt | Op::Decrypt => make(self.0, len, op == Op::Decrypt).map_err(|e| anyhow!("{}: {e:#}", p.name)),
            _ => bail!("{} has no {} operation", p.name, op.as_str()),
        }
    }
    /// rustls's records are checked against OpenSSL's AEAD, not against the
    /// published vectors: rustls makes each record's nonce and additional data
    /// itself, which a fixed vector's cannot be.
    fn known_answer(&self, p: &Primitive, _vectors: &Vectors) -> Result<Passed, KatError> {
        known_answer(self.0).map_err(|message| KatError::Library {
            source_doc: format!("{} record known answer", p.name),
            message,
        })
    }
    fn key_bits(&self) -> Option<usize> {
        Some(key_len(self.0) * 8)
    }
}

fn key_len(aead_name: &str) -> usize {
    aead(aead_name).map_or(32, |a| a.key_len())
}

/// The probe's records: a random key, IV and `len` bytes of data.
fn make(aead_name: &'static str, len: usize, open: bool) -> Result<Box<dyn TimedLoop>> {
    let record = Record::new(aead_name, &random(key_len(aead_name)), &random(NONCE_LEN), &random(len))?;
    // rustls derives its own nonce and additional data; these are not read.
    records(record, &[0u8; NONCE_LEN], &[0u8; AAD_LEN], open)
}

/// rustls's records against OpenSSL's AEAD (itself checked against NIST's and
/// RFC 8439's vectors before it is timed): two records in a row, each sealed by
/// rustls, must be byte for byte what OpenSSL seals with the same key, the
/// nonce IV XOR sequence number and the TLS 1.3 additional data (the record
/// header), over the data and its content type (RFC 8446, 5.2); OpenSSL opens
/// them, rustls opens them back, and a flipped byte fails.
pub fn known_answer(aead_name: &'static str) -> Result<Vec<String>, String> {
    use openssl::symm::{decrypt_aead, encrypt_aead, Cipher};
    let cipher = match aead_name {
        "aes-128-gcm" => Cipher::aes_128_gcm(),
        "aes-256-gcm" => Cipher::aes_256_gcm(),
        "chacha20-poly1305" => Cipher::chacha20_poly1305(),
        other => return Err(format!("no reference AEAD for {other}")),
    };
    // Fixed inputs: the same vector every time.
    let key: Vec<u8> = (0..cipher.key_len() as u8).collect();
    let iv: Vec<u8> = (0xa0..0xa0 + NONCE_LEN as u8).collect();
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut r = Record::new(aead_name, &key, &iv, &data).map_err(|e| format!("{e:#}"))?;
    for seq in 0u64..2 {
        r.seal(&[], &[]).map_err(|e| format!("{e:#}"))?;
        let mut nonce = iv.clone();
        for (b, s) in nonce[NONCE_LEN - 8..].iter_mut().zip(seq.to_be_bytes()) {
            *b ^= s;
        }
        let body = (data.len() + 1 + TAG_LEN) as u16;
        let aad = [0x17, 0x03, 0x03, (body >> 8) as u8, body as u8];
        let mut inner = data.clone();
        inner.push(0x17);
        let mut tag = [0u8; TAG_LEN];
        let ct = encrypt_aead(cipher, &key, Some(&nonce), &aad, &inner, &mut tag).map_err(|e| e.to_string())?;
        let expect = [&aad[..], &ct, &tag].concat();
        if r.seq() != seq || r.wire() != &expect[..] {
            return Err(format!("rustls's record {seq} is not OpenSSL's ({aead_name})"));
        }
        let wire = r.wire();
        let opened = decrypt_aead(
            cipher,
            &key,
            Some(&nonce),
            &aad,
            &wire[HEADER..HEADER + inner.len()],
            &wire[HEADER + inner.len()..],
        );
        if opened.ok().as_deref() != Some(&inner[..]) {
            return Err(format!("OpenSSL does not open rustls's record {seq} ({aead_name})"));
        }
        r.open(&[], &[]).map_err(|e| format!("{e:#}"))?;
        if r.work[..data.len()] != data[..] {
            return Err(format!("rustls does not open its record {seq} to the data ({aead_name})"));
        }
    }
    r.sealed[HEADER] ^= 1;
    if r.open(&[], &[]).is_ok() {
        return Err(format!("rustls opened a record with a flipped byte ({aead_name})"));
    }
    Ok(vec![format!(
        "{aead_name}: a TLS 1.3 record (RFC 8446 5.2) sealed by rustls equals OpenSSL's"
    )])
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

    /// The sequence number of the last sealed record (the nonce is IV XOR it).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The whole last sealed record: header, ciphertext (data and content type), tag.
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

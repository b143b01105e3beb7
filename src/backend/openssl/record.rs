//! OpenSSL's TLS record protection ([`RecordCipher`]): `EVP_CipherUpdate` in
//! place to seal, as libssl does, the tag apart; opening out of place.

use super::engine::{AeadKind, CipherEngine, Direction};
use super::first_error;
use crate::backend::record::{Block, RecordCipher, TAG_LEN};
use anyhow::{anyhow, Result};
use openssl::cipher::CipherRef;
use openssl::error::ErrorStack;

pub struct Record {
    seal: CipherEngine,
    open: CipherEngine,
    len: usize,
    /// The record: its data, sealed in place (the engine's slack after it).
    buf: Block,
    tag: [u8; TAG_LEN],
    /// Where an open writes the data.
    out: Block,
}

impl Record {
    /// `cipher` keyed with `key`, for nonces of `nonce`'s length (CCM takes
    /// the nonce with the key), over a record holding `data`.
    pub fn new(cipher: &CipherRef, kind: AeadKind, key: &[u8], nonce: &[u8], data: &[u8]) -> Result<Record, ErrorStack> {
        let seal = CipherEngine::new(cipher, Some(kind), Direction::Encrypt, key, Some(nonce), TAG_LEN)?;
        let open = CipherEngine::new(cipher, Some(kind), Direction::Decrypt, key, Some(nonce), TAG_LEN)?;
        let len = data.len();
        let buf = Block::holding(data, len + seal.slack() + 16);
        Ok(Record {
            seal,
            open,
            len,
            buf,
            tag: [0u8; TAG_LEN],
            out: Block::zeroed(len + 32),
        })
    }
}

impl RecordCipher for Record {
    fn seal(&mut self, nonce: &[u8], aad: &[u8]) -> Result<()> {
        self.seal.seal(nonce, aad, &mut self.buf, self.len, &mut self.tag)?;
        Ok(())
    }
    fn open(&mut self, nonce: &[u8], aad: &[u8]) -> Result<()> {
        self.open
            .open(nonce, aad, &self.buf[..self.len], &mut self.out, &self.tag)
            .map_err(|e| anyhow!("tag verification failed: {}", first_error(&e)))?;
        Ok(())
    }
    #[cfg(test)]
    fn sealed(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    #[cfg(test)]
    fn opened(&self) -> &[u8] {
        &self.out[..self.len]
    }
    #[cfg(test)]
    fn sealed_mut(&mut self) -> &mut [u8] {
        &mut self.buf[..self.len]
    }
}

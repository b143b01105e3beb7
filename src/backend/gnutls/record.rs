//! GnuTLS's TLS record protection ([`RecordCipher`]): `gnutls_aead_cipher_encrypt`
//! and `_decrypt`, out of place, the tag after the ciphertext.

use super::{Aead, CipherInfo, GnutlsError};
use crate::backend::record::{Block, RecordCipher, TAG_LEN};
use anyhow::{anyhow, Result};

pub struct Record {
    aead: Aead,
    data: Block,
    /// The last sealed record: ciphertext || tag.
    sealed: Block,
    /// Where an open writes the data.
    out: Block,
}

impl Record {
    /// The AEAD `info` keyed with `key`, over a record holding `data`.
    pub fn new(info: &CipherInfo, key: &[u8], data: &[u8]) -> Result<Record, GnutlsError> {
        let len = data.len();
        Ok(Record {
            aead: Aead::new(info, key)?,
            data: Block::copy_of(data),
            sealed: Block::zeroed(len + TAG_LEN),
            out: Block::zeroed(len + TAG_LEN),
        })
    }
}

impl RecordCipher for Record {
    fn seal(&mut self, nonce: &[u8], aad: &[u8]) -> Result<()> {
        self.aead.seal(nonce, aad, TAG_LEN, &self.data, &mut self.sealed)?;
        Ok(())
    }
    fn open(&mut self, nonce: &[u8], aad: &[u8]) -> Result<()> {
        self.aead
            .open(nonce, aad, TAG_LEN, &self.sealed, &mut self.out)
            .map_err(|e| anyhow!("tag verification failed: {e}"))?;
        Ok(())
    }
    #[cfg(test)]
    fn sealed(&self) -> &[u8] {
        &self.sealed[..self.data.len()]
    }
    #[cfg(test)]
    fn opened(&self) -> &[u8] {
        &self.out[..self.data.len()]
    }
    #[cfg(test)]
    fn sealed_mut(&mut self) -> &mut [u8] {
        let len = self.data.len();
        &mut self.sealed[..len]
    }
}

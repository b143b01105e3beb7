//! Self-signed server certificates generated at start, one per key type the TLS
//! handshake sweep covers.

use anyhow::{Context, Result};
use openssl::asn1::Asn1Time;
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::x509::extension::{BasicConstraints, SubjectAlternativeName};
use openssl::x509::{X509NameBuilder, X509};

/// A certificate key type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CertType {
    Rsa2048,
    Rsa3072,
    EcdsaP256,
    EcdsaP384,
    Ed25519,
}

impl CertType {
    pub const ALL: [CertType; 5] = [
        CertType::Rsa2048,
        CertType::Rsa3072,
        CertType::EcdsaP256,
        CertType::EcdsaP384,
        CertType::Ed25519,
    ];

    /// The name reports and `--certs` use (the knowledge base's spelling).
    pub fn name(self) -> &'static str {
        match self {
            CertType::Rsa2048 => "rsa-2048",
            CertType::Rsa3072 => "rsa-3072",
            CertType::EcdsaP256 => "ecdsa-p256",
            CertType::EcdsaP384 => "ecdsa-p384",
            CertType::Ed25519 => "ed25519",
        }
    }

    /// Parses `rsa-2048`, `rsa2048`, `rsa:2048`, `ecdsa-p256`, `p-256`, `ed25519`...
    pub fn parse(s: &str) -> Option<CertType> {
        let k: String = s.to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        match k.as_str() {
            "rsa2048" | "rsa" => Some(CertType::Rsa2048),
            "rsa3072" => Some(CertType::Rsa3072),
            "ecdsap256" | "p256" | "ecdsa" | "prime256v1" | "secp256r1" => Some(CertType::EcdsaP256),
            "ecdsap384" | "p384" | "secp384r1" => Some(CertType::EcdsaP384),
            "ed25519" => Some(CertType::Ed25519),
            _ => None,
        }
    }

    /// OpenSSL's Au label of the TLS 1.2 suites this key can serve.
    pub fn au(self) -> &'static str {
        match self {
            CertType::Rsa2048 | CertType::Rsa3072 => "RSA",
            // OpenSSL serves Ed25519 certificates with the ECDSA suites.
            CertType::EcdsaP256 | CertType::EcdsaP384 | CertType::Ed25519 => "ECDSA",
        }
    }
}

/// A private key and its self-signed certificate.
pub struct Identity {
    pub key: PKey<Private>,
    pub cert: X509,
}

impl Identity {
    /// Generates a fresh key and a self-signed certificate for `localhost` and 127.0.0.1.
    pub fn generate(kind: CertType) -> Result<Identity> {
        let key = match kind {
            CertType::Rsa2048 => PKey::from_rsa(Rsa::generate(2048)?)?,
            CertType::Rsa3072 => PKey::from_rsa(Rsa::generate(3072)?)?,
            CertType::EcdsaP256 => ec_key(Nid::X9_62_PRIME256V1)?,
            CertType::EcdsaP384 => ec_key(Nid::SECP384R1)?,
            CertType::Ed25519 => PKey::generate_ed25519()?,
        };
        let cert = self_signed(&key, kind).with_context(|| format!("generating a {} certificate", kind.name()))?;
        Ok(Identity { key, cert })
    }
}

fn ec_key(curve: Nid) -> Result<PKey<Private>> {
    let group = EcGroup::from_curve_name(curve)?;
    Ok(PKey::from_ec_key(EcKey::generate(&group)?)?)
}

fn self_signed(key: &PKey<Private>, kind: CertType) -> Result<X509> {
    let mut name = X509NameBuilder::new()?;
    name.append_entry_by_nid(Nid::COMMONNAME, &format!("cipherbench {}", kind.name()))?;
    let name = name.build();
    let mut b = X509::builder()?;
    b.set_version(2)?;
    let mut serial = BigNum::new()?;
    serial.rand(64, MsbOption::MAYBE_ZERO, false)?;
    let serial = serial.to_asn1_integer()?;
    b.set_serial_number(&serial)?;
    b.set_subject_name(&name)?;
    b.set_issuer_name(&name)?;
    b.set_pubkey(key)?;
    let (from, until) = (Asn1Time::days_from_now(0)?, Asn1Time::days_from_now(2)?);
    b.set_not_before(&from)?;
    b.set_not_after(&until)?;
    b.append_extension(BasicConstraints::new().critical().build()?)?;
    let san = SubjectAlternativeName::new()
        .dns("localhost")
        .ip("127.0.0.1")
        .build(&b.x509v3_context(None, None))?;
    b.append_extension(san)?;
    // Ed25519 signs the message itself: no separate digest.
    let digest = match kind {
        CertType::Ed25519 => MessageDigest::null(),
        _ => MessageDigest::sha256(),
    };
    b.sign(key, digest)?;
    Ok(b.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_generates_a_verifying_self_signed_cert() {
        for kind in CertType::ALL {
            let id = Identity::generate(kind).unwrap();
            assert!(id.cert.verify(&id.key).unwrap(), "{kind:?}");
            assert!(id.cert.public_key().unwrap().public_eq(&id.key));
            assert_eq!(CertType::parse(kind.name()), Some(kind));
        }
        let rsa = Identity::generate(CertType::Rsa3072).unwrap();
        assert_eq!(rsa.key.bits(), 3072);
        assert_eq!(CertType::parse("P-384"), Some(CertType::EcdsaP384));
        assert_eq!(CertType::parse("dsa"), None);
    }
}

//! What was measured, and everything the rest of the program knows about each
//! kind of measurement that is only a fact about it: one descriptor per kind
//! ([`Facts`]), in one table ([`Kind::facts`]).
//!
//! A new kind is a variant of [`Kind`], its line in that table (the compiler
//! asks for it), and the code that truly is new: how it is measured, and its
//! table or chart if the generic ones (`report::html::charts`'s "the rest",
//! CSV's columns from the model) do not suffice. Its JSON name, the word
//! reports use for it, its family (what `--for` target and which ranking it
//! feeds), whether it is a feature check and the subject fields its records
//! fill are read from here, not restated where they are used.

use super::{ResultRecord, Subject};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Primitive,
    File,
    TlsBulk,
    TlsHandshake,
    TlsAccept,
    SshBulk,
    SshHandshake,
    SshAccept,
}

/// The protocol family a kind belongs to: which tables show it and which
/// rankings (`recommend::tls`, `recommend::ssh`) and contests read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Library primitives (`speed`): ciphers, AEADs, digests, MACs, KEMs.
    Primitive,
    /// Whole files encrypted and decrypted (`file`).
    File,
    /// TLS connections (`tls`).
    Tls,
    /// OpenSSH connections (`ssh`).
    Ssh,
}

/// The facts of one kind.
#[derive(Debug)]
pub struct Facts {
    /// As the document spells it (`tls-bulk`): `kind` in JSON and CSV, the
    /// history's `results.kind` column, the keys of `settings.noise`, round keys
    /// and ranking bases (`tls-bulk <subject>`).
    pub name: &'static str,
    /// As reports say it in prose (chart captions: `TLS bulk`).
    pub title: &'static str,
    pub family: Family,
    /// Whether its records say what both sides accept (`metric: accepted`,
    /// 1 or 0) rather than how fast something is.
    pub feature_check: bool,
    /// The [`Subject`] fields its records fill, in model order; the others stay
    /// absent. One subject of the kind is identified by these fields together
    /// with the metric (`ResultRecord::same_subject`), as pooling, comparing
    /// and merging do.
    pub fields: &'static [&'static str],
}

const TLS_FIELDS: &[&str] = &[
    "op",
    "bytes",
    "library",
    "server_library",
    "threads",
    "protocol",
    "suite",
    "openssl_name",
    "group",
    "cert",
    "kex",
    "path",
    "mode",
];

impl Kind {
    /// Every kind, in declaration order.
    #[cfg_attr(not(test), allow(dead_code))]
    pub const ALL: [Kind; 8] = [
        Kind::Primitive,
        Kind::File,
        Kind::TlsBulk,
        Kind::TlsHandshake,
        Kind::TlsAccept,
        Kind::SshBulk,
        Kind::SshHandshake,
        Kind::SshAccept,
    ];

    /// The one table of per-kind facts.
    pub fn facts(self) -> &'static Facts {
        match self {
            Kind::Primitive => &Facts {
                name: "primitive",
                title: "Primitive",
                family: Family::Primitive,
                feature_check: false,
                fields: &["algorithm", "op", "bytes", "library", "threads"],
            },
            Kind::File => &Facts {
                name: "file",
                title: "File",
                family: Family::File,
                feature_check: false,
                fields: &["algorithm", "op", "bytes", "library", "path", "mode"],
            },
            Kind::TlsBulk => &Facts {
                name: "tls-bulk",
                title: "TLS bulk",
                family: Family::Tls,
                feature_check: false,
                fields: TLS_FIELDS,
            },
            Kind::TlsHandshake => &Facts {
                name: "tls-handshake",
                title: "TLS handshake",
                family: Family::Tls,
                feature_check: false,
                fields: TLS_FIELDS,
            },
            Kind::TlsAccept => &Facts {
                name: "tls-accept",
                title: "TLS acceptance",
                family: Family::Tls,
                feature_check: true,
                fields: TLS_FIELDS,
            },
            Kind::SshBulk => &Facts {
                name: "ssh-bulk",
                title: "SSH bulk",
                family: Family::Ssh,
                feature_check: false,
                fields: &["cipher", "mac", "kex", "hostkey", "mode"],
            },
            Kind::SshHandshake => &Facts {
                name: "ssh-handshake",
                title: "SSH handshake",
                family: Family::Ssh,
                feature_check: false,
                fields: &["kex", "hostkey"],
            },
            Kind::SshAccept => &Facts {
                name: "ssh-accept",
                title: "SSH acceptance",
                family: Family::Ssh,
                feature_check: true,
                fields: &["cipher", "mac", "kex", "hostkey"],
            },
        }
    }

    /// As the document spells it (`tls-bulk`).
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// As reports say it (`TLS bulk`).
    pub fn title(self) -> &'static str {
        self.facts().title
    }

    pub fn family(self) -> Family {
        self.facts().family
    }

    pub fn is_tls(self) -> bool {
        self.family() == Family::Tls
    }

    pub fn is_ssh(self) -> bool {
        self.family() == Family::Ssh
    }

    /// Whether its figures say something about speed (feature checks do not).
    pub fn is_speed(self) -> bool {
        !self.facts().feature_check
    }

    /// The subject fields its records fill (see [`Facts::fields`]).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn fields(self) -> &'static [&'static str] {
        self.facts().fields
    }
}

impl ResultRecord {
    /// How a ranking names the record it stands on, and a contest finds it
    /// again: `<kind> <subject label>` (`tls-bulk TLSv1.3 TLS_AES_128_GCM_SHA256 …`).
    pub fn basis(&self) -> String {
        format!("{} {}", self.kind.name(), super::subject_label(self))
    }

    /// Whether `other` is a figure of the same subject: the same kind, metric
    /// and subject fields (what pooling and merging a later pass go by).
    pub fn same_subject(&self, other: &ResultRecord) -> bool {
        self.kind == other.kind && self.metric == other.metric && self.subject == other.subject
    }
}

/// Typed constructors: each fills its kind's fields and leaves the rest absent.
impl Subject {
    /// A `primitive` subject: `bytes` is `None` for per-operation primitives
    /// (KEMs, signatures).
    pub fn primitive(algorithm: &str, op: &str, bytes: Option<u64>, library: &str, threads: usize) -> Subject {
        Subject {
            algorithm: Some(algorithm.to_string()),
            op: Some(op.to_string()),
            bytes,
            library: Some(library.to_string()),
            threads: Some(threads),
            ..Default::default()
        }
    }

    /// An `ssh-bulk` subject: a cipher (with its MAC unless an AEAD carries
    /// one) over a key exchange and host key.
    pub fn ssh_bulk(cipher: &str, mac: Option<&str>, kex: &str, hostkey: Option<&str>) -> Subject {
        Subject {
            cipher: Some(cipher.to_string()),
            mac: mac.map(str::to_string),
            kex: Some(kex.to_string()),
            hostkey: hostkey.map(str::to_string),
            ..Default::default()
        }
    }

    /// An `ssh-handshake` subject: a key exchange, with the host key when one
    /// was forced.
    pub fn ssh_handshake(kex: &str, hostkey: Option<&str>) -> Subject {
        Subject {
            kex: Some(kex.to_string()),
            hostkey: hostkey.map(str::to_string),
            ..Default::default()
        }
    }

    /// The names of the fields this subject fills, in model order.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn filled(&self) -> Vec<String> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Document;

    #[test]
    fn every_kind_is_listed_once_and_its_name_is_its_json_spelling() {
        for (i, k) in Kind::ALL.iter().enumerate() {
            assert_eq!(serde_json::to_value(k).unwrap(), serde_json::json!(k.name()));
            assert_eq!(serde_json::from_value::<Kind>(serde_json::json!(k.name())).unwrap(), *k);
            assert!(!Kind::ALL[..i].contains(k));
            assert!(!k.title().is_empty());
        }
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        let mut sorted = names.clone();
        sorted.dedup();
        assert_eq!(names.len(), sorted.len());
    }

    #[test]
    fn fields_are_subject_fields_in_model_order() {
        let all = Subject {
            algorithm: Some(String::new()),
            op: Some(String::new()),
            bytes: Some(0),
            library: Some(String::new()),
            server_library: Some(String::new()),
            threads: Some(0),
            protocol: Some(String::new()),
            suite: Some(String::new()),
            openssl_name: Some(String::new()),
            group: Some(String::new()),
            cert: Some(String::new()),
            cipher: Some(String::new()),
            mac: Some(String::new()),
            kex: Some(String::new()),
            hostkey: Some(String::new()),
            path: Some(String::new()),
            mode: Some(String::new()),
        }
        .filled();
        for k in Kind::ALL {
            let at: Vec<usize> = k
                .fields()
                .iter()
                .map(|f| all.iter().position(|a| a == f).unwrap_or_else(|| panic!("{f} is no subject field")))
                .collect();
            assert!(at.windows(2).all(|w| w[0] < w[1]), "{k:?}: {:?}", k.fields());
        }
    }

    #[test]
    fn constructors_fill_only_their_kinds_fields() {
        let fits = |k: Kind, s: &Subject| s.filled().iter().all(|f| k.fields().contains(&f.as_str()));
        assert!(fits(
            Kind::Primitive,
            &Subject::primitive("aes-128-gcm", "encrypt", Some(16384), "openssl", 1)
        ));
        let ssh = Subject::ssh_bulk("aes128-ctr", Some("hmac-sha2-256"), "curve25519-sha256", Some("ssh-ed25519"));
        assert!(fits(Kind::SshBulk, &ssh));
        assert_eq!(ssh.filled(), ["cipher", "mac", "kex", "hostkey"]);
        let hs = Subject::ssh_handshake("mlkem768x25519-sha256", None);
        assert!(fits(Kind::SshHandshake, &hs));
        assert_eq!(hs.filled(), ["kex"]);
    }

    /// The stored fixture's records fill only their kind's fields.
    #[test]
    fn a_stored_documents_subjects_fit_their_kinds() {
        let doc: Document = serde_json::from_str(include_str!("../../tests/fixtures/documents/run.json")).unwrap();
        for r in &doc.results {
            for f in r.subject.filled() {
                assert!(r.kind.fields().contains(&f.as_str()), "{:?} fills {f}", r.kind);
            }
        }
    }

    #[test]
    fn families_and_feature_checks() {
        let tls: Vec<Kind> = Kind::ALL.into_iter().filter(|k| k.is_tls()).collect();
        assert_eq!(tls, [Kind::TlsBulk, Kind::TlsHandshake, Kind::TlsAccept]);
        let ssh: Vec<Kind> = Kind::ALL.into_iter().filter(|k| k.is_ssh()).collect();
        assert_eq!(ssh, [Kind::SshBulk, Kind::SshHandshake, Kind::SshAccept]);
        let checks: Vec<Kind> = Kind::ALL.into_iter().filter(|k| !k.is_speed()).collect();
        assert_eq!(checks, [Kind::TlsAccept, Kind::SshAccept]);
        assert_eq!(Kind::File.family(), Family::File);
    }
}

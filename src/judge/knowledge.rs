//! Loading, validating and querying the knowledge base in `data/knowledge/`.
//!
//! The loader checks the invariants that make the data trustworthy (every entry has a
//! reason, every reason cites an existing source, levels match their reasons, names
//! and codes are unique) when it loads, so a broken data file can never reach a
//! report: `Knowledge::builtin()` fails instead, and so do the tests.

use super::entries::{
    parse_code, Cert, Entry, Group, Primitive, Protocol, Reason, Source, SshCipher, SshHostKey, SshKex, SshMac, TlsSuite,
};
use super::verdict::{Domain, Level, Reference, SourceOpinion, Subject, Verdict, VerdictReason};
use super::{check_schema, parse_toml, JudgeError};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

#[cfg(test)]
mod coverage_tests;
#[cfg(test)]
mod tests;
mod validate;

const SOURCES_FILE: &str = "data/knowledge/sources.toml";
const REASONS_FILE: &str = "data/knowledge/reasons.toml";
const TLS_FILE: &str = "data/knowledge/tls.toml";
const SUITES_FILE: &str = "data/knowledge/tls_suites.toml";
const SSH_FILE: &str = "data/knowledge/ssh.toml";
const PRIMITIVES_FILE: &str = "data/knowledge/primitives.toml";

/// The text of the six knowledge files. `builtin()` gives the embedded copies; tests
/// (or a future `--knowledge DIR`) can substitute any of them.
#[derive(Debug, Clone, Copy)]
pub struct KnowledgeTexts<'a> {
    pub sources: &'a str,
    pub reasons: &'a str,
    pub tls: &'a str,
    pub tls_suites: &'a str,
    pub ssh: &'a str,
    pub primitives: &'a str,
}

impl KnowledgeTexts<'static> {
    /// The files compiled into the binary.
    pub fn builtin() -> Self {
        KnowledgeTexts {
            sources: include_str!("../../data/knowledge/sources.toml"),
            reasons: include_str!("../../data/knowledge/reasons.toml"),
            tls: include_str!("../../data/knowledge/tls.toml"),
            tls_suites: include_str!("../../data/knowledge/tls_suites.toml"),
            ssh: include_str!("../../data/knowledge/ssh.toml"),
            primitives: include_str!("../../data/knowledge/primitives.toml"),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SourcesFile {
    schema_version: u32,
    #[serde(default)]
    source: BTreeMap<String, Source>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReasonsFile {
    schema_version: u32,
    revision: String,
    #[serde(default)]
    reason: BTreeMap<String, Reason>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    schema_version: u32,
    #[serde(default)]
    protocol: Vec<Protocol>,
    #[serde(default)]
    group: Vec<Group>,
    #[serde(default)]
    cert: Vec<Cert>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuitesFile {
    schema_version: u32,
    #[serde(default)]
    suite: Vec<TlsSuite>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SshFile {
    schema_version: u32,
    #[serde(default)]
    cipher: Vec<SshCipher>,
    #[serde(default)]
    mac: Vec<SshMac>,
    #[serde(default)]
    kex: Vec<SshKex>,
    #[serde(default)]
    hostkey: Vec<SshHostKey>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PrimitivesFile {
    schema_version: u32,
    #[serde(default)]
    primitive: Vec<Primitive>,
}

/// One table of entries; names are unique within a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Table {
    Protocol,
    Suite,
    Group,
    Cert,
    SshCipher,
    SshMac,
    SshKex,
    SshHostKey,
    Primitive,
}

impl Table {
    const ALL: [Table; 9] = [
        Table::Protocol,
        Table::Suite,
        Table::Group,
        Table::Cert,
        Table::SshCipher,
        Table::SshMac,
        Table::SshKex,
        Table::SshHostKey,
        Table::Primitive,
    ];

    fn of(domain: Domain) -> Table {
        match domain {
            Domain::Protocol => Table::Protocol,
            Domain::Tls13Suite | Domain::Tls12Suite => Table::Suite,
            Domain::Group => Table::Group,
            Domain::Cert => Table::Cert,
            Domain::SshCipher => Table::SshCipher,
            Domain::SshMac => Table::SshMac,
            Domain::SshKex => Table::SshKex,
            Domain::SshHostkey => Table::SshHostKey,
            Domain::Primitive => Table::Primitive,
        }
    }

    /// Where the table lives, for error messages.
    fn label(self) -> &'static str {
        match self {
            Table::Protocol => "tls.toml [[protocol]]",
            Table::Suite => "tls_suites.toml [[suite]]",
            Table::Group => "tls.toml [[group]]",
            Table::Cert => "tls.toml [[cert]]",
            Table::SshCipher => "ssh.toml [[cipher]]",
            Table::SshMac => "ssh.toml [[mac]]",
            Table::SshKex => "ssh.toml [[kex]]",
            Table::SshHostKey => "ssh.toml [[hostkey]]",
            Table::Primitive => "primitives.toml [[primitive]]",
        }
    }
}

fn as_dyn<T: Entry>(entries: &[T]) -> Vec<&dyn Entry> {
    entries.iter().map(|e| e as &dyn Entry).collect()
}

/// Formats code bytes the way `openssl ciphers -V` prints them: `0xC0,0x2F`.
fn format_code(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("0x{b:02X}")).collect::<Vec<_>>().join(",")
}

/// The parsed, validated knowledge base with case-insensitive name indices.
#[derive(Debug, Clone)]
pub struct Knowledge {
    revision: String,
    sources: BTreeMap<String, Source>,
    reasons: BTreeMap<String, Reason>,
    protocols: Vec<Protocol>,
    suites: Vec<TlsSuite>,
    groups: Vec<Group>,
    certs: Vec<Cert>,
    ssh_ciphers: Vec<SshCipher>,
    ssh_macs: Vec<SshMac>,
    ssh_kex: Vec<SshKex>,
    ssh_hostkeys: Vec<SshHostKey>,
    primitives: Vec<Primitive>,
    index: HashMap<(Table, String), usize>,
    suite_codes: HashMap<Vec<u8>, usize>,
}

impl Knowledge {
    /// The knowledge base compiled into the binary.
    pub fn builtin() -> Result<Knowledge, JudgeError> {
        Knowledge::from_texts(KnowledgeTexts::builtin())
    }

    /// Parses and validates the six knowledge files.
    pub fn from_texts(texts: KnowledgeTexts<'_>) -> Result<Knowledge, JudgeError> {
        let sources: SourcesFile = parse_toml(texts.sources, SOURCES_FILE)?;
        check_schema(sources.schema_version, SOURCES_FILE)?;
        let reasons: ReasonsFile = parse_toml(texts.reasons, REASONS_FILE)?;
        check_schema(reasons.schema_version, REASONS_FILE)?;
        let tls: TlsFile = parse_toml(texts.tls, TLS_FILE)?;
        check_schema(tls.schema_version, TLS_FILE)?;
        let suites: SuitesFile = parse_toml(texts.tls_suites, SUITES_FILE)?;
        check_schema(suites.schema_version, SUITES_FILE)?;
        let ssh: SshFile = parse_toml(texts.ssh, SSH_FILE)?;
        check_schema(ssh.schema_version, SSH_FILE)?;
        let primitives: PrimitivesFile = parse_toml(texts.primitives, PRIMITIVES_FILE)?;
        check_schema(primitives.schema_version, PRIMITIVES_FILE)?;

        let mut kb = Knowledge {
            revision: reasons.revision,
            sources: sources.source,
            reasons: reasons.reason,
            protocols: tls.protocol,
            suites: suites.suite,
            groups: tls.group,
            certs: tls.cert,
            ssh_ciphers: ssh.cipher,
            ssh_macs: ssh.mac,
            ssh_kex: ssh.kex,
            ssh_hostkeys: ssh.hostkey,
            primitives: primitives.primitive,
            index: HashMap::new(),
            suite_codes: HashMap::new(),
        };
        let mut problems = kb.build_indices();
        problems.extend(kb.validate());
        if problems.is_empty() {
            Ok(kb)
        } else {
            Err(JudgeError::Invalid {
                origin: "data/knowledge".to_string(),
                problems,
            })
        }
    }

    // ---- queries ---------------------------------------------------------------

    /// The knowledge base revision (a date), shown in reports.
    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// The verdict for `name` in `domain`: a fresh value, `Unrated` when unknown.
    /// Name matching ignores case and accepts every alias (IANA, OpenSSL or GnuTLS
    /// names for suites). `Tls12Suite` and `Tls13Suite` search the same suite table;
    /// the verdict reports the suite's actual domain.
    pub fn judge(&self, domain: Domain, name: &str) -> Verdict {
        match self.entry(domain, name) {
            Some(entry) => self.verdict_for(entry),
            None => Verdict::unrated(domain, name.trim()),
        }
    }

    /// The verdict for a TLS suite by IANA, OpenSSL or GnuTLS name (or `0xC0,0x2F` code).
    pub fn judge_tls_suite(&self, name: &str) -> Verdict {
        match self.tls_suite(name) {
            Some(suite) => self.verdict_for(suite),
            None => Verdict::unrated(Domain::Tls12Suite, name.trim()),
        }
    }

    /// Every entry of a domain, in data-file order.
    pub fn entries(&self, domain: Domain) -> Vec<&dyn Entry> {
        self.table_entries(Table::of(domain))
            .into_iter()
            .filter(|e| e.domain() == domain)
            .collect()
    }

    /// The entry behind `name` in `domain`, if any.
    pub fn entry(&self, domain: Domain, name: &str) -> Option<&dyn Entry> {
        let table = Table::of(domain);
        if table == Table::Suite {
            return self.tls_suite(name).map(|s| s as &dyn Entry);
        }
        let i = self.find(table, name)?;
        self.table_entries(table).get(i).copied()
    }

    /// The other name of the same algorithm in `domain` (see `Entry::same_as`),
    /// whichever of the two entries says so.
    pub fn twin(&self, domain: Domain, name: &str) -> Option<String> {
        if let Some(t) = self.entry(domain, name).and_then(|e| e.same_as().map(str::to_string)) {
            return Some(t);
        }
        self.table_entries(Table::of(domain))
            .into_iter()
            .find(|e| e.same_as().is_some_and(|t| t.eq_ignore_ascii_case(name)))
            .map(|e| e.name().to_string())
    }

    /// Builds the verdict for one entry, resolving reason and source ids.
    pub fn verdict_for(&self, entry: &dyn Entry) -> Verdict {
        let names = entry.names();
        Verdict {
            subject: Subject {
                domain: entry.domain(),
                name: entry.name().to_string(),
                aliases: names.iter().skip(1).map(|n| n.to_string()).collect(),
            },
            level: entry.level(),
            follows: Some(self.reference(entry.follows())),
            reasons: entry.reason_ids().iter().map(|id| self.verdict_reason(id)).collect(),
            opinions: entry
                .opinions()
                .iter()
                .map(|o| SourceOpinion {
                    source: self.reference(&o.source),
                    level: o.level,
                    reason: self.verdict_reason(&o.reason),
                })
                .collect(),
            key_bits: entry.key_bits(),
            note: entry.note().map(str::to_string),
        }
    }

    /// A protocol version by any spelling (`TLSv1.2`, `tls1_2`, `VERS-TLS1.2`...).
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn protocol(&self, name: &str) -> Option<&Protocol> {
        self.find(Table::Protocol, name).and_then(|i| self.protocols.get(i))
    }

    /// A suite by IANA, OpenSSL (current or old) or GnuTLS name, or by its code
    /// written as `0xC0,0x2F`.
    pub fn tls_suite(&self, name: &str) -> Option<&TlsSuite> {
        if let Some(i) = self.find(Table::Suite, name) {
            return self.suites.get(i);
        }
        let bytes = parse_code(name.trim())?;
        self.suite_codes.get(&bytes).and_then(|&i| self.suites.get(i))
    }

    /// A TLS suite by its two-byte code, e.g. `0xC02F`.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn tls_suite_by_code(&self, code: u16) -> Option<&TlsSuite> {
        self.suite_codes
            .get(code.to_be_bytes().as_slice())
            .and_then(|&i| self.suites.get(i))
    }

    /// A suite's IANA and OpenSSL names by its code (the name table discover reads
    /// `gnutls-cli -l` with).
    pub fn suite_names_by_code(&self, code: u16) -> Option<(String, Option<String>)> {
        self.tls_suite_by_code(code).map(|s| (s.iana.clone(), s.openssl.clone()))
    }

    /// A key-exchange group (`x25519`, `P-256`, `prime256v1`, `GROUP-FFDHE2048`...).
    pub fn group(&self, name: &str) -> Option<&Group> {
        self.find(Table::Group, name).and_then(|i| self.groups.get(i))
    }

    /// A certificate type (`rsa-2048`, `rsa:2048`, `ecdsa-p256`, `ed25519`...).
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn cert(&self, name: &str) -> Option<&Cert> {
        self.find(Table::Cert, name).and_then(|i| self.certs.get(i))
    }

    /// An OpenSSH cipher by its OpenSSH name.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn ssh_cipher(&self, name: &str) -> Option<&SshCipher> {
        self.find(Table::SshCipher, name).and_then(|i| self.ssh_ciphers.get(i))
    }

    /// An OpenSSH MAC by its OpenSSH name.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn ssh_mac(&self, name: &str) -> Option<&SshMac> {
        self.find(Table::SshMac, name).and_then(|i| self.ssh_macs.get(i))
    }

    /// An OpenSSH key exchange method by its OpenSSH name.
    pub fn ssh_kex(&self, name: &str) -> Option<&SshKex> {
        self.find(Table::SshKex, name).and_then(|i| self.ssh_kex.get(i))
    }

    /// An OpenSSH host-key algorithm by its OpenSSH name.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn ssh_hostkey(&self, name: &str) -> Option<&SshHostKey> {
        self.find(Table::SshHostKey, name).and_then(|i| self.ssh_hostkeys.get(i))
    }

    /// A primitive by OpenSSL EVP name (`aes-128-gcm`, `sha256`, `hmac-sha256`...).
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn primitive(&self, name: &str) -> Option<&Primitive> {
        self.find(Table::Primitive, name).and_then(|i| self.primitives.get(i))
    }

    pub fn protocols(&self) -> &[Protocol] {
        &self.protocols
    }
    pub fn tls_suites(&self) -> &[TlsSuite] {
        &self.suites
    }
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn primitives(&self) -> &[Primitive] {
        &self.primitives
    }

    /// A source by id.
    pub fn source(&self, id: &str) -> Option<&Source> {
        self.sources.get(id)
    }

    /// A reason by id.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn reason(&self, id: &str) -> Option<&Reason> {
        self.reasons.get(id)
    }

    /// All sources, by id.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn sources(&self) -> &BTreeMap<String, Source> {
        &self.sources
    }

    /// All reasons, by id.
    #[cfg_attr(not(test), allow(dead_code))] // used by the data's invariant tests
    pub fn reasons(&self) -> &BTreeMap<String, Reason> {
        &self.reasons
    }

    /// A source id resolved to a citation (the id alone if the source is missing,
    /// which validation rules out for loaded data).
    pub fn reference(&self, id: &str) -> Reference {
        match self.sources.get(id) {
            Some(s) => Reference {
                id: id.to_string(),
                title: s.title.clone(),
                url: s.url.clone(),
            },
            None => Reference {
                id: id.to_string(),
                title: id.to_string(),
                url: String::new(),
            },
        }
    }

    // ---- internals -------------------------------------------------------------

    fn verdict_reason(&self, id: &str) -> VerdictReason {
        match self.reasons.get(id) {
            Some(r) => VerdictReason {
                id: id.to_string(),
                text: r.text.clone(),
                ceiling: r.ceiling,
                caveat: r.caveat,
                references: r.refs.iter().map(|s| self.reference(s)).collect(),
            },
            None => VerdictReason {
                id: id.to_string(),
                text: id.to_string(),
                ceiling: Level::Unrated,
                caveat: false,
                references: Vec::new(),
            },
        }
    }

    fn find(&self, table: Table, name: &str) -> Option<usize> {
        self.index.get(&(table, name.trim().to_ascii_lowercase())).copied()
    }

    fn table_entries(&self, table: Table) -> Vec<&dyn Entry> {
        match table {
            Table::Protocol => as_dyn(&self.protocols),
            Table::Suite => as_dyn(&self.suites),
            Table::Group => as_dyn(&self.groups),
            Table::Cert => as_dyn(&self.certs),
            Table::SshCipher => as_dyn(&self.ssh_ciphers),
            Table::SshMac => as_dyn(&self.ssh_macs),
            Table::SshKex => as_dyn(&self.ssh_kex),
            Table::SshHostKey => as_dyn(&self.ssh_hostkeys),
            Table::Primitive => as_dyn(&self.primitives),
        }
    }
}

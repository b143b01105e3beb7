//! The choice: what to configure for one protocol, best first, under every name
//! the target software use, and the [`Emitter`] interface that turns it into one
//! software's lines. Each software's emitter lives in its own folder
//! (`software/NAME/emit.rs`, registered once in `software::ALL`); recommend is
//! handed the emitters to write lines with and never names a software itself.

pub use crate::model::SshLists;
use serde::{Deserialize, Serialize};

/// A TLS suite under every name the targets use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteNames {
    pub iana: String,
    pub openssl: Option<String>,
    pub gnutls: Option<String>,
    /// OpenSSL's Kx/Au/Enc labels (GnuTLS priority strings are built from them).
    pub kx: String,
    pub au: String,
    pub enc: String,
    pub enc_bits: u32,
    pub mac: String,
}

/// A TLS group under OpenSSL's and GnuTLS's names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupNames {
    pub name: String,
    pub openssl: Option<String>,
    pub gnutls: Option<String>,
    /// A post-quantum hybrid (X25519MLKEM768 ...): written in a tier of its own,
    /// before the classic groups, where the library takes tiers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub post_quantum: bool,
}

/// What to configure for TLS, best first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsChoice {
    /// Canonical protocol names, oldest first: `TLSv1.2`, `TLSv1.3`.
    pub protocols: Vec<String>,
    pub tls13: Vec<SuiteNames>,
    /// Suites of TLS 1.2 and earlier, in configuration order.
    pub tls12: Vec<SuiteNames>,
    pub groups: Vec<GroupNames>,
    /// The host's OpenSSL takes tiered group lists (3.5's `/` and `*`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tiers: bool,
    /// The groups the host's GnuTLS accepts (`GROUP-…`); `None` when not known,
    /// and then the GnuTLS string names no post-quantum group (an older GnuTLS
    /// refuses the whole string for one name it does not know).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gnutls_groups: Option<Vec<String>>,
    /// The groups of the host's OpenSSL default (`auto`) a group line could name
    /// (see [`auto_groups`]), when the policy accepts every group of that default;
    /// `None` otherwise or when not known: the line is then always written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_groups: Option<Vec<String>>,
}

/// The note that stands for a directive the software's default already sets as
/// the choice would (`# ssl_ecdh_curve: the default (auto) already does this`):
/// no line is written, the tool says so, and `check`'s patch turns an installed
/// line of that directive into this note (the default then applies).
pub fn default_note(directive: &str, default: &str) -> String {
    format!("# {directive}: the default{default} {DEFAULT_NOTE_END}")
}

/// How every [`default_note`] ends.
pub const DEFAULT_NOTE_END: &str = "already does this";

/// The directive a [`default_note`] stands for (`ssl_ecdh_curve`), `None` for any
/// other line.
pub fn default_note_directive(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("# ").or_else(|| line.trim().strip_prefix("; "))?;
    let (directive, says) = rest.split_once(": ")?;
    (says.starts_with("the default") && says.ends_with(DEFAULT_NOTE_END)).then_some(directive)
}

/// The groups of the host's OpenSSL default (`capabilities.openssl.default_groups`,
/// asked of its libssl by handshakes) that a group line can name (ECDHE and hybrid
/// post-quantum groups; the finite-field ones are never ranked), by the knowledge
/// base's names; `None` when that default is not known, names a group the
/// knowledge base does not know, or has one the policy refuses (`auto` would then
/// offer it: the line must be written).
pub fn auto_groups(caps: &crate::model::Capabilities, k: &crate::judge::Knowledge, policy: &crate::judge::Policy) -> Option<Vec<String>> {
    use crate::judge::{Domain, GroupKind};
    let d = caps.openssl.as_ref()?.default_groups.as_ref()?;
    let mut out = Vec::new();
    for name in d {
        let g = k.group(name)?;
        if !policy.allows(&k.judge(Domain::Group, &g.name)).allowed {
            return None;
        }
        if matches!(g.kind, GroupKind::Ecdhe | GroupKind::HybridPq) && !out.contains(&g.name) {
            out.push(g.name.clone());
        }
    }
    Some(out)
}

impl TlsChoice {
    /// OpenSSL's TLS ≤1.2 cipher list (`SSL_CTX_set_cipher_list`).
    pub fn openssl_tls12(&self) -> String {
        self.tls12.iter().filter_map(|s| s.openssl.clone()).collect::<Vec<_>>().join(":")
    }
    /// OpenSSL's TLS 1.3 list (`SSL_CTX_set_ciphersuites`): IANA names.
    pub fn openssl_tls13(&self) -> String {
        self.tls13.iter().map(|s| s.iana.clone()).collect::<Vec<_>>().join(":")
    }
    /// Groups as OpenSSL spells them, colon-separated. Where the library takes
    /// tiers (OpenSSL 3.5), the post-quantum hybrids form the first tier and the
    /// classic groups the second, each tier's first group with a key share (`*`):
    /// a server then picks a hybrid whenever the client has one, even when the
    /// client's first key share is X25519 (a HelloRetryRequest), as OpenSSL 3.5's
    /// own default does; a flat list would settle for X25519.
    pub fn openssl_groups(&self) -> String {
        let names = |pq: Option<bool>| -> Vec<String> {
            self.groups
                .iter()
                .filter(|g| pq.is_none_or(|pq| g.post_quantum == pq))
                .filter_map(|g| g.openssl.clone())
                .collect()
        };
        let (pq, classic) = (names(Some(true)), names(Some(false)));
        if !self.tiers || pq.is_empty() || classic.is_empty() {
            return names(None).join(":");
        }
        format!("*{}/*{}", pq.join(":"), classic.join(":"))
    }
    /// Groups as GnuTLS names them, post-quantum hybrids first, only those the
    /// host's GnuTLS accepts (no hybrid when that is not known).
    pub fn gnutls_groups(&self) -> Vec<String> {
        let accepted = |g: &GroupNames, n: &String| match &self.gnutls_groups {
            Some(l) => l.iter().any(|x| x.eq_ignore_ascii_case(n)),
            None => !g.post_quantum,
        };
        let mut v: Vec<&GroupNames> = self.groups.iter().collect();
        v.sort_by_key(|g| !g.post_quantum);
        v.into_iter().filter_map(|g| g.gnutls.clone().filter(|n| accepted(g, n))).collect()
    }
    /// Whether a group line would only restate the host's OpenSSL default: the
    /// choice's groups are exactly the default's (which the policy accepts, see
    /// [`auto_groups`]) and, where one is a post-quantum hybrid, the library takes
    /// tiers (its default then puts the hybrid first, with a key share).
    pub fn groups_are_default(&self) -> bool {
        let Some(d) = &self.default_groups else { return false };
        let mine: Vec<&str> = self.groups.iter().map(|g| g.name.as_str()).collect();
        let pq = self.groups.iter().any(|g| g.post_quantum);
        !mine.is_empty() && mine.len() == d.len() && d.iter().all(|n| mine.iter().any(|m| m.eq_ignore_ascii_case(n))) && (self.tiers || !pq)
    }
    /// The group line: `directive VALUE` (`sep` between them, `end` after), or the
    /// note that the default already does this (`default` names it, e.g. ` (auto)`).
    pub fn groups_line(&self, directive: &str, sep: &str, end: &str, default: &str) -> Option<String> {
        if self.groups.is_empty() {
            None
        } else if self.groups_are_default() {
            Some(default_note(directive, default))
        } else {
            Some(format!("{directive}{sep}{}{end}", self.openssl_groups()))
        }
    }
    pub fn has(&self, protocol: &str) -> bool {
        self.protocols.iter().any(|p| p == protocol)
    }
    /// Lowest protocol version, e.g. `TLSv1.2`.
    pub fn min_protocol(&self) -> Option<&str> {
        self.protocols.first().map(String::as_str)
    }
}

/// What to configure for SSH, best first (OpenSSH names).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshChoice {
    pub ciphers: Vec<String>,
    pub macs: Vec<String>,
    pub kex: Vec<String>,
    /// Host-key algorithms the policy allows, best first: what a client accepts.
    pub hostkeys: Vec<String>,
    /// Those of `hostkeys` the server has a key for (see `server_hostkeys` in
    /// recommend): what sshd may offer. `None` when its keys could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_hostkeys: Option<Vec<String>>,
    /// Why `server_hostkeys` is `None` (not root, no /run/sshd, a fleet class
    /// ...), for the comment that says so; `None` when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_hostkeys_unread: Option<String>,
    /// The host's sshd's own defaults (`sshd -T`, empty configuration): the sshd
    /// block keeps to them; `None` when not known, and then the sshd block
    /// configures no list at all (see [`SshChoice::server_lists`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_defaults: Option<SshLists>,
    /// Why `server_defaults` is `None`, for the comment that says so; `None`
    /// when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_defaults_unread: Option<String>,
    /// The policy asks for algorithms sshd disables by default (legacy): the sshd
    /// block may then go beyond its defaults.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub beyond_defaults: bool,
    /// The directives (`Ciphers`, `MACs`, `KexAlgorithms`, `HostKeyAlgorithms`)
    /// whose list the run measured nothing of: configured all the same, every
    /// option the policy allows in the policy's order, and each line says so
    /// ([`unmeasured_note`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmeasured: Vec<String>,
}

/// The comment before a line whose list the run measured nothing of
/// (`# MACs: not measured in this run; ordered by the policy`).
pub fn unmeasured_note(directive: &str) -> String {
    format!("# {directive}: {UNMEASURED_NOTE_END}")
}

/// How every [`unmeasured_note`] ends.
pub const UNMEASURED_NOTE_END: &str = "not measured in this run; ordered by the policy";

impl SshChoice {
    /// The lists the sshd block configures: the choice's, in its ranked order
    /// (post-quantum key exchange first, then the fastest), kept within sshd's own
    /// defaults (unless the policy asks for more, `beyond_defaults`); `hostkeys`
    /// from `server_hostkeys` (empty when unknown). The client's order decides what
    /// SSH negotiates, but the server's first entry is what a reader takes for the
    /// answer, so it is the fastest.
    ///
    /// Without sshd's own defaults, every list is empty (sshd keeps its own, for
    /// any policy): the choice comes from the client's lists, and a line built
    /// from them could bring back what this sshd no longer offers (OpenSSH 10
    /// dropped finite-field Diffie-Hellman from its server default, not from its
    /// client) or name what it does not know (sshd would then refuse to start).
    /// Keeping sshd's default is never less secure than its default and locks
    /// no one out; the ssh `Host` block still carries the order, and the
    /// client's order is what SSH negotiates.
    pub fn server_lists(&self) -> SshLists {
        if self.server_defaults.is_none() {
            return SshLists::default();
        }
        let d = self.server_defaults.as_ref().filter(|_| !self.beyond_defaults);
        let keep = |v: &[String], dv: Option<&Vec<String>>| -> Vec<String> {
            match dv {
                // The ranked order (the fastest first, as `ssh` and `ssh -G` show it),
                // only what sshd offers by default.
                Some(dv) => v.iter().filter(|a| dv.contains(a)).cloned().collect(),
                None => v.to_vec(),
            }
        };
        SshLists {
            ciphers: keep(&self.ciphers, d.map(|d| &d.ciphers)),
            macs: keep(&self.macs, d.map(|d| &d.macs)),
            kex: keep(&self.kex, d.map(|d| &d.kex)),
            hostkeys: keep(self.server_hostkeys.as_deref().unwrap_or_default(), d.map(|d| &d.hostkeys)),
        }
    }

    /// `Ciphers`, `MACs`, `KexAlgorithms`, `HostKeyAlgorithms` lines (empty lists
    /// left out), each list the run measured nothing of after its
    /// [`unmeasured_note`].
    pub fn lines(&self, indent: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (k, v) in [
            ("Ciphers", &self.ciphers),
            ("MACs", &self.macs),
            ("KexAlgorithms", &self.kex),
            ("HostKeyAlgorithms", &self.hostkeys),
        ] {
            if v.is_empty() {
                continue;
            }
            if self.unmeasured.iter().any(|u| u == k) {
                out.push(format!("{indent}{}", unmeasured_note(k)));
            }
            out.push(format!("{indent}{k} {}", v.join(",")));
        }
        out
    }
}

/// The choice for one protocol family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Tls(TlsChoice),
    Ssh(SshChoice),
}

/// A target software's config lines for a choice.
pub trait Emitter {
    /// The `--for` name, e.g. `nginx`.
    fn target(&self) -> &'static str;
    /// Where the lines go, e.g. `nginx.conf (server or http block)`.
    fn location(&self) -> &'static str;
    /// The lines, or `None` when the target does not speak this protocol.
    fn emit(&self, choice: &Choice) -> Option<Vec<String>>;
}

/// One target's lines for a choice.
pub struct Emitted {
    pub target: &'static str,
    pub location: &'static str,
    pub lines: Vec<String>,
}

/// The lines of each of `emitters` for `choice`, in their order (the caller's
/// pick and order: `software::emitters`); emitters that do not speak the
/// choice's protocol have none.
pub fn lines(choice: &Choice, emitters: &[&dyn Emitter]) -> Vec<Emitted> {
    emitters
        .iter()
        .filter_map(|e| {
            e.emit(choice).map(|lines| Emitted {
                target: e.target(),
                location: e.location(),
                lines,
            })
        })
        .collect()
}

/// Protocol names as Apache and nginx write them (`TLSv1.2`, `TLSv1`).
pub fn server_protocol_name(canonical: &str) -> String {
    if canonical == "TLSv1.0" {
        "TLSv1".to_string()
    } else {
        canonical.to_string()
    }
}

#[cfg(test)]
pub(crate) mod testdata {
    use super::*;

    /// A choice close to the intermediate policy's, built from the knowledge base.
    pub fn tls() -> TlsChoice {
        let k = crate::judge::Knowledge::builtin().unwrap();
        let names = |list: &[&str]| {
            list.iter()
                .map(|n| super::super::suite_names(k.tls_suite(n).unwrap_or_else(|| panic!("{n}"))))
                .collect::<Vec<_>>()
        };
        TlsChoice {
            protocols: vec!["TLSv1.2".into(), "TLSv1.3".into()],
            tls13: names(&["TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"]),
            tls12: names(&[
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            ]),
            groups: ["x25519", "secp256r1", "secp384r1"]
                .iter()
                .map(|g| super::super::group_names(k.group(g).unwrap()))
                .collect(),
            tiers: false,
            gnutls_groups: None,
            default_groups: None,
        }
    }

    pub fn ssh() -> SshChoice {
        SshChoice {
            ciphers: vec![
                "aes128-gcm@openssh.com".into(),
                "chacha20-poly1305@openssh.com".into(),
                "aes256-ctr".into(),
            ],
            macs: vec!["hmac-sha2-256-etm@openssh.com".into(), "umac-128-etm@openssh.com".into()],
            kex: vec!["curve25519-sha256".into(), "diffie-hellman-group16-sha512".into()],
            hostkeys: vec!["ssh-ed25519".into(), "rsa-sha2-512".into()],
            server_hostkeys: Some(vec!["ssh-ed25519".into()]),
            server_hostkeys_unread: None,
            server_defaults: Some(openssh10()),
            server_defaults_unread: None,
            beyond_defaults: false,
            unmeasured: Vec::new(),
        }
    }

    /// OpenSSH 10.0's sshd defaults (`sshd -T -f /dev/null` on Debian 13).
    pub fn openssh10() -> SshLists {
        let l = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
        SshLists {
            ciphers: l("chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr"),
            macs: l("umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1"),
            kex: l("mlkem768x25519-sha256,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521"),
            hostkeys: l("ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::software::gnutls::emit as gnutls;

    fn lines(target: &str, c: &Choice) -> Option<Vec<String>> {
        crate::software::find(target).unwrap().lines(c)
    }

    #[test]
    fn ssh_blocks_list_each_algorithm_once_in_order() {
        let c = Choice::Ssh(testdata::ssh());
        let client = lines("ssh", &c).unwrap();
        assert_eq!(client[0], "Host HOST");
        assert_eq!(
            client[1],
            "    Ciphers aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes256-ctr"
        );
        // The client accepts every allowed host key; sshd offers only the keys it has.
        assert_eq!(client[4], "    HostKeyAlgorithms ssh-ed25519,rsa-sha2-512");
        let server = lines("sshd", &c).unwrap();
        assert_eq!(server.len(), 4);
        // Within OpenSSH 10's sshd defaults: no finite-field Diffie-Hellman.
        assert_eq!(server[2], "KexAlgorithms curve25519-sha256");
        assert_eq!(server[3], "HostKeyAlgorithms ssh-ed25519");
    }

    fn with_hybrid(tiers: bool, gnutls_groups: Option<Vec<String>>) -> TlsChoice {
        let k = crate::judge::Knowledge::builtin().unwrap();
        let mut t = testdata::tls();
        t.groups.push(super::super::group_names(k.group("X25519MLKEM768").unwrap()));
        TlsChoice { tiers, gnutls_groups, ..t }
    }

    /// Where OpenSSL takes tiers (3.5), the hybrid is a tier of its own, first:
    /// a client whose first key share is X25519 still lands on it.
    #[test]
    fn openssl_groups_put_hybrids_in_a_first_tier_where_the_library_takes_tiers() {
        assert_eq!(
            with_hybrid(true, None).openssl_groups(),
            "*X25519MLKEM768/*x25519:secp256r1:secp384r1"
        );
        assert_eq!(
            with_hybrid(false, None).openssl_groups(),
            "x25519:secp256r1:secp384r1:X25519MLKEM768"
        );
        assert_eq!(testdata::tls().openssl_groups(), "x25519:secp256r1:secp384r1");
        let nginx = lines("nginx", &Choice::Tls(with_hybrid(true, None))).unwrap();
        assert!(
            nginx.contains(&"ssl_ecdh_curve *X25519MLKEM768/*x25519:secp256r1:secp384r1;".to_string()),
            "{nginx:?}"
        );
    }

    /// The GnuTLS string names only groups that GnuTLS accepts: the host's own
    /// list (from `gnutls-cli --list`), checked by its own parser; no hybrid when
    /// that list is not known.
    #[test]
    fn gnutls_names_only_groups_its_gnutls_accepts() {
        let unknown = gnutls::priority(&with_hybrid(true, None));
        assert!(!unknown.contains("MLKEM"), "{unknown}");
        let Some(host) = crate::discover::gnutls::accepted_groups() else {
            return crate::testing::missing("gnutls-cli (gnutls-bin)");
        };
        let p = gnutls::priority(&with_hybrid(true, Some(host.clone())));
        let has_mlkem = host.iter().any(|g| g.contains("MLKEM"));
        assert_eq!(p.contains("MLKEM"), has_mlkem, "{p}");
        let out = std::process::Command::new("gnutls-cli")
            .args(["--priority", &p, "-l"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{p}: {}", String::from_utf8_lossy(&out.stderr));
        let named = gnutls::priority(&with_hybrid(
            true,
            Some(vec!["GROUP-X25519-MLKEM768".into(), "GROUP-X25519".into()]),
        ));
        assert!(named.contains("+GROUP-X25519-MLKEM768:+GROUP-X25519:"), "{named}");
    }

    /// A group list that is exactly the host's OpenSSL default (`auto`) is not
    /// written: each OpenSSL target says so instead; one group more or less, or no
    /// tiers with a hybrid, and the line is written.
    #[test]
    fn a_group_line_that_restates_the_default_is_a_note() {
        let d35 = Some(vec![
            "X25519MLKEM768".into(),
            "x25519".into(),
            "secp256r1".into(),
            "secp384r1".into(),
        ]);
        let auto = TlsChoice {
            default_groups: d35.clone(),
            ..with_hybrid(true, None)
        };
        assert!(auto.groups_are_default());
        let c = Choice::Tls(auto.clone());
        for (target, note) in [
            ("nginx", "# ssl_ecdh_curve: the default (auto) already does this"),
            ("apache", "# SSLOpenSSLConfCmd Curves: the default already does this"),
            ("haproxy", "# ssl-default-bind-curves: the default already does this"),
        ] {
            let l = lines(target, &c).unwrap();
            assert!(l.contains(&note.to_string()), "{target}: {l:?}");
            assert!(!l.iter().any(|x| x.contains("X25519MLKEM768")), "{target}: {l:?}");
            assert_eq!(default_note_directive(note), Some(note[2..].split(':').next().unwrap()));
        }
        // stunnel's own default is not OpenSSL's: its line is always written.
        let l = lines("stunnel", &c).unwrap();
        assert!(l.iter().any(|x| x.starts_with("curves = *X25519MLKEM768/")), "{l:?}");
        // The default has a group the choice has not (or no tiers for the hybrid): written.
        let mut more = d35.clone().unwrap();
        more.push("x448".into());
        for t in [
            TlsChoice {
                default_groups: Some(more),
                ..auto.clone()
            },
            TlsChoice {
                tiers: false,
                ..auto.clone()
            },
            TlsChoice {
                default_groups: None,
                ..auto.clone()
            },
        ] {
            assert!(!t.groups_are_default());
            let l = lines("nginx", &Choice::Tls(t)).unwrap();
            assert!(l.iter().any(|x| x.starts_with("ssl_ecdh_curve ")), "{l:?}");
        }
        assert_eq!(default_note_directive("ssl_ecdh_curve auto;"), None);
        assert_eq!(default_note_directive("# KexAlgorithms left out: none"), None);
    }

    /// `auto_groups`: the default's ECDHE and hybrid groups, only when the policy
    /// accepts every group of it (ffdhe2048 included).
    #[test]
    fn auto_groups_need_the_policy_to_accept_the_whole_default() {
        let k = crate::judge::Knowledge::builtin().unwrap();
        let caps = |d: &[&str]| crate::model::Capabilities {
            openssl: Some(crate::model::OpenSslCapabilities {
                default_groups: Some(d.iter().map(|s| s.to_string()).collect()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let d35 = [
            "X25519MLKEM768",
            "X25519",
            "P-256",
            "X448",
            "P-384",
            "P-521",
            "ffdhe2048",
            "ffdhe3072",
        ];
        let modern = crate::judge::Policy::builtin("modern").unwrap();
        assert_eq!(auto_groups(&caps(&d35), &k, &modern), None);
        let none = crate::judge::Policy::builtin("none").unwrap();
        let got = auto_groups(&caps(&d35), &k, &none).unwrap();
        assert_eq!(got.len(), 6, "{got:?}");
        assert!(got.iter().all(|g| !g.starts_with("ffdhe")), "{got:?}");
        let four = ["X25519MLKEM768", "X25519", "P-256", "P-384"];
        assert_eq!(auto_groups(&caps(&four), &k, &modern).map(|v| v.len()), Some(4));
        assert_eq!(auto_groups(&crate::model::Capabilities::default(), &k, &none), None);
    }
}

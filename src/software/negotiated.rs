//! "Validated means negotiated": the one rule by which what a target's real
//! software negotiated with its emitted lines is judged against the answer.
//!
//! Each target runs its own software in its own module
//! ([`super::Target::negotiate`]): a server started with the lines on 127.0.0.1
//! and a default client (the software's usual peer), or a client run with the
//! lines against a private server that honours the client's order. What it saw
//! comes back here as a [`Seen`], and [`judge`] says whether that is the
//! answer's first choice ([`Want`], the recommendation's `choice`), in words a
//! reader can take as they are: "a default client negotiates TLSv1.3
//! TLS_AES_128_GCM_SHA256 over X25519MLKEM768 (the answer's first choice)".
//! Anything else is a [`super::Refused`] that says what was negotiated first.

use super::validate::Refused;
use std::collections::BTreeMap;
use std::time::Duration;

/// The answer a target's lines were made from: the recommendation's `choice`
/// (`tls13_suites`, `groups`, `ssh_ciphers` ... best first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Want {
    pub lists: BTreeMap<String, Vec<String>>,
}

impl Want {
    pub fn new(lists: &BTreeMap<String, Vec<String>>) -> Want {
        Want { lists: lists.clone() }
    }
    /// The list `name`, best first (empty when the answer has none).
    pub fn list(&self, name: &str) -> &[String] {
        self.lists.get(name).map(Vec::as_slice).unwrap_or(&[])
    }
    /// The first of list `name`.
    pub fn first(&self, name: &str) -> Option<&str> {
        self.list(name).first().map(String::as_str)
    }
    /// Whether the answer allows TLS 1.3 (no `protocols` list: it does).
    pub fn tls13(&self) -> bool {
        let p = self.list("protocols");
        p.is_empty() || p.iter().any(|v| v == "TLSv1.3")
    }
}

/// What the real software did with its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Negotiation {
    /// It negotiated the answer's first choice: what it negotiated, in words.
    Negotiated(String),
    /// It was not run, and why (not installed, no time left, no private peer).
    NotRun(String),
}

/// What one handshake of the real software negotiated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Tls {
        version: String,
        /// IANA name (`TLS_AES_128_GCM_SHA256`).
        suite: String,
        group: Option<String>,
    },
    // sshd and ssh (target/sshd.rs, target/ssh.rs).
    Ssh {
        cipher: String,
        /// `None`: implicit in an AEAD cipher.
        mac: Option<String>,
        kex: String,
    },
}

impl std::fmt::Display for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Seen::Tls { version, suite, group } => {
                write!(f, "{version} {suite}")?;
                if let Some(g) = group {
                    write!(f, " over {g}")?;
                }
                Ok(())
            }
            Seen::Ssh { cipher, mac, kex } => {
                write!(f, "{cipher}")?;
                if let Some(m) = mac {
                    write!(f, " with {m}")?;
                }
                write!(f, " over {kex}")
            }
        }
    }
}

/// Who negotiated, in the words of the sentence: `a default client` (a server
/// target's usual peer) or the software itself (`curl`, `ssh`).
pub struct Who<'a> {
    /// The target (`nginx`), which starts a refusal.
    pub software: &'a str,
    /// The subject of the sentence: "a default client", "curl".
    pub peer: &'a str,
    /// The groups (or SSH key exchanges) the other end can take, where the
    /// answer's first may not be among them (a default client offers only its
    /// own): the expected one is then the answer's first that is. `None`: all.
    pub other_end_takes: Option<&'a [String]>,
}

/// The answer's first choice as `seen` should read: the first TLS 1.3 suite
/// (or TLS 1.2 one when TLS 1.2 was negotiated) and the first group the other
/// end takes; for SSH the first cipher, MAC (none with an AEAD cipher) and key
/// exchange.
fn expected(seen: &Seen, want: &Want, takes: Option<&[String]>) -> Vec<(&'static str, String, String)> {
    let first_taken = |list: &str| -> Option<String> {
        want.list(list)
            .iter()
            .find(|g| takes.is_none_or(|t| t.iter().any(|x| crate::aliases::same(x, g))))
            .cloned()
    };
    let mut out = Vec::new();
    match seen {
        Seen::Tls { version, suite, group } => {
            let list = if version == "TLSv1.3" { "tls13_suites" } else { "tls12_suites" };
            if want.tls13() && version != "TLSv1.3" && !want.list("tls13_suites").is_empty() {
                out.push(("protocol", version.clone(), "TLSv1.3".to_string()));
            }
            if let Some(w) = want.first(list) {
                out.push(("suite", suite.clone(), w.to_string()));
            }
            if let (Some(g), Some(w)) = (group, first_taken("groups")) {
                out.push(("group", g.clone(), w));
            }
        }
        Seen::Ssh { cipher, mac, kex } => {
            if let Some(w) = want.first("ssh_ciphers") {
                out.push(("cipher", cipher.clone(), w.to_string()));
            }
            if let (Some(m), Some(w)) = (mac, want.first("ssh_macs")) {
                out.push(("MAC", m.clone(), w.to_string()));
            }
            if let Some(w) = first_taken("ssh_kex") {
                out.push(("key exchange", kex.clone(), w));
            }
        }
    }
    out
}

/// Judges what the real software negotiated against the answer: `Ok` with
/// "PEER negotiates SEEN (the answer's first choice)", or a [`Refused`] that
/// starts with what it negotiated and names each place it differs.
pub fn judge(who: &Who, seen: &Seen, want: &Want) -> Result<String, Refused> {
    let differs: Vec<String> = expected(seen, want, who.other_end_takes)
        .into_iter()
        .filter(|(_, got, w)| !crate::aliases::same(got, w))
        .map(|(what, _, w)| format!("{what} {w}"))
        .collect();
    if differs.is_empty() {
        return Ok(format!("{} negotiates {seen} (the answer's first choice)", who.peer));
    }
    Err(Refused(format!(
        "{}: {} negotiated {seen}, not the answer's first choice ({}): these lines do not give the answer in the installed {}",
        who.software,
        who.peer,
        differs.join(", "),
        who.software
    )))
}

/// How long one negotiation may take at most: starting the software, one
/// handshake, stopping it.
pub const AT_MOST: Duration = Duration::from_secs(20);

/// The time a negotiation may take: [`AT_MOST`], or what is left of the run's
/// deadline less a second, and never past the run's budget itself (the grace is
/// the report's, not the software's: a main job whose measuring spent its budget
/// runs nothing); `None` (with why, for [`Negotiation::NotRun`]) when that is
/// under `least`.
pub fn time_for(least: Duration) -> Result<Duration, String> {
    let mut within = crate::deadline::run().left().saturating_sub(Duration::from_secs(1)).min(AT_MOST);
    if let Some(budget) = crate::deadline::budget_left() {
        within = within.min(Duration::from_secs_f64(budget.0.max(0.0)));
    }
    if within < least {
        return Err("the run's budget left no time to run it (`cipherbench recommend` of the stored run runs it)".to_string());
    }
    Ok(within)
}

/// The certificate a private server needs to give the answer's first choice:
/// ECDSA P-256 where the first TLS 1.2 suite is an ECDSA one, else RSA 2048
/// (any certificate serves TLS 1.3).
pub fn cert_for(want: &Want) -> crate::backend::openssl::certs::CertType {
    use crate::backend::openssl::certs::CertType;
    match want.first("tls12_suites") {
        Some(s) if s.contains("ECDSA") && (want.list("tls13_suites").is_empty() || !want.tls13()) => CertType::EcdsaP256,
        _ => CertType::Rsa2048,
    }
}

/// One handshake by the installed libssl's default client (nothing
/// configured: a server's usual peer) with a private server on
/// 127.0.0.1:`port`.
pub fn default_client(port: u16, within: Duration) -> anyhow::Result<Seen> {
    let h = crate::discover::installed::libssl::default_client_handshake(&format!("127.0.0.1:{port}"), None, within)
        .map_err(|e| anyhow::anyhow!("a default client could not connect: {e}"))?;
    Ok(Seen::Tls {
        version: h.version,
        suite: h.suite,
        group: h.group,
    })
}

/// The groups an OpenSSL group list names, in its order: `X25519:P-256`, or
/// with OpenSSL 3.5's tiers `*X25519MLKEM768/*X25519:secp256r1` (a `*` marks a
/// key share, `/` ends a tier, `?` lets an unknown name pass; a `-` name is
/// taken out, not named).
pub fn openssl_groups(list: &str) -> Vec<String> {
    list.split([':', '/'])
        .map(|g| g.trim().trim_start_matches(['*', '?']))
        .filter(|g| !g.is_empty() && !g.starts_with('-'))
        .map(str::to_string)
        .collect()
}

/// One run of a real TLS client against a private recording server on
/// 127.0.0.1 (`backend::recording`: it accepts everything and honours the
/// client's order, `talk` after the handshake): `command` is the client's
/// command line for the server's port, run with its input closed and within
/// `within`. What the server recorded of the client's handshake, or a
/// [`Refused`] when there was none (the client could not connect with its
/// lines: what it said and what the server said).
pub fn client_run(
    software: &str,
    talk: crate::backend::recording::Talk,
    within: Duration,
    command: impl FnOnce(u16) -> std::process::Command,
) -> anyhow::Result<Seen> {
    use crate::backend::recording::{RecordingServer, Spec};
    let server = RecordingServer::start(
        Spec {
            connections: 1,
            within,
            tls12_only: false,
        },
        talk,
    )?;
    let mut cmd = command(server.port());
    let said = crate::backend::process::output_by(&mut cmd, crate::deadline::op(within))
        .map_err(|e| anyhow::anyhow!("cannot run {software}: {e}"))?
        .ok_or_else(|| anyhow::anyhow!("{software} did not finish within {} s and was stopped", within.as_secs()))?;
    let Some(got) = server.settled(Duration::from_secs(2)).into_iter().next() else {
        let ran = crate::discover::installed::Ran {
            ok: said.status.success(),
            out: String::new(),
            err: String::from_utf8_lossy(&said.stderr).into_owned(),
            status: crate::backend::process::describe_status(said.status),
        };
        let server = server
            .failures()
            .first()
            .map(|f| format!("; the private server: {}", crate::untrusted::shown(f)))
            .unwrap_or_default();
        return Err(Refused(format!(
            "{software}: {software} could not connect with these lines ({}){server}",
            ran.why()
        ))
        .into());
    };
    Ok(Seen::Tls {
        version: got.protocol,
        suite: got.suite,
        group: got.group,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want() -> Want {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Want::new(&BTreeMap::from([
            ("protocols".to_string(), l(&["TLSv1.2", "TLSv1.3"])),
            (
                "tls13_suites".to_string(),
                l(&["TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"]),
            ),
            ("tls12_suites".to_string(), l(&["TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"])),
            ("groups".to_string(), l(&["X25519MLKEM768", "x25519", "secp256r1"])),
            (
                "ssh_ciphers".to_string(),
                l(&["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"]),
            ),
            ("ssh_macs".to_string(), l(&["hmac-sha2-256-etm@openssh.com"])),
            ("ssh_kex".to_string(), l(&["mlkem768x25519-sha256", "curve25519-sha256"])),
        ]))
    }

    fn tls(version: &str, suite: &str, group: &str) -> Seen {
        Seen::Tls {
            version: version.into(),
            suite: suite.into(),
            group: Some(group.into()),
        }
    }

    const WHO: Who = Who {
        software: "nginx",
        peer: "a default client",
        other_end_takes: None,
    };

    #[test]
    fn the_first_choice_reads_as_negotiated_in_any_spelling() {
        let said = judge(&WHO, &tls("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256", "X25519MLKEM768"), &want()).unwrap();
        assert_eq!(
            said,
            "a default client negotiates TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 over X25519MLKEM768 (the answer's first choice)"
        );
        let ssh = Seen::Ssh {
            cipher: "aes128-gcm@openssh.com".into(),
            mac: None,
            kex: "mlkem768x25519-sha256".into(),
        };
        assert!(judge(&WHO, &ssh, &want()).is_ok());
    }

    /// Another suite, another group, or TLS 1.2 where the answer has TLS 1.3
    /// are refusals that start with what was negotiated and name each difference.
    #[test]
    fn anything_else_is_said_first_and_refused() {
        let e = judge(&WHO, &tls("TLSv1.3", "TLS_AES_256_GCM_SHA384", "X25519"), &want())
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("nginx: a default client negotiated TLSv1.3 TLS_AES_256_GCM_SHA384 over X25519, not"),
            "{e}"
        );
        assert!(
            e.contains("suite TLS_CHACHA20_POLY1305_SHA256") && e.contains("group X25519MLKEM768"),
            "{e}"
        );
        let e = judge(
            &WHO,
            &tls("TLSv1.2", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "X25519MLKEM768"),
            &want(),
        )
        .unwrap_err()
        .0;
        assert!(e.contains("protocol TLSv1.3"), "{e}");
        let ssh = Seen::Ssh {
            cipher: "chacha20-poly1305@openssh.com".into(),
            mac: None,
            kex: "curve25519-sha256".into(),
        };
        let e = judge(&WHO, &ssh, &want()).unwrap_err().0;
        assert!(
            e.contains("cipher aes128-gcm@openssh.com") && e.contains("key exchange mlkem768x25519-sha256"),
            "{e}"
        );
    }

    #[test]
    fn an_openssl_group_list_is_read_with_its_tiers() {
        assert_eq!(openssl_groups("X25519:P-256"), ["X25519", "P-256"]);
        assert_eq!(
            openssl_groups("*X25519MLKEM768/*X25519:?secp256r1:-secp384r1"),
            ["X25519MLKEM768", "X25519", "secp256r1"]
        );
    }

    /// A default client that cannot offer the answer's first group is held to
    /// the first one it can.
    #[test]
    fn the_other_end_is_held_to_the_first_it_can_take() {
        let takes = ["x25519".to_string(), "secp256r1".to_string()];
        let who = Who {
            other_end_takes: Some(&takes),
            ..WHO
        };
        assert!(judge(&who, &tls("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256", "X25519"), &want()).is_ok());
        assert!(judge(&WHO, &tls("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256", "X25519"), &want()).is_err());
    }
}

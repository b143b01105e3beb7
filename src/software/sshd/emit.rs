//! OpenSSH server: an `sshd_config` block (put it before any `Match` block).

use crate::recommend::choice::{default_note, unmeasured_note, Choice, Emitter, SshChoice};

pub struct Sshd;

impl Emitter for Sshd {
    fn target(&self) -> &'static str {
        "sshd"
    }
    fn location(&self) -> &'static str {
        "/etc/ssh/sshd_config (before any Match block), then `sshd -t`"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Ssh(s) = choice else { return None };
        Some(server_lines(s))
    }
}

/// The sshd block: `HostKeyAlgorithms` lists only algorithms of keys the server
/// has, and is left out (sshd keeps its default, which uses every key it has)
/// when that would be empty or the keys are unknown: a config line must never
/// leave sshd without a usable host key.
///
/// Never beyond sshd's own defaults ([`SshChoice::server_lists`]): no line
/// brings back what OpenSSH dropped (OpenSSH 10's finite-field Diffie-Hellman).
/// A list with nothing left is left out, with a comment.
pub fn server_lines(c: &SshChoice) -> Vec<String> {
    let within = c.server_lists();
    // A list that is sshd's default as a set is not written (the client's
    // order decides what SSH negotiates): the note says so.
    let d = c.server_defaults.as_ref().filter(|_| !c.beyond_defaults);
    let same = |mine: &Vec<String>, dv: Option<&Vec<String>>| {
        dv.is_some_and(|dv| !mine.is_empty() && mine.len() == dv.len() && dv.iter().all(|a| mine.contains(a)))
    };
    let unless_default = |mine: &Vec<String>, dv: Option<&Vec<String>>| if same(mine, dv) { Vec::new() } else { mine.clone() };
    let mut out = SshChoice {
        ciphers: unless_default(&within.ciphers, d.map(|d| &d.ciphers)),
        macs: unless_default(&within.macs, d.map(|d| &d.macs)),
        kex: unless_default(&within.kex, d.map(|d| &d.kex)),
        hostkeys: Vec::new(),
        ..c.clone()
    }
    .lines("");
    for (name, mine, dv) in [
        ("Ciphers", &within.ciphers, d.map(|d| &d.ciphers)),
        ("MACs", &within.macs, d.map(|d| &d.macs)),
        ("KexAlgorithms", &within.kex, d.map(|d| &d.kex)),
    ] {
        if same(mine, dv) {
            out.push(default_note(name, ""));
        }
    }
    if c.server_defaults.is_none() {
        out.push(format!(
            "# Ciphers, MACs, KexAlgorithms and HostKeyAlgorithms left out: this sshd's own defaults are not known ({}), and a list could go beyond them; sshd keeps its own (the ssh Host block carries the order)",
            why(&c.server_defaults_unread)
        ));
        return out;
    }
    for (name, mine, all) in [
        ("Ciphers", &within.ciphers, &c.ciphers),
        ("MACs", &within.macs, &c.macs),
        ("KexAlgorithms", &within.kex, &c.kex),
    ] {
        if mine.is_empty() && !all.is_empty() {
            out.push(format!(
                "# {name} left out: none of the policy's is among this sshd's defaults; sshd keeps its own"
            ));
        }
    }
    let server_hostkeys = c.server_hostkeys.as_ref().map(|_| within.hostkeys.clone());
    match &server_hostkeys {
        Some(h) if !h.is_empty() => {
            if c.unmeasured.iter().any(|u| u == "HostKeyAlgorithms") {
                out.push(unmeasured_note("HostKeyAlgorithms"));
            }
            out.push(format!("HostKeyAlgorithms {}", h.join(",")));
        }
        Some(_) => out.push(
            "# HostKeyAlgorithms left out: none of this server's host keys is allowed by the policy; add one (ssh-keygen -t ed25519 -f /etc/ssh/ssh_host_ed25519_key) and run recommend again".to_string(),
        ),
        None => out.push(format!(
            "# HostKeyAlgorithms left out: this server's host keys are not known ({}); sshd keeps offering the keys it has",
            why(&c.server_hostkeys_unread)
        )),
    }
    out
}

/// A recorded cause, or that the document recorded none (an older export).
fn why(cause: &Option<String>) -> String {
    cause.clone().unwrap_or_else(|| "the run did not record why".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SshLists;
    use crate::recommend::choice::testdata::{self, openssh10};

    fn lines(target: &str, c: &Choice) -> Option<Vec<String>> {
        crate::software::find(target).unwrap().lines(c)
    }

    /// Without sshd's own defaults (`sshd -T` could not run), the sshd block
    /// configures no list, for any policy: one built from the client's lists
    /// could bring back what this sshd dropped (OpenSSH 10's finite-field
    /// Diffie-Hellman). The comment names the recorded cause; the client keeps
    /// its block.
    #[test]
    fn without_sshd_defaults_no_sshd_list_and_the_cause_is_named() {
        // What the real `sshd -T` said as root without /run/sshd (OpenSSH 9.2).
        let cause = "`sshd -T` refused (it said: Missing privilege separation directory: /run/sshd)";
        for beyond_defaults in [false, true] {
            let c = SshChoice {
                server_defaults: None,
                server_defaults_unread: Some(cause.into()),
                beyond_defaults,
                ..testdata::ssh()
            };
            let server = lines("sshd", &Choice::Ssh(c.clone())).unwrap();
            assert_eq!(server.len(), 1, "{server:?}");
            assert!(
                server[0].starts_with("# Ciphers, MACs, KexAlgorithms and HostKeyAlgorithms left out"),
                "{server:?}"
            );
            assert!(server[0].contains(cause), "{server:?}");
            assert!(!server.iter().any(|l| l.contains("group16")), "{server:?}");
            assert_eq!(c.server_lists(), SshLists::default());
            let client = lines("ssh", &Choice::Ssh(c)).unwrap();
            assert!(client.iter().any(|l| l.starts_with("    KexAlgorithms ")), "{client:?}");
        }
    }

    /// sshd is never left without a host key: no line at all when the server has
    /// none the policy allows, or when its keys are unknown.
    #[test]
    fn sshd_host_key_line_is_never_empty() {
        for server_hostkeys in [Some(Vec::new()), None] {
            let c = Choice::Ssh(SshChoice {
                server_hostkeys,
                ..testdata::ssh()
            });
            let server = lines("sshd", &c).unwrap();
            assert!(!server.iter().any(|l| l.starts_with("HostKeyAlgorithms")), "{server:?}");
            assert!(server.iter().any(|l| l.starts_with("# HostKeyAlgorithms left out")), "{server:?}");
        }
    }

    /// The host keys' comment names the cause the run recorded (as root, sshd
    /// may be unreadable for want of /run/sshd, never for want of root), and
    /// claims none when the run recorded none.
    #[test]
    fn unread_host_keys_name_the_recorded_cause() {
        let comment = |server_hostkeys_unread: Option<&str>| {
            let c = Choice::Ssh(SshChoice {
                server_hostkeys: None,
                server_hostkeys_unread: server_hostkeys_unread.map(str::to_string),
                ..testdata::ssh()
            });
            let server = lines("sshd", &c).unwrap();
            server.into_iter().find(|l| l.starts_with("# HostKeyAlgorithms left out")).unwrap()
        };
        let as_root = "`sshd -T` refused (it said: Missing privilege separation directory: /run/sshd)";
        let l = comment(Some(as_root));
        assert!(l.contains(as_root) && !l.contains("needs root"), "{l}");
        let l = comment(None);
        assert!(l.contains("the run did not record why") && !l.contains("root"), "{l}");
    }

    /// sshd's lines bring back nothing its defaults dropped (OpenSSH 10's
    /// finite-field Diffie-Hellman), in the ranked order; a legacy policy may.
    #[test]
    fn sshd_lines_stay_within_the_installed_defaults() {
        let choice = SshChoice {
            kex: vec![
                "mlkem768x25519-sha256".into(),
                "curve25519-sha256".into(),
                "diffie-hellman-group16-sha512".into(),
                "diffie-hellman-group-exchange-sha256".into(),
            ],
            server_defaults: Some(openssh10()),
            ..testdata::ssh()
        };
        let server = lines("sshd", &Choice::Ssh(choice.clone())).unwrap();
        assert!(
            server.contains(&"KexAlgorithms mlkem768x25519-sha256,curve25519-sha256".to_string()),
            "{server:?}"
        );
        // The ranked order, not the defaults' (chacha20-poly1305 first on OpenSSH).
        assert_eq!(server[0], "Ciphers aes128-gcm@openssh.com,chacha20-poly1305@openssh.com,aes256-ctr");
        // The client keeps its list: OpenSSH's client still offers those by default.
        let client = lines("ssh", &Choice::Ssh(choice.clone())).unwrap();
        assert!(client.iter().any(|l| l.contains("diffie-hellman-group16-sha512")), "{client:?}");
        let legacy = SshChoice {
            beyond_defaults: true,
            ..choice.clone()
        };
        let server = lines("sshd", &Choice::Ssh(legacy)).unwrap();
        assert!(
            server.iter().any(|l| l.starts_with("KexAlgorithms") && l.contains("group16")),
            "{server:?}"
        );
        // Nothing of the policy's among the defaults: no line (sshd keeps its own), said so.
        let none = SshChoice {
            kex: vec!["diffie-hellman-group14-sha256".into()],
            ..choice
        };
        let server = lines("sshd", &Choice::Ssh(none)).unwrap();
        assert!(!server.iter().any(|l| l.starts_with("KexAlgorithms")), "{server:?}");
        assert!(server.iter().any(|l| l.starts_with("# KexAlgorithms left out")), "{server:?}");
    }

    /// An sshd list that is sshd's default as a set is a note, not a line.
    #[test]
    fn sshd_lists_equal_to_the_defaults_are_notes() {
        let d = openssh10();
        let choice = SshChoice {
            ciphers: d.ciphers.iter().rev().cloned().collect(),
            kex: vec!["mlkem768x25519-sha256".into(), "curve25519-sha256".into()],
            server_defaults: Some(d.clone()),
            ..testdata::ssh()
        };
        let server = lines("sshd", &Choice::Ssh(choice.clone())).unwrap();
        assert!(!server.iter().any(|l| l.starts_with("Ciphers ")), "{server:?}");
        assert!(
            server.contains(&"# Ciphers: the default already does this".to_string()),
            "{server:?}"
        );
        assert!(server.iter().any(|l| l.starts_with("KexAlgorithms ")), "{server:?}");
        assert!(server.iter().any(|l| l.starts_with("MACs ")), "{server:?}");
        // A legacy policy (beyond the defaults) writes every list.
        let legacy = SshChoice {
            beyond_defaults: true,
            ..choice
        };
        let server = lines("sshd", &Choice::Ssh(legacy)).unwrap();
        assert!(server.iter().any(|l| l.starts_with("Ciphers ")), "{server:?}");
    }
}

//! The diff for a remote server (`ssh --host`, `tls --connect`): there is no file
//! to read, so the server's offer comes from the wire and "now" from a real
//! default client:
//! - **SSH:** `ssh -vv` prints the server's KEXINIT proposal (its lists, in its
//!   order) and what this machine's client negotiated, before authentication; the
//!   user's own ssh configuration applies, as it does to their logins.
//! - **TLS:** the scan of `tls --connect` found what the server accepts and in
//!   which order; `openssl s_client` (the default OpenSSL client) shows what it
//!   negotiates.
//!
//! The recommendation then comes from the same run's measurements, which only
//! contain what the server accepts: the fastest option it accepts that the policy
//! allows.

use super::negotiate::{Negotiated, TlsOffer};
use super::{Current, Offer};
use crate::discover::installed::{Config, Installed, SshConfig, TlsConfig};
use crate::software::openssl::read::OfferedSuite;
use anyhow::{bail, Result};
use std::process::Command;
use std::time::Duration;

/// Pseudo-algorithms that only signal extensions.
fn real(alg: &&str) -> bool {
    !alg.starts_with("ext-info-") && !alg.starts_with("kex-strict-")
}

/// The lines of one KEXINIT proposal as `ssh -vv` prints them, after its
/// "local client" or "peer server" label.
const PROPOSAL_FIELDS: [&str; 12] = [
    "KEX algorithms:",
    "host key algorithms:",
    "ciphers ctos:",
    "ciphers stoc:",
    "MACs ctos:",
    "MACs stoc:",
    "compression ctos:",
    "compression stoc:",
    "languages ctos:",
    "languages stoc:",
    "first_kex_follows",
    "reserved",
];

/// `ssh -vv` output → (server lists, client lists, negotiated).
///
/// A list belongs to a side only inside the proposal its label opens: the block
/// ends at its last field or at the first line that is not one of its fields.
/// OpenSSH 10 prints the client's proposal a second time, unlabelled, after
/// NEWKEYS; OpenSSH 9 does not. Only the first proposal of each side is kept (a
/// rekey repeats them).
pub fn parse_ssh_debug(text: &str) -> Option<(SshConfig, SshConfig, Negotiated)> {
    let mut client = SshConfig::default();
    let mut server = SshConfig {
        server: true,
        ..Default::default()
    };
    // The side whose proposal is being read: Some(true) the server's.
    let mut side: Option<bool> = None;
    let (mut seen_client, mut seen_server) = (false, false);
    let mut chosen = Chosen::default();
    for l in text.lines() {
        let l = l.trim_end();
        if l.ends_with("local client KEXINIT proposal") {
            side = (!seen_client).then_some(false);
            seen_client = true;
            continue;
        }
        if l.ends_with("peer server KEXINIT proposal") {
            side = (!seen_server).then_some(true);
            seen_server = true;
            continue;
        }
        let field = l.split_once("debug2: ").map(|(_, f)| f);
        if !field.is_some_and(|f| PROPOSAL_FIELDS.iter().any(|p| f.starts_with(p))) {
            side = None;
        }
        if let Some(s) = side {
            let target = if s { &mut server } else { &mut client };
            if read_proposal_field(target, field) {
                side = None;
            }
        }
        chosen.read(l);
    }
    let n = Negotiated::Ssh {
        cipher: chosen.cipher?,
        mac: chosen.mac.filter(|m| m != "<implicit>"),
        kex: chosen.kex?,
        hostkey: chosen.hostkey?,
    };
    if server.ciphers.is_empty() {
        return None;
    }
    Some((server, client, n))
}

/// Stores one field of a KEXINIT proposal into its side's lists; true at the
/// proposal's last field ("reserved"), which ends the block.
fn read_proposal_field(target: &mut SshConfig, field: Option<&str>) -> bool {
    let list = |p: &str| -> Option<Vec<String>> {
        field
            .and_then(|f| f.strip_prefix(p))
            .and_then(|v| v.strip_prefix(": "))
            .map(|v| v.split(',').filter(real).map(str::to_string).collect())
    };
    if let Some(v) = list("KEX algorithms") {
        target.kex = v;
    } else if let Some(v) = list("host key algorithms") {
        target.hostkeys = v;
    } else if let Some(v) = list("ciphers ctos") {
        target.ciphers = v;
    } else if let Some(v) = list("MACs ctos") {
        target.macs = v;
    } else if field.is_some_and(|f| f.starts_with("reserved")) {
        return true;
    }
    false
}

/// What the first key exchange chose, as `ssh -vv` reports it.
#[derive(Default)]
struct Chosen {
    kex: Option<String>,
    hostkey: Option<String>,
    cipher: Option<String>,
    mac: Option<String>,
}

impl Chosen {
    /// Reads one line; once kex, host key and cipher are known, later lines
    /// (a rekey's choice) are ignored.
    fn read(&mut self, l: &str) {
        if self.kex.is_some() && self.hostkey.is_some() && self.cipher.is_some() {
            // The first key exchange's choice is the login's; a rekey's is not asked.
            return;
        }
        if let Some((_, v)) = l.split_once("kex: algorithm: ") {
            self.kex = Some(v.trim().to_string());
        } else if let Some((_, v)) = l.split_once("kex: host key algorithm: ") {
            self.hostkey = Some(v.trim().to_string());
        } else if let Some((_, v)) = l.split_once("kex: client->server cipher: ") {
            let f: Vec<&str> = v.split_whitespace().collect();
            self.cipher = f.first().map(|s| s.to_string());
            self.mac = f
                .iter()
                .position(|x| *x == "MAC:")
                .and_then(|i| f.get(i + 1))
                .map(|s| s.to_string());
        }
    }
}

/// Runs a command with a hard deadline; its (stdout, stderr).
fn run_for(mut cmd: Command, limit: Duration) -> Result<(String, String)> {
    use crate::backend::process::{run_bounded, Stop};
    let (_, out, err) = run_bounded(&mut cmd, crate::deadline::Deadline::after(limit), Stop::Requested)?;
    Ok((
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    ))
}

/// The remote sshd's offer and what this machine's client negotiates with it.
pub fn ssh_server(
    ssh: &std::path::Path,
    destination: &str,
    port: Option<u16>,
    identity: Option<&std::path::Path>,
    options: &[String],
) -> Result<Current> {
    let mut cmd = Command::new(ssh);
    // The key exchange is all this needs: `PreferredAuthentications=none` stops
    // the client after it (the server refuses the "none" method), so probing a
    // server never logs in or runs a command there.
    cmd.args([
        "-vv",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=10",
        "-o",
        "PreferredAuthentications=none",
    ]);
    if let Some(p) = port {
        cmd.args(["-p", &p.to_string()]);
    }
    if let Some(i) = identity {
        cmd.arg("-i").arg(i);
    }
    for o in options {
        cmd.args(["-o", o]);
    }
    // `--`: nothing the user typed as a destination is read as an option (the
    // host was also checked when the command line was parsed).
    cmd.args(["--", destination, "true"]);
    let limit = crate::deadline::op(Duration::from_secs(20)).left();
    if limit.is_zero() {
        bail!("the run's deadline left no time to ask {destination} for its offer (raise --budget)");
    }
    let (_, err) = run_for(cmd, limit)?;
    let Some((server, client, n)) = parse_ssh_debug(&err) else {
        bail!(
            "`ssh -vv {destination}` showed no key exchange: {}",
            err.lines().rev().find(|l| !l.starts_with("debug")).unwrap_or("no answer").trim()
        );
    };
    let source = format!("the server's KEXINIT proposal (ssh -vv {destination})");
    let installed = Installed::new("sshd", None, source, Config::Ssh(server.clone()))
        .with_notes(vec![format!("remote server {destination}: the lines are for its sshd_config")]);
    Ok(Current {
        installed,
        offer: Offer::Ssh(server),
        peer: "this machine's ssh client, with your ssh configuration".into(),
        peer_offer: Offer::Ssh(client),
        negotiated: Ok(n),
        within_offer: true,
    })
}

/// `openssl s_client` output → (protocol, OpenSSL suite name, group).
pub fn parse_s_client(text: &str) -> Option<(String, String, Option<String>)> {
    let field = |k: &str| {
        text.lines().find_map(|l| {
            l.trim()
                .strip_prefix(k)
                .map(|r| r.trim_start().trim_start_matches(':').trim().to_string())
        })
    };
    let group = text
        .lines()
        .find_map(|l| l.strip_prefix("Server Temp Key: "))
        .and_then(|v| v.split(',').next())
        .map(|g| g.trim().to_string());
    Some((field("Protocol")?, field("Cipher")?, group))
}

/// A TLS server's offer from a `tls --connect` scan: its protocols, suites (in
/// its own order where the scan found it), groups and whether it enforces its order.
fn scanned_offer(scan: &crate::measure::tls::Scan) -> TlsOffer {
    let mut protocols: Vec<String> = scan
        .protocols
        .iter()
        .filter(|(_, r)| r.is_none())
        .map(|(p, _)| p.label().to_string())
        .collect();
    protocols.sort_by_key(|p| crate::discover::installed::TLS_VERSIONS.iter().position(|v| v == p));
    let server_order = scan.orders.iter().any(|o| !o.honours_client_order);
    let mut suites: Vec<OfferedSuite> = Vec::new();
    for (_, s) in scan.accepted_suites() {
        if suites.iter().any(|x| x.iana == s.iana) {
            continue;
        }
        suites.push(OfferedSuite {
            iana: s.iana.clone(),
            openssl: s.openssl.clone(),
            min_protocol: if s.tls13() { "TLSv1.3".into() } else { s.min_protocol.clone() },
        });
    }
    // The server's own order where the scan found it.
    let pref: Vec<&String> = scan.orders.iter().flat_map(|o| o.server_preference.iter()).collect();
    suites.sort_by_key(|s| pref.iter().position(|x| **x == s.iana || **x == s.openssl).unwrap_or(usize::MAX));
    let groups: Vec<String> = scan
        .groups
        .iter()
        .filter(|(_, _, r)| r.is_none())
        .map(|(_, g, _)| crate::aliases::group_name(g).map_or_else(|| g.to_string(), str::to_string))
        .fold(Vec::new(), |mut v, g| {
            if !v.contains(&g) {
                v.push(g);
            }
            v
        });
    TlsOffer {
        protocols,
        suites,
        groups,
        server_order,
        group_tiers: Vec::new(),
        key_shares: Vec::new(),
    }
}

/// What a default OpenSSL client (`openssl s_client`) negotiates with `target`;
/// `Err` with what it said when nothing.
fn default_client(target: &str, sni: Option<&str>, suites: &[OfferedSuite]) -> Result<Result<Negotiated, String>> {
    let mut cmd = Command::new("openssl");
    cmd.args(["s_client", "-connect", target]);
    if let Some(s) = sni {
        cmd.args(["-servername", s]);
    }
    let limit = crate::deadline::op(Duration::from_secs(15)).left();
    if limit.is_zero() {
        bail!("the run's deadline left no time to ask {target} what a default client negotiates (raise --budget)");
    }
    let (out, err) = run_for(cmd, limit)?;
    Ok(match parse_s_client(&out) {
        Some((version, cipher, group)) => {
            let iana = suites
                .iter()
                .find(|s| s.openssl == cipher || s.iana == cipher)
                .map(|s| s.iana.clone())
                .unwrap_or_else(|| cipher.clone());
            Ok(Negotiated::Tls {
                version,
                suite: iana,
                openssl_name: cipher,
                group: group.map(|g| crate::aliases::group_name(&g).map_or(g, str::to_string)),
            })
        }
        None => Err(format!("openssl s_client negotiated nothing: {}", s_client_said(&err))),
    })
}

/// Why `openssl s_client` negotiated nothing, from its stderr: its first error
/// line, else its last line, leaving out what it says on every connection
/// (`Can't use SSL_get_servername` without SNI, the certificate checks).
fn s_client_said(err: &str) -> String {
    let noise = |l: &&str| {
        l.is_empty()
            || l.starts_with("Can't use SSL_get_servername")
            || l.starts_with("depth=")
            || l.starts_with("verify error")
            || l.starts_with("verify return")
    };
    let lines: Vec<&str> = err.lines().map(str::trim).filter(|l| !noise(l)).collect();
    let said = lines
        .iter()
        .find(|l| l.to_ascii_lowercase().contains("error"))
        .or(lines.last())
        .map_or("it said nothing (the server did not answer in time)", |l| l);
    crate::untrusted::for_terminal(said).chars().take(200).collect()
}

/// A TLS server's offer from a `tls --connect` scan, and what a default OpenSSL
/// client (`openssl s_client`) negotiates with it.
pub fn tls_server(target: &str, sni: Option<&str>, scan: &crate::measure::tls::Scan) -> Result<Current> {
    let offer = scanned_offer(scan);
    let negotiated = default_client(target, sni, &offer.suites)?;
    let config = Config::Tls(TlsConfig {
        server: true,
        server_order: offer.server_order,
        ..Default::default()
    });
    let mut notes = vec![format!(
        "remote server {target}: the change is counted within what it accepts now; the lines shown are nginx's, every target's are in `recommend`"
    )];
    if !scan.not_offered.is_empty() {
        notes.push(format!(
            "the scan's client could not offer {} of the protocols, suites and groups tried (its library lacks them): whether {target} accepts those is not known",
            scan.not_offered.len()
        ));
    }
    let installed = Installed::new("nginx", None, format!("the tls --connect scan of {target}"), config).with_notes(notes);
    Ok(Current {
        installed,
        offer: Offer::Tls(offer),
        peer: "a default OpenSSL client (openssl s_client)".into(),
        peer_offer: Offer::Tls(super::negotiate::default_openssl_peer(false)?),
        negotiated,
        within_offer: true,
    })
}

/// The remote diff against the run's measured document `doc` (the caller keeps it
/// in the run's settings as `installed_diff`), and it as text for the terminal.
pub fn section(
    current: Result<Current>,
    doc: &crate::model::Document,
    target: &str,
    policy: &crate::judge::Policy,
) -> Result<(Vec<super::SoftwareDiff>, String)> {
    let k = crate::judge::Knowledge::builtin()?;
    let outcome = crate::recommend::recommend(doc, &k, policy, &crate::software::emitters(&[target.to_string()]));
    let (currents, notes) = match current {
        Ok(c) => (vec![c], Vec::new()),
        Err(e) => (Vec::new(), vec![format!("{e:#}")]),
    };
    Ok(super::section(&currents, &notes, doc, &outcome, &k, policy))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What s_client prints on every connection is not the reason it failed.
    #[test]
    fn s_client_failure_names_its_error_not_its_sni_note() {
        let err = "Can't use SSL_get_servername\ndepth=0 CN = x\nverify error:num=18:self-signed certificate\n4057F0:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure:../ssl/record/rec_layer_s3.c:1586:SSL alert number 40\n";
        assert!(s_client_said(err).contains("alert handshake failure"), "{}", s_client_said(err));
        assert_eq!(
            s_client_said("Can't use SSL_get_servername\nconnect: Connection refused\n"),
            "connect: Connection refused"
        );
        assert!(s_client_said("Can't use SSL_get_servername\n").contains("did not answer"));
    }

    /// The shape of real `ssh -vv` output (OpenSSH 9.2).
    const DEBUG: &str = "debug1: SSH2_MSG_KEXINIT received\ndebug2: local client KEXINIT proposal\n\
debug2: KEX algorithms: curve25519-sha256,diffie-hellman-group14-sha256,ext-info-c,kex-strict-c-v00@openssh.com\n\
debug2: host key algorithms: ssh-ed25519,rsa-sha2-512\ndebug2: ciphers ctos: chacha20-poly1305@openssh.com,aes128-ctr\n\
debug2: ciphers stoc: chacha20-poly1305@openssh.com,aes128-ctr\ndebug2: MACs ctos: umac-64-etm@openssh.com,hmac-sha2-256\n\
debug2: peer server KEXINIT proposal\ndebug2: KEX algorithms: diffie-hellman-group14-sha1,diffie-hellman-group14-sha256,kex-strict-s-v00@openssh.com\n\
debug2: host key algorithms: ssh-ed25519\ndebug2: ciphers ctos: aes128-cbc,aes128-ctr\ndebug2: MACs ctos: hmac-sha1,hmac-sha2-256\n\
debug1: kex: algorithm: diffie-hellman-group14-sha256\ndebug1: kex: host key algorithm: ssh-ed25519\n\
debug1: kex: server->client cipher: aes128-ctr MAC: hmac-sha2-256 compression: none\n\
debug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha2-256 compression: none\n";

    #[test]
    fn parses_kexinit_and_choice() {
        let (s, c, n) = parse_ssh_debug(DEBUG).unwrap();
        assert_eq!(s.kex, vec!["diffie-hellman-group14-sha1", "diffie-hellman-group14-sha256"]);
        assert_eq!(s.ciphers, vec!["aes128-cbc", "aes128-ctr"]);
        assert_eq!(c.kex, vec!["curve25519-sha256", "diffie-hellman-group14-sha256"]);
        assert_eq!(
            n,
            Negotiated::Ssh {
                cipher: "aes128-ctr".into(),
                mac: Some("hmac-sha2-256".into()),
                kex: "diffie-hellman-group14-sha256".into(),
                hostkey: "ssh-ed25519".into()
            }
        );
        let aead = DEBUG.replace(
            "cipher: aes128-ctr MAC: hmac-sha2-256",
            "cipher: chacha20-poly1305@openssh.com MAC: <implicit>",
        );
        let (_, _, n) = parse_ssh_debug(&aead).unwrap();
        assert!(matches!(n, Negotiated::Ssh { mac: None, .. }));
        assert!(parse_ssh_debug("ssh: connect to host x port 22: Connection refused\n").is_none());
    }

    /// Lines of a real `ssh -vv` transcript (the others left out), OpenSSH 10.0p2
    /// (Debian 13) against its own sshd: after NEWKEYS the client's proposal is
    /// printed again without a label.
    const OPENSSH_10: &str = r"debug1: SSH2_MSG_KEXINIT received
debug2: local client KEXINIT proposal
debug2: KEX algorithms: mlkem768x25519-sha256,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256,ext-info-c,kex-strict-c-v00@openssh.com
debug2: host key algorithms: ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256
debug2: ciphers ctos: chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr
debug2: MACs ctos: umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1
debug2: reserved 0
debug2: peer server KEXINIT proposal
debug2: KEX algorithms: mlkem768x25519-sha256,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,ext-info-s,kex-strict-s-v00@openssh.com
debug2: host key algorithms: rsa-sha2-512,rsa-sha2-256,ecdsa-sha2-nistp256,ssh-ed25519
debug2: ciphers ctos: chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr
debug2: MACs ctos: umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1
debug2: reserved 0
debug1: kex: algorithm: mlkem768x25519-sha256
debug1: kex: host key algorithm: ssh-ed25519
debug1: kex: server->client cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none
debug1: kex: client->server cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none
debug1: SSH2_MSG_NEWKEYS received
debug2: ssh_set_newkeys: mode 0
debug2: KEX algorithms: mlkem768x25519-sha256,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256,ext-info-c,kex-strict-c-v00@openssh.com
debug2: host key algorithms: ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256
debug2: ciphers ctos: chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr
debug2: MACs ctos: umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1
debug2: reserved 0
";

    /// Lines of a real `ssh -vv` transcript (the others left out), OpenSSH 9.2p1
    /// (Debian 12) against the sshd of OpenSSH 10.0p2: no second proposal.
    const OPENSSH_9: &str = r"debug1: SSH2_MSG_KEXINIT received
debug2: local client KEXINIT proposal
debug2: KEX algorithms: sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256,ext-info-c,kex-strict-c-v00@openssh.com
debug2: host key algorithms: ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256
debug2: ciphers ctos: chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com
debug2: MACs ctos: umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1
debug2: reserved 0
debug2: peer server KEXINIT proposal
debug2: KEX algorithms: mlkem768x25519-sha256,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,ext-info-s,kex-strict-s-v00@openssh.com
debug2: host key algorithms: rsa-sha2-512,rsa-sha2-256,ecdsa-sha2-nistp256,ssh-ed25519
debug2: ciphers ctos: chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr
debug2: MACs ctos: umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1
debug2: reserved 0
debug1: kex: algorithm: sntrup761x25519-sha512
debug1: kex: host key algorithm: ssh-ed25519
debug1: kex: server->client cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none
debug1: kex: client->server cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none
debug1: SSH2_MSG_NEWKEYS received
debug2: ssh_set_newkeys: mode 0
";

    /// The server's default lists of OpenSSH 10.0p2 (Debian 13), as both clients saw them.
    fn assert_openssh_10_server(s: &SshConfig) {
        assert_eq!(
            s.kex,
            [
                "mlkem768x25519-sha256",
                "sntrup761x25519-sha512",
                "sntrup761x25519-sha512@openssh.com",
                "curve25519-sha256",
                "curve25519-sha256@libssh.org",
                "ecdh-sha2-nistp256",
                "ecdh-sha2-nistp384",
                "ecdh-sha2-nistp521"
            ]
        );
        assert_eq!(s.hostkeys, ["rsa-sha2-512", "rsa-sha2-256", "ecdsa-sha2-nistp256", "ssh-ed25519"]);
        assert_eq!(
            s.ciphers[..3],
            ["chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]
        );
        assert_eq!(s.macs.len(), 10);
        assert!(s.server);
    }

    #[test]
    fn openssh_10_second_client_proposal_is_not_the_servers() {
        let (s, c, n) = parse_ssh_debug(OPENSSH_10).unwrap();
        assert_openssh_10_server(&s);
        assert_eq!(c.kex.len(), 12);
        assert!(c.kex.contains(&"diffie-hellman-group14-sha256".to_string()));
        assert_eq!(c.hostkeys.len(), 16);
        assert_eq!(
            n,
            Negotiated::Ssh {
                cipher: "chacha20-poly1305@openssh.com".into(),
                mac: None,
                kex: "mlkem768x25519-sha256".into(),
                hostkey: "ssh-ed25519".into()
            }
        );
    }

    #[test]
    fn openssh_9_transcript() {
        let (s, c, n) = parse_ssh_debug(OPENSSH_9).unwrap();
        assert_openssh_10_server(&s);
        assert_eq!(c.kex[0], "sntrup761x25519-sha512");
        assert_eq!(c.ciphers[1], "aes128-ctr");
        assert!(matches!(n, Negotiated::Ssh { ref kex, .. } if kex == "sntrup761x25519-sha512"));
    }

    #[test]
    fn a_second_labelled_proposal_does_not_replace_the_first() {
        // A rekey prints both proposals again: the login's are the first.
        let rekey = format!("{OPENSSH_9}debug2: peer server KEXINIT proposal\ndebug2: KEX algorithms: curve25519-sha256\n");
        let (s, _, _) = parse_ssh_debug(&rekey).unwrap();
        assert_openssh_10_server(&s);
    }

    #[test]
    fn parses_s_client() {
        let t = "---\nServer Temp Key: X25519, 253 bits\n---\nNew, TLSv1.0, Cipher is ECDHE-RSA-AES128-SHA\nSSL-Session:\n    Protocol  : TLSv1.2\n    Cipher    : ECDHE-RSA-AES128-SHA\n";
        assert_eq!(
            parse_s_client(t),
            Some(("TLSv1.2".into(), "ECDHE-RSA-AES128-SHA".into(), Some("X25519".into())))
        );
    }
}

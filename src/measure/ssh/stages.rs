//! The order of spending: what the policy allows is measured first, one axis at
//! a time, and the refused options only as far as the "fastest refused, for
//! comparison" line needs, after them.
//!
//! SSH negotiates the cipher and the MAC independently, and both are paid per
//! byte, so the ciphers are measured with one fixed MAC (AEAD ciphers take none)
//! and the MACs with one fixed cipher: n + m subjects instead of n × m. The
//! policy's allowed set comes down from app as plain names
//! ([`crate::plan::Admitted`]): measure does not import judge.

use super::{BulkItem, SshPlan};
use crate::plan::Admitted;

/// Which part of the order of spending a bulk subject belongs to; the sweep
/// measures them in this order (`sweep.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// The allowed ciphers, each with the fixed MAC (everything, without a policy).
    Ciphers,
    /// The allowed MACs, each with the fixed cipher.
    Macs,
    /// Refused options: what the comparison line needs, when budget is left.
    Refused,
}

/// `items` with the names `allowed` lists first, in its order (the policy's),
/// then the others in their given order, at most `cap` of them (`None`: all).
pub(super) fn policy_first<'a>(items: Vec<&'a String>, allowed: &[String], cap: Option<usize>) -> Vec<&'a String> {
    let mut ok: Vec<(usize, &String)> = Vec::new();
    let mut refused: Vec<&String> = Vec::new();
    for i in items {
        match Admitted::rank(allowed, i) {
            Some(r) => ok.push((r, i)),
            None => refused.push(i),
        }
    }
    ok.sort_by_key(|(r, _)| *r);
    refused.truncate(cap.unwrap_or(usize::MAX));
    ok.into_iter().map(|(_, i)| i).chain(refused).collect()
}

/// Where a refused option comes among the refused (lower first): the ones most
/// likely to be the fastest refused, which is what the comparison line shows.
/// A guess from the name only (AES with its instructions, UMAC and SHA-1 are the
/// fast ones of their kinds); it orders measuring, never a figure.
pub(super) fn likely_fast(name: &str) -> u8 {
    let n = name.to_ascii_lowercase();
    let base = if n.starts_with("aes128") || n.starts_with("umac-64") {
        0
    } else if n.starts_with("aes") || n.starts_with("umac") {
        1
    } else if n.contains("sha1") || n.contains("sha2") {
        2
    } else if n.contains("3des") || n == "none" {
        4
    } else {
        3
    };
    2 * base + u8::from(!n.contains("etm"))
}

impl SshPlan {
    /// The bulk subjects with their stage, in the order they are measured. With
    /// what the policy allows known (and no `--full-matrix`): the allowed
    /// ciphers (policy order) with the first allowed MAC; then the other allowed
    /// MACs with one allowed non-AEAD cipher (aes128-ctr when allowed); then the
    /// refused ciphers and MACs, likeliest fastest first, at most
    /// `refused_cap` of each. Otherwise the whole matrix, all in one stage.
    pub fn staged_items(&self) -> Vec<(Stage, BulkItem)> {
        let a = match &self.admitted {
            Some(a) if !self.full_matrix => a,
            _ => return self.matrix_items().into_iter().map(|i| (Stage::Ciphers, i)).collect(),
        };
        let allowed_ciphers: Vec<&String> = policy_first(self.ciphers.iter().collect(), &a.ssh_ciphers, Some(0));
        let allowed_macs: Vec<&String> = policy_first(self.macs.iter().collect(), &a.ssh_macs, Some(0));
        let mut refused_ciphers: Vec<&String> = self.ciphers.iter().filter(|c| !allowed_ciphers.contains(c)).collect();
        let mut refused_macs: Vec<&String> = self.macs.iter().filter(|m| !allowed_macs.contains(m)).collect();
        refused_ciphers.sort_by_key(|c| likely_fast(c));
        refused_macs.sort_by_key(|m| likely_fast(m));
        refused_ciphers.truncate(a.refused_cap.unwrap_or(usize::MAX));
        refused_macs.truncate(a.refused_cap.unwrap_or(usize::MAX));
        // The MAC the ciphers are measured with, and the cipher the MACs are.
        let fixed_mac: Option<&String> = allowed_macs.first().copied().or(self.macs.first());
        let fixed_cipher: Option<&String> = allowed_ciphers
            .iter()
            .copied()
            .find(|c| c.as_str() == "aes128-ctr")
            .or_else(|| allowed_ciphers.iter().copied().find(|c| !self.is_aead(c)))
            .or_else(|| self.ciphers.iter().find(|c| !self.is_aead(c)));
        let item = |c: &String, m: Option<&String>| BulkItem {
            cipher: c.clone(),
            mac: if self.is_aead(c) { None } else { m.cloned() },
            kex: self.bulk_kex.clone(),
        };
        let mut out: Vec<(Stage, BulkItem)> = Vec::new();
        let mut push = |stage: Stage, i: BulkItem| {
            // A non-AEAD cipher needs a MAC; a subject is measured once.
            if (i.mac.is_some() || self.is_aead(&i.cipher)) && !out.iter().any(|(_, o)| *o == i) {
                out.push((stage, i));
            }
        };
        for c in &allowed_ciphers {
            push(Stage::Ciphers, item(c, fixed_mac));
        }
        if let Some(fc) = fixed_cipher {
            for m in &allowed_macs {
                push(Stage::Macs, item(fc, Some(m)));
            }
        }
        for c in &refused_ciphers {
            push(Stage::Refused, item(c, fixed_mac));
        }
        if let Some(fc) = fixed_cipher {
            for m in &refused_macs {
                push(Stage::Refused, item(fc, Some(m)));
            }
        }
        out
    }

    /// The plan narrowed to the ciphers and MACs its bulk subjects use (the
    /// feature check then connects only for those).
    pub(super) fn narrowed(&self) -> SshPlan {
        if self.admitted.is_none() || self.full_matrix {
            return self.clone();
        }
        let items = self.bulk_items();
        let hands = self.handshake_items();
        let mut p = self.clone();
        p.ciphers.retain(|c| items.iter().any(|i| &i.cipher == c));
        p.macs.retain(|m| items.iter().any(|i| i.mac.as_ref() == Some(m)));
        // The key exchanges the handshakes use, or (without them) the bulk one
        // and two allowed ones in case the target refuses it.
        let allowed = self.admitted.as_ref().map_or(&[][..], |a| &a.ssh_kex[..]);
        let spare: Vec<&String> = policy_first(self.kex.iter().collect(), allowed, Some(0))
            .into_iter()
            .take(2)
            .collect();
        p.kex
            .retain(|k| hands.iter().any(|h| &h.kex == k) || (hands.is_empty() && (*k == self.bulk_kex || spare.contains(&k))));
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::openssh::OpenSsh;
    use crate::units::Seconds;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn plan(cap: Option<usize>) -> SshPlan {
        let o = OpenSsh {
            ssh: "ssh".into(),
            version: "OpenSSH_9.2p1".into(),
            ciphers: strings(&[
                "3des-cbc",
                "aes128-cbc",
                "aes128-ctr",
                "aes256-ctr",
                "aes128-gcm@openssh.com",
                "chacha20-poly1305@openssh.com",
            ]),
            aead: strings(&["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"]),
            macs: strings(&[
                "hmac-md5",
                "hmac-sha1",
                "umac-64-etm@openssh.com",
                "umac-128-etm@openssh.com",
                "hmac-sha2-256-etm@openssh.com",
            ]),
            kex: strings(&["diffie-hellman-group1-sha1", "ecdh-sha2-nistp256", "curve25519-sha256"]),
            keys: vec![],
            hostkey_algorithms: strings(&["ssh-ed25519"]),
            pubkey_algorithms: vec![],
        };
        let serve = o.hostkey_algorithms.clone();
        let mut p = SshPlan::new(&o, &[], &[], &[], &[], Some(&serve), false, None, false, true, Seconds(10.0)).unwrap();
        p.admitted = Some(Admitted {
            ssh_ciphers: strings(&[
                "chacha20-poly1305@openssh.com",
                "aes128-gcm@openssh.com",
                "aes256-ctr",
                "aes128-ctr",
            ]),
            ssh_macs: strings(&["hmac-sha2-256-etm@openssh.com", "umac-128-etm@openssh.com"]),
            ssh_kex: strings(&["curve25519-sha256", "ecdh-sha2-nistp256"]),
            refused_cap: cap,
            ..Admitted::default()
        });
        p
    }

    fn shown(p: &SshPlan) -> Vec<(Stage, String)> {
        p.staged_items()
            .into_iter()
            .map(|(s, i)| (s, format!("{} {}", i.cipher, i.mac.as_deref().unwrap_or("-"))))
            .collect()
    }

    /// The allowed ciphers (policy order) with one MAC, then the allowed MACs
    /// with one cipher, then one refused cipher and one refused MAC, the likeliest
    /// fastest: never the cipher × MAC matrix.
    #[test]
    fn allowed_first_one_axis_at_a_time_then_what_the_comparison_needs() {
        use Stage::*;
        let want = [
            (Ciphers, "chacha20-poly1305@openssh.com -"),
            (Ciphers, "aes128-gcm@openssh.com -"),
            (Ciphers, "aes256-ctr hmac-sha2-256-etm@openssh.com"),
            (Ciphers, "aes128-ctr hmac-sha2-256-etm@openssh.com"),
            (Macs, "aes128-ctr umac-128-etm@openssh.com"),
            (Refused, "aes128-cbc hmac-sha2-256-etm@openssh.com"),
            (Refused, "aes128-ctr umac-64-etm@openssh.com"),
        ];
        let want: Vec<(Stage, String)> = want.iter().map(|(s, n)| (*s, n.to_string())).collect();
        assert_eq!(shown(&plan(Some(1))), want);
        // The handshakes: the allowed kex in policy order, one refused after them.
        let kex: Vec<String> = plan(Some(1)).handshake_items().into_iter().map(|h| h.kex).collect();
        assert_eq!(kex, ["curve25519-sha256", "ecdh-sha2-nistp256", "diffie-hellman-group1-sha1"]);
    }

    /// Refused options the user named are all measured, after every allowed one.
    #[test]
    fn named_refused_options_all_come_after_the_allowed() {
        let s = shown(&plan(None));
        let first_refused = s.iter().position(|(st, _)| *st == Stage::Refused).unwrap();
        assert!(s[..first_refused].iter().all(|(st, _)| *st != Stage::Refused));
        assert!(s[first_refused..].iter().all(|(st, _)| *st == Stage::Refused));
        // 2 refused ciphers + 3 refused MACs.
        assert_eq!(s.len() - first_refused, 5);
        assert_eq!(s.last().unwrap().1, "aes128-ctr hmac-md5");
        let stages: Vec<Stage> = s.iter().map(|(st, _)| *st).collect();
        let mut sorted = stages.clone();
        sorted.sort();
        assert_eq!(stages, sorted);
    }

    /// The feature check connects only for what the staged subjects use.
    #[test]
    fn the_narrowed_plan_checks_only_what_is_measured() {
        let p = plan(Some(1)).narrowed();
        assert!(!p.ciphers.iter().any(|c| c == "3des-cbc"));
        assert!(!p.macs.iter().any(|m| m == "hmac-md5" || m == "hmac-sha1"));
        assert_eq!(shown(&p), shown(&plan(Some(1))));
        // Without a policy, the matrix as before.
        let mut q = plan(None);
        q.admitted = None;
        assert_eq!(q.staged_items().len(), 4 * 5 + 2);
        assert!(q.staged_items().iter().all(|(s, _)| *s == Stage::Ciphers));
    }

    #[test]
    fn policy_order_then_the_refused_up_to_the_cap() {
        let names = strings(&["b", "x", "a", "y"]);
        let allowed = strings(&["a", "b"]);
        let got: Vec<&String> = policy_first(names.iter().collect(), &allowed, Some(1));
        assert_eq!(got, ["a", "b", "x"]);
        assert_eq!(policy_first(names.iter().collect(), &allowed, None).len(), 4);
        assert!(likely_fast("aes128-cbc") < likely_fast("3des-cbc"));
        assert!(likely_fast("umac-64-etm@openssh.com") < likely_fast("hmac-md5"));
    }
}

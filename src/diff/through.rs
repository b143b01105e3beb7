//! The through passes' plans: for each local nginx, Apache, HAProxy, stunnel
//! or NZBGet whose diff changes the negotiated TLS choice, two private
//! instances of it to measure (the installed lines and the recommended ones),
//! as `measure::tls::through` and `measure::tls::nzbget` run them. Which
//! software qualifies, its lines now and what each instance must negotiate are
//! the diff's; starting, timing and the budget are the measure stage's.

use super::negotiate::Negotiated;
use super::{Current, SoftwareDiff};
use crate::backend::openssl::certs::CertType;
use crate::measure::tls::nzbget::{self, NzbgetPlan};
use crate::measure::tls::through::{self, Software, ThroughPlan};
use crate::units::Seconds;
use std::path::PathBuf;

/// The server software and its binary, when `c` is this machine's nginx,
/// Apache, HAProxy or stunnel server (not a remote server) and it is installed
/// here: then its throughput change is measured through two private instances
/// ([`server_plans`]).
pub fn server_binary(c: &Current) -> Option<(Software, PathBuf)> {
    let sw = Software::named(c.installed.software)?;
    match &c.installed.config {
        crate::discover::installed::Config::Tls(t) if t.server && !c.within_offer => {}
        _ => return None,
    }
    if sw == Software::Apache && crate::backend::apache::modules().is_none() {
        return None;
    }
    let bin = crate::discover::installed::find_program(sw.programs()).map(PathBuf::from)?;
    Some((sw, bin))
}

/// The installed configuration's TLS lines in `sw`'s own syntax, for its
/// private instance: every value its reader read, the order the server keeps
/// included ([`crate::software::Target::installed_lines`]).
pub fn now_lines_for(sw: Software, t: &crate::discover::installed::TlsConfig) -> Vec<String> {
    crate::software::find(sw.name())
        .and_then(|s| s.installed_lines(t))
        .unwrap_or_default()
}

/// The local software a through step can run (`binary` of it: what to start)
/// whose diff changes what is negotiated and has lines to change it with.
fn changing<'a, B>(
    currents: &'a [Current],
    diffs: &'a [SoftwareDiff],
    binary: impl Fn(&Current) -> Option<B>,
) -> Vec<(B, &'a Current, &'a SoftwareDiff)> {
    currents
        .iter()
        .filter_map(|c| {
            let bin = binary(c)?;
            let d = diffs.iter().find(|d| d.software == c.installed.software)?;
            (d.now.is_some() && d.recommended.is_some() && d.now != d.recommended && !d.lines.is_empty()).then_some((bin, c, d))
        })
        .collect()
}

/// A negotiated TLS choice's (version, suite).
type VersionSuite<'a> = (&'a str, &'a str);

/// A TLS diff's (version, suite) now and recommended; `None` for SSH.
fn tls_change(d: &SoftwareDiff) -> Option<(VersionSuite<'_>, VersionSuite<'_>)> {
    match (&d.now, &d.recommended) {
        (
            Some(Negotiated::Tls {
                version: nv, suite: ns, ..
            }),
            Some(Negotiated::Tls {
                version: rv, suite: rs, ..
            }),
        ) => Some(((nv.as_str(), ns.as_str()), (rv.as_str(), rs.as_str()))),
        _ => None,
    }
}

/// For each local nginx, Apache, HAProxy or stunnel whose diff changes the
/// negotiated TLS choice: the name of the software whose diff it is (for the
/// notes) and the plan of two private instances of it, one with the installed
/// lines and one with the recommended ones (the measure stage's `through_each`
/// runs them in turn and sets each one's budget).
pub fn server_plans(currents: &[Current], diffs: &[SoftwareDiff]) -> Vec<(String, ThroughPlan)> {
    changing(currents, diffs, server_binary)
        .into_iter()
        .filter_map(|(bin, c, d)| server_plan(bin, c, d))
        .collect()
}

fn server_plan((sw, bin): (Software, PathBuf), c: &Current, d: &SoftwareDiff) -> Option<(String, ThroughPlan)> {
    let ((nv, ns), (rv, rs)) = tls_change(d)?;
    let crate::discover::installed::Config::Tls(t) = &c.installed.config else {
        return None;
    };
    // The certificate the installed server's suites need (as `measure::named` chooses).
    let cert = if ns.contains("_ECDSA_") {
        CertType::EcdsaP256
    } else {
        CertType::Rsa2048
    };
    let plan = ThroughPlan {
        software: sw,
        binary: bin,
        cert,
        instances: vec![
            through::Instance {
                role: "now",
                lines: now_lines_for(sw, t),
                expect: (nv.to_string(), ns.to_string()),
            },
            through::Instance {
                role: "recommended",
                // The emitters' notes are comments, not lines a server takes.
                lines: d.lines.iter().filter(|l| !l.trim_start().starts_with('#')).cloned().collect(),
                expect: (rv.to_string(), rs.to_string()),
            },
        ],
        // Set as each runs: its share of what is left then.
        budget: Seconds(0.0),
        timeout: std::time::Duration::from_secs(10),
    };
    Some((d.software.clone(), plan))
}

/// The NZBGet binary, when `c` is this machine's NZBGet (or a file under review
/// for it) and NZBGet is installed here: then its throughput change is measured
/// through two private NZBGet instances ([`nzbget_plans`]).
pub fn nzbget_binary(c: &Current) -> Option<PathBuf> {
    if c.installed.software != "nzbget" || c.within_offer || !matches!(c.installed.config, crate::discover::installed::Config::Tls(_)) {
        return None;
    }
    crate::discover::installed::find_program(&["nzbget"]).map(PathBuf::from)
}

/// The installed NZBGet as the private one gets it: its Server cipher (empty:
/// OpenSSL's default list) and the OpenSSL configuration its drop-in names
/// (its text), if any.
pub fn nzbget_now(i: &crate::discover::installed::Installed) -> (String, Option<String>) {
    let cipher = match &i.config {
        crate::discover::installed::Config::Tls(t) => t.cipher_string.clone().unwrap_or_default(),
        _ => String::new(),
    };
    let conf = i.openssl_env.as_ref().and_then(|e| e.conf.as_ref()).map(|(_, text)| text.clone());
    (cipher, conf)
}

/// For each NZBGet whose diff changes the negotiated TLS choice: the name of
/// the software whose diff it is (for the notes) and the plan of two private
/// NZBGet instances, one with the installed cipher (and OpenSSL configuration)
/// and one with the recommended lines (`measure::tls::nzbget::through_nzbget_each`
/// runs them in turn and sets each one's budget).
pub fn nzbget_plans(currents: &[Current], diffs: &[SoftwareDiff]) -> Vec<(String, NzbgetPlan)> {
    changing(currents, diffs, nzbget_binary)
        .into_iter()
        .filter_map(|(bin, c, d)| nzbget_plan(bin, c, d))
        .collect()
}

fn nzbget_plan(bin: PathBuf, c: &Current, d: &SoftwareDiff) -> Option<(String, NzbgetPlan)> {
    let ((nv, ns), (rv, rs)) = tls_change(d)?;
    let (cipher, conf) = nzbget_now(&c.installed);
    let (lines, cnf, _) = crate::software::nzbget::emit::parts(&d.lines);
    let rec_cipher = lines
        .first()
        .and_then(|l| l.split_once('='))
        .map(|(_, v)| v.to_string())
        .unwrap_or_default();
    let plan = NzbgetPlan {
        nzbget: bin,
        instances: vec![
            nzbget::Instance {
                role: "now",
                cipher,
                openssl_conf: conf,
                expect: (nv.to_string(), ns.to_string()),
            },
            nzbget::Instance {
                role: "recommended",
                cipher: rec_cipher,
                // Without a file of its own (NZBGet 25.4 and later), the
                // installed one stays.
                openssl_conf: cnf.or_else(|| nzbget_now(&c.installed).1),
                expect: (rv.to_string(), rs.to_string()),
            },
        ],
        articles: nzbget::ARTICLES,
        connections: nzbget::CONNECTIONS,
        // Set as each runs: its share of what is left then.
        budget: Seconds(0.0),
    };
    Some((d.software.clone(), plan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::negotiate::TlsOffer;
    use crate::diff::Offer;
    use crate::discover::installed::{Config, Installed, TlsConfig};

    fn current(software: &'static str, t: TlsConfig) -> Current {
        let offer = Offer::Tls(TlsOffer {
            protocols: vec![],
            suites: vec![],
            groups: vec![],
            server_order: true,
            group_tiers: vec![],
            key_shares: vec![],
        });
        Current {
            installed: Installed {
                software,
                file: None,
                source: "test".into(),
                config: Config::Tls(t),
                directives: vec![],
                insert_at: None,
                notes: vec![],
                openssl_env: None,
            },
            offer: offer.clone(),
            peer: "a default client".into(),
            peer_offer: offer,
            negotiated: Err("not negotiated in this test".into()),
            within_offer: false,
        }
    }

    fn tls(version: &str, suite: &str) -> Negotiated {
        Negotiated::Tls {
            version: version.into(),
            suite: suite.into(),
            openssl_name: String::new(),
            group: Some("x25519".into()),
        }
    }

    fn change(software: &str, now: &str, rec: &str, lines: &[&str]) -> SoftwareDiff {
        SoftwareDiff {
            now: Some(tls("TLSv1.2", now)),
            recommended: Some(tls("TLSv1.3", rec)),
            lines: lines.iter().map(|l| l.to_string()).collect(),
            ..SoftwareDiff::blank(software)
        }
    }

    /// A server's plan: the installed lines now, the recommended lines without
    /// the emitters' comments, what a default client must negotiate on each,
    /// and the certificate the installed suite needs; an SSH diff has none.
    #[test]
    fn a_server_plan_is_the_installed_lines_and_the_recommended_ones() {
        let t = TlsConfig {
            server: true,
            cipher_string: Some("ECDHE-ECDSA-AES128-SHA".into()),
            server_order: true,
            ..Default::default()
        };
        let c = current("nginx", t.clone());
        let d = change(
            "nginx",
            "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
            "TLS_AES_256_GCM_SHA384",
            &["# a note", "ssl_protocols TLSv1.3;"],
        );
        let (software, plan) = server_plan((Software::Nginx, PathBuf::from("/usr/sbin/nginx")), &c, &d).unwrap();
        assert_eq!(software, "nginx");
        assert_eq!((plan.software, plan.cert), (Software::Nginx, CertType::EcdsaP256));
        assert_eq!(plan.binary, PathBuf::from("/usr/sbin/nginx"));
        let [now, rec] = &plan.instances[..] else {
            panic!("{:?}", plan.instances);
        };
        assert_eq!((now.role, &now.lines), ("now", &now_lines_for(Software::Nginx, &t)));
        assert_eq!(now.expect, ("TLSv1.2".into(), "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA".into()));
        assert_eq!(
            (rec.role, &rec.lines[..]),
            ("recommended", &["ssl_protocols TLSv1.3;".to_string()][..])
        );
        assert_eq!(rec.expect, ("TLSv1.3".into(), "TLS_AES_256_GCM_SHA384".into()));
        assert_eq!(plan.timeout, std::time::Duration::from_secs(10));
        // An RSA suite now: the RSA certificate.
        let rsa = change("nginx", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_AES_256_GCM_SHA384", &["x;"]);
        let (_, plan) = server_plan((Software::Nginx, PathBuf::from("/n")), &c, &rsa).unwrap();
        assert_eq!(plan.cert, CertType::Rsa2048);
        let ssh = |cipher: &str| Negotiated::Ssh {
            cipher: cipher.into(),
            mac: None,
            kex: "curve25519-sha256".into(),
            hostkey: "ssh-ed25519".into(),
        };
        let ssh_diff = SoftwareDiff {
            now: Some(ssh("aes128-ctr")),
            recommended: Some(ssh("aes128-gcm@openssh.com")),
            ..d
        };
        assert!(server_plan((Software::Nginx, PathBuf::from("/n")), &c, &ssh_diff).is_none());
    }

    /// NZBGet's plan: the installed Server cipher now (no OpenSSL
    /// configuration without a drop-in), the emitted cipher and OpenSSL
    /// configuration recommended.
    #[test]
    fn an_nzbget_plan_is_the_installed_cipher_and_the_emitted_one() {
        let t = TlsConfig {
            cipher_string: Some("AES128-SHA".into()),
            ..Default::default()
        };
        let c = current("nzbget", t);
        let cnf = crate::software::nzbget::emit::OPENSSL_CNF;
        let d = change(
            "nzbget",
            "TLS_RSA_WITH_AES_128_CBC_SHA",
            "TLS_AES_256_GCM_SHA384",
            &["Server1.Cipher=TLS_AES_256_GCM_SHA384", &format!("# {cnf}"), "openssl_conf = x"],
        );
        let (software, plan) = nzbget_plan(PathBuf::from("/usr/bin/nzbget"), &c, &d).unwrap();
        assert_eq!(software, "nzbget");
        assert_eq!(
            (plan.articles.count, plan.connections),
            (nzbget::ARTICLES.count, nzbget::CONNECTIONS)
        );
        let [now, rec] = &plan.instances[..] else {
            panic!("{:?}", plan.instances);
        };
        assert_eq!((now.role, now.cipher.as_str(), &now.openssl_conf), ("now", "AES128-SHA", &None));
        assert_eq!(now.expect, ("TLSv1.2".into(), "TLS_RSA_WITH_AES_128_CBC_SHA".into()));
        assert_eq!((rec.role, rec.cipher.as_str()), ("recommended", "TLS_AES_256_GCM_SHA384"));
        assert_eq!(rec.openssl_conf.as_deref(), Some("openssl_conf = x\n"));
        assert_eq!(rec.expect, ("TLSv1.3".into(), "TLS_AES_256_GCM_SHA384".into()));
    }

    /// The installed TLS lines as the private nginx gets them: every value nginx
    /// read, a value with blanks quoted; and nginx itself accepts them and
    /// negotiates what the diff says (a default client gets the server's first
    /// CBC suite).
    #[test]
    fn now_lines_are_the_installed_values_and_nginx_takes_them() {
        use crate::discover::installed::TlsConfig;
        let t = TlsConfig {
            server: true,
            protocols: Some(vec!["TLSv1".into(), "TLSv1.1".into(), "TLSv1.2".into()]),
            cipher_string: Some("ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256".into()),
            ciphersuites: None,
            groups: Some("X25519:prime256v1".into()),
            server_order: true,
            ..Default::default()
        };
        assert_eq!(
            now_lines_for(Software::Nginx, &t),
            [
                "ssl_protocols TLSv1 TLSv1.1 TLSv1.2;",
                "ssl_ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256;",
                "ssl_ecdh_curve X25519:prime256v1;",
                "ssl_prefer_server_ciphers on;",
            ]
        );
        let spaced = TlsConfig {
            cipher_string: Some("HIGH:!aNULL !MD5".into()),
            ciphersuites: Some("TLS_AES_128_GCM_SHA256".into()),
            protocols: None,
            server_order: false,
            ..t.clone()
        };
        let l = now_lines_for(Software::Nginx, &spaced);
        assert!(l.contains(&"ssl_ciphers \"HIGH:!aNULL !MD5\";".to_string()), "{l:?}");
        assert!(
            l.contains(&"ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;".to_string()),
            "{l:?}"
        );
        assert!(l.contains(&"ssl_prefer_server_ciphers off;".to_string()) && !l.iter().any(|x| x.starts_with("ssl_protocols")));
        let Some(bin) = crate::discover::installed::find_program(&["nginx"]) else {
            crate::testing::missing("nginx is not installed");
            return;
        };
        let id = crate::backend::openssl::certs::Identity::generate(crate::backend::openssl::certs::CertType::Rsa2048).unwrap();
        for lines in [now_lines_for(Software::Nginx, &t), now_lines_for(Software::Nginx, &spaced)] {
            let n = crate::backend::nginx::PrivateNginx::start(&crate::backend::nginx::Spec {
                binary: std::path::Path::new(&bin),
                tls_lines: &lines,
                identity: &id,
                body: b"ok",
                start_within: std::time::Duration::from_secs(10),
            })
            .unwrap_or_else(|e| panic!("nginx refused {lines:?}: {e:#}"));
            drop(n);
        }
    }

    /// The installed values as Apache, HAProxy and stunnel lines: each the
    /// software's own syntax, and its private instance starts with them and a
    /// default client gets the server's first CBC suite over TLS 1.2, as the diff
    /// of such a file says; a client's order (`server_order` false) is kept.
    #[test]
    fn now_lines_for_each_server_are_its_own_and_it_takes_them() {
        use crate::discover::installed::TlsConfig;
        let t = TlsConfig {
            server: true,
            protocols: Some(vec!["TLSv1".into(), "TLSv1.1".into(), "TLSv1.2".into()]),
            cipher_string: Some("ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256".into()),
            groups: Some("X25519:prime256v1".into()),
            server_order: true,
            ..Default::default()
        };
        assert_eq!(
            now_lines_for(Software::Apache, &t),
            [
                "SSLProtocol -all +TLSv1 +TLSv1.1 +TLSv1.2",
                "SSLCipherSuite ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256",
                "SSLOpenSSLConfCmd Curves X25519:prime256v1",
                "SSLHonorCipherOrder on",
            ]
        );
        assert_eq!(
            now_lines_for(Software::Haproxy, &t),
            [
                "ssl-default-bind-ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256",
                "ssl-default-bind-curves X25519:prime256v1",
                "ssl-default-bind-options ssl-min-ver TLSv1.0 ssl-max-ver TLSv1.2",
            ]
        );
        assert_eq!(
            now_lines_for(Software::Stunnel, &t),
            [
                "sslVersionMin = TLSv1",
                "sslVersionMax = TLSv1.2",
                "ciphers = ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256",
                "curves = X25519:prime256v1",
                "options = CIPHER_SERVER_PREFERENCE",
            ]
        );
        let client = TlsConfig {
            server_order: false,
            ..t.clone()
        };
        assert!(now_lines_for(Software::Apache, &client).contains(&"SSLHonorCipherOrder off".to_string()));
        assert!(now_lines_for(Software::Haproxy, &client)
            .last()
            .is_some_and(|l| l.ends_with(" prefer-client-ciphers")));
        assert!(!now_lines_for(Software::Stunnel, &client).iter().any(|l| l.starts_with("options")));
        // Each private instance takes them: the plan's "now" side, as `check` runs it.
        for sw in [Software::Apache, Software::Haproxy, Software::Stunnel] {
            let Some(bin) = crate::discover::installed::find_program(sw.programs()) else {
                crate::testing::missing(&format!("{} is not installed", sw.name()));
                continue;
            };
            let id = crate::backend::openssl::certs::Identity::generate(crate::backend::openssl::certs::CertType::Rsa2048).unwrap();
            let lines = now_lines_for(sw, &t);
            let server = sw
                .start(&crate::backend::private::Spec {
                    binary: std::path::Path::new(&bin),
                    tls_lines: &lines,
                    identity: &id,
                    body: b"ok",
                    start_within: std::time::Duration::from_secs(10),
                })
                .unwrap_or_else(|e| panic!("{} refused {lines:?}: {e:#}", sw.name()));
            let (cipher, got) = crate::backend::private::tests::get_over_tls(server.addr(), crate::backend::private::PATH);
            assert_eq!(cipher, "ECDHE-RSA-AES128-SHA", "{}", sw.name());
            assert!(
                got.starts_with("HTTP/1.1 200") && got.ends_with("\r\n\r\nok"),
                "{}: {got}",
                sw.name()
            );
        }
    }
}

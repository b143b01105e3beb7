//! NZBGet `ServerX.Cipher`, as the installed NZBGet honours it.
//!
//! - NZBGet 25.4 and later give the string to OpenSSL's TLS 1.3 API
//!   (`SSL_set_ciphersuites`) and to its TLS ≤1.2 API (`SSL_set_cipher_list`).
//!   Each API skips the names it does not know, so the value lists the TLS 1.3
//!   suites (IANA names) and then the ≤1.2 ones (OpenSSL names).
//! - Earlier versions (Debian's 21.0) give it to `SSL_set_cipher_list` only: TLS
//!   1.3 names there steer nothing (and a list of TLS 1.3 names alone is refused:
//!   NZBGet then cannot connect). The value is the ≤1.2 list, and the TLS 1.3
//!   order and groups go into an OpenSSL configuration read by NZBGet alone
//!   (`OPENSSL_CONF`, set by a systemd drop-in for nzbget.service). That file
//!   includes the system's openssl.cnf first and points the system's own init
//!   section at its own `system_default`, so everything else stays as it was;
//!   that section keeps the system section's other entries (Debian's
//!   `CipherString = DEFAULT:@SECLEVEL=2`) and sets the answer's protocols
//!   (`MinProtocol`, and `MaxProtocol` below TLS 1.3).

use crate::recommend::choice::{Choice, Emitter, TlsChoice};

pub struct Nzbget;

/// Where the OpenSSL configuration for NZBGet alone goes.
pub const OPENSSL_CNF: &str = "/etc/nzbget/openssl-cipherbench.cnf";
/// The systemd drop-in that gives it to nzbget.service.
pub const DROP_IN: &str = "/etc/systemd/system/nzbget.service.d/cipherbench.conf";

pub use crate::model::NzbgetInstalled as Installed;

/// The NZBGet the lines are for, as the app found it installed (set once, before
/// recommending: the app discovers, this stage only reads what it is given).
static FOR: std::sync::OnceLock<Installed> = std::sync::OnceLock::new();

/// Emit for `i` from now on (the first call wins).
pub fn for_installed(i: Installed) {
    let _ = FOR.set(i);
}

/// What `for_installed` set; unset (a fleet, whose hosts are not this machine):
/// an NZBGet of unknown version (the form every version honours) on the
/// system's OpenSSL configuration at Debian's place.
fn installed() -> Installed {
    FOR.get().cloned().unwrap_or_else(|| Installed {
        version: None,
        system_cnf: "/usr/lib/ssl/openssl.cnf".into(),
        init_section: "openssl_init".into(),
        system_default: Vec::new(),
    })
}

impl Emitter for Nzbget {
    fn target(&self) -> &'static str {
        "nzbget"
    }
    fn location(&self) -> &'static str {
        "nzbget.conf, per news server (Server1.Cipher, Server2.Cipher ...); before NZBGet 25.4 also an OpenSSL configuration for NZBGet alone and a systemd drop-in"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        Some(lines(t, &installed()))
    }
}

/// The lines for `t` as the NZBGet described by `i` honours them.
pub fn lines(t: &TlsChoice, i: &Installed) -> Vec<String> {
    let tls13 = t.has("TLSv1.3") && !t.tls13.is_empty();
    if i.tls13_in_cipher() {
        let mut parts = Vec::new();
        if tls13 {
            parts.push(t.openssl_tls13());
        }
        if !t.tls12.is_empty() {
            parts.push(t.openssl_tls12());
        }
        return vec![format!("Server1.Cipher={}", parts.join(":"))];
    }
    let which = i
        .version
        .as_deref()
        .map(|v| format!("NZBGet {v}"))
        .unwrap_or_else(|| "NZBGet before 25.4".into());
    let mut out = Vec::new();
    if t.tls12.is_empty() {
        out.push(format!(
            "# Server1.Cipher: leave it empty ({which} gives it to TLS ≤1.2 only; a list of TLS 1.3 suites alone is refused and NZBGet cannot connect)"
        ));
    } else {
        out.push(format!("Server1.Cipher={}", t.openssl_tls12()));
    }
    let groups = (!t.groups.is_empty()).then(|| t.openssl_groups());
    if !tls13 && groups.is_none() {
        return out;
    }
    out.push(format!(
        "# {which} gives ServerX.Cipher to OpenSSL's TLS ≤1.2 API only: TLS 1.3 and groups come from an OpenSSL configuration for NZBGet alone."
    ));
    out.push(format!("# {OPENSSL_CNF}"));
    out.push(format!(".include {}", i.system_cnf));
    out.push(format!("[ {} ]", i.init_section));
    out.push("ssl_conf = cipherbench_nzbget_ssl".into());
    out.push("[ cipherbench_nzbget_ssl ]".into());
    out.push("system_default = cipherbench_nzbget_tls".into());
    out.push("[ cipherbench_nzbget_tls ]".into());
    // This section replaces the system's: what else that one sets stays.
    for (k, v) in &i.system_default {
        out.push(format!("{k} = {v}"));
    }
    if let Some(min) = t.min_protocol() {
        out.push(format!("MinProtocol = {min}"));
    }
    if let Some(max) = t.protocols.last().filter(|p| p.as_str() != "TLSv1.3") {
        out.push(format!("MaxProtocol = {max}"));
    }
    if tls13 {
        out.push(format!("Ciphersuites = {}", t.openssl_tls13()));
    }
    if let Some(g) = groups {
        out.push(format!("Groups = {g}"));
    }
    out.push(format!("# {DROP_IN} (then: systemctl daemon-reload; systemctl restart nzbget)"));
    out.push("[Service]".into());
    out.push(format!("Environment=OPENSSL_CONF={OPENSSL_CNF}"));
    out
}

/// The parts of [`lines`]: the nzbget.conf line(s), the OpenSSL configuration
/// file's text and the drop-in's text (both `None` when there are none).
pub fn parts(lines: &[String]) -> (Vec<String>, Option<String>, Option<String>) {
    let mut conf = Vec::new();
    let (mut cnf, mut drop_in) = (None::<String>, None::<String>);
    let mut into: u8 = 0;
    for l in lines {
        if l == &format!("# {OPENSSL_CNF}") {
            into = 1;
            cnf = Some(String::new());
            continue;
        }
        if l.starts_with(&format!("# {DROP_IN}")) {
            into = 2;
            drop_in = Some(String::new());
            continue;
        }
        let push = |s: &mut Option<String>| s.get_or_insert_with(String::new).push_str(&format!("{l}\n"));
        match into {
            1 => push(&mut cnf),
            2 => push(&mut drop_in),
            _ if l.starts_with("Server") => conf.push(l.clone()),
            _ => {}
        }
    }
    (conf, cnf, drop_in)
}

//! HAProxy `global` section (bind side; `haproxy -c` of Debian 12's HAProxy 2.6
//! accepts every line, `ssl-default-bind-curves` included).

use crate::recommend::choice::{Choice, Emitter};

pub struct Haproxy;

impl Emitter for Haproxy {
    fn target(&self) -> &'static str {
        "haproxy"
    }
    fn location(&self) -> &'static str {
        "haproxy.cfg, global section"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let mut out = Vec::new();
        if !t.tls12.is_empty() {
            out.push(format!("ssl-default-bind-ciphers {}", t.openssl_tls12()));
        }
        if t.has("TLSv1.3") {
            out.push(format!("ssl-default-bind-ciphersuites {}", t.openssl_tls13()));
        }
        out.extend(t.groups_line("ssl-default-bind-curves", " ", "", ""));
        let mut options = Vec::new();
        if let Some(min) = t.min_protocol() {
            options.push(format!("ssl-min-ver {}", min));
        }
        if let Some(max) = t.protocols.last() {
            options.push(format!("ssl-max-ver {}", max));
        }
        options.push("no-tls-tickets".into());
        out.push(format!("ssl-default-bind-options {}", options.join(" ")));
        Some(out)
    }
}

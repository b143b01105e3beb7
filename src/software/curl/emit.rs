//! curl (OpenSSL builds): command-line options.

use crate::recommend::choice::{Choice, Emitter};

pub struct Curl;

impl Emitter for Curl {
    fn target(&self) -> &'static str {
        "curl"
    }
    fn location(&self) -> &'static str {
        "curl command line (or ~/.curlrc without the leading dashes)"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let mut args = Vec::new();
        if let Some(min) = t.min_protocol() {
            args.push(format!("--{}", min.to_ascii_lowercase()));
        }
        if !t.tls12.is_empty() {
            args.push(format!("--ciphers '{}'", t.openssl_tls12()));
        }
        if t.has("TLSv1.3") {
            args.push(format!("--tls13-ciphers '{}'", t.openssl_tls13()));
        }
        if !t.groups.is_empty() {
            args.push(format!("--curves '{}'", t.openssl_groups()));
        }
        Some(vec![format!("curl {} https://HOST/", args.join(" "))])
    }
}

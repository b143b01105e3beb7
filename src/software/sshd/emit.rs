//! OpenSSH server: an `sshd_config` block (put it before any `Match` block).

use crate::recommend::choice::{Choice, Emitter};

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
        Some(s.server_lines())
    }
}

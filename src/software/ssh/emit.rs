//! OpenSSH client: a `Host` block for `~/.ssh/config`.

use crate::recommend::choice::{Choice, Emitter};

pub struct OpenSshClient;

impl Emitter for OpenSshClient {
    fn target(&self) -> &'static str {
        "ssh"
    }
    fn location(&self) -> &'static str {
        "~/.ssh/config (replace HOST)"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Ssh(s) = choice else { return None };
        let mut out = vec!["Host HOST".to_string()];
        out.extend(s.lines("    "));
        Some(out)
    }
}

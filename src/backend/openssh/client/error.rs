//! What went wrong with one ssh run, sorted into errors a user can act on.

use std::process::ExitStatus;

/// What went wrong with one ssh run, in the user's terms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SshError {
    /// The two sides have no algorithm in common: recorded as rejected, not fatal.
    #[error("refused: {0}")]
    Refused(String),
    #[error("authentication failed: {0} (cipherbench runs ssh with BatchMode=yes: use a key, e.g. --identity FILE, or ssh-agent)")]
    Auth(String),
    #[error("host key verification failed: {0} (connect once with plain ssh to check and accept the host key; cipherbench never turns checking off for a remote host)")]
    HostKey(String),
    #[error("host unreachable: {0}")]
    Unreachable(String),
    /// Accepted the TCP connection, then sent nothing, or too little, in time.
    #[error("{0}")]
    Stalled(String),
    /// Answered with something that is not an SSH banner.
    #[error("{0}")]
    NotSsh(String),
    /// The run's deadline passed while ssh ran; it was stopped.
    #[error("{0}")]
    Deadline(String),
    #[error("interrupted")]
    Interrupted,
    #[error("the far side cannot run `{command}`: {detail}")]
    NoCommand { command: String, detail: String },
    #[error("ssh failed ({status}): {detail}")]
    Failed { status: String, detail: String },
}

impl SshError {
    /// Errors that end the whole run (nothing else would work either).
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            SshError::Auth(_)
                | SshError::HostKey(_)
                | SshError::Unreachable(_)
                | SshError::NoCommand { .. }
                | SshError::Stalled(_)
                | SshError::NotSsh(_)
                | SshError::Deadline(_)
                | SshError::Interrupted
        )
    }
}

/// Sorts a finished ssh run: `None` when it succeeded.
pub fn classify(status: ExitStatus, stderr: &str, command: &str) -> Option<SshError> {
    if status.success() {
        return None;
    }
    let detail = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"))
        .collect::<Vec<_>>()
        .join("; ");
    let has = |s: &str| stderr.contains(s);
    Some(
        if has("Unable to negotiate")
            || has("no matching")
            || has("Unknown cipher type")
            || has("Unsupported KEX")
            || has("Unsupported MAC")
            || has("Bad SSH2 cipher spec")
            || has("Bad SSH2 Mac spec")
            || has("Bad key types")
            || has("Bad SSH2 KexAlgorithms")
        {
            SshError::Refused(detail)
        } else if has("Permission denied") || has("Too many authentication failures") {
            SshError::Auth(detail)
        } else if has("Host key verification failed")
            || has("REMOTE HOST IDENTIFICATION HAS CHANGED")
            || has("No ED25519 host key is known")
            || has("host key is known")
        {
            SshError::HostKey(detail)
        } else if has("banner exchange") && (has("timed out") || has("Connection timed out")) {
            SshError::Stalled(format!(
                "accepted the connection but sent no complete SSH banner in time: too slow to measure ({detail})"
            ))
        } else if has("kex_exchange_identification: Connection closed") || has("kex_exchange_identification: read: Connection reset") {
            SshError::Stalled(format!(
                "accepted the connection, then closed it before sending an SSH banner ({detail})"
            ))
        } else if has("Bad remote protocol version identification")
            || has("banner line contains invalid characters")
            || has("Protocol major versions differ")
            || has("Invalid SSH identification string")
        {
            SshError::NotSsh(format!("answered with something that is not SSH ({detail})"))
        } else if has("Could not resolve hostname")
            || has("Connection refused")
            || has("Connection timed out")
            || has("No route to host")
            || has("Network is unreachable")
            || has("Name or service not known")
            || has("Temporary failure in name resolution")
        {
            SshError::Unreachable(detail)
        } else if status.code() == Some(127) || has("command not found") {
            SshError::NoCommand {
                command: command.to_string(),
                detail: if detail.is_empty() { "exit status 127".into() } else { detail },
            }
        } else {
            SshError::Failed {
                status: status.to_string(),
                detail: if detail.is_empty() { "no message".into() } else { detail },
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn exit(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn classifies_what_users_see() {
        let c = |code, s: &str| classify(exit(code), s, "cat > /dev/null");
        assert_eq!(c(0, ""), None);
        assert!(matches!(
            c(
                255,
                "Unable to negotiate with 10.0.0.1 port 22: no matching cipher found. Their offer: aes128-ctr"
            ),
            Some(SshError::Refused(_))
        ));
        assert!(matches!(c(255, "root@h: Permission denied (publickey)."), Some(SshError::Auth(_))));
        assert!(matches!(c(255, "Host key verification failed."), Some(SshError::HostKey(_))));
        assert!(matches!(
            c(255, "ssh: connect to host 127.0.0.1 port 1: Connection refused"),
            Some(SshError::Unreachable(_))
        ));
        assert!(matches!(
            c(255, "ssh: Could not resolve hostname nowhere.invalid: Name or service not known"),
            Some(SshError::Unreachable(_))
        ));
        assert!(matches!(
            c(127, "bash: line 1: cat: command not found"),
            Some(SshError::NoCommand { .. })
        ));
        assert!(matches!(c(1, "something else"), Some(SshError::Failed { .. })));
        assert!(SshError::Auth(String::new()).is_fatal());
        assert!(!SshError::Refused(String::new()).is_fatal());
    }
}

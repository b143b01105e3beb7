//! The one rule for text from outside: every byte the code did not write itself (a
//! peer's banner or HTTP line, a certificate field, a name a peer offers, a string in
//! an export, a file name, a config file, a library's version string) is shown on a
//! terminal or in an error message only through [`shown`]. Control characters (C0,
//! DEL, C1 including NEL), line and paragraph separators, bidi overrides and other
//! invisible format characters come out escaped as `\x1b` or `\u{202e}`, so a peer
//! can neither move the cursor, retitle the window, clear the screen, hide text nor
//! forge a line of our output.

use std::borrow::Cow;

/// Whether `c` must never reach a terminal raw.
pub fn is_hostile(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            // soft hyphen, Arabic letter mark, Mongolian vowel separator
            '\u{00ad}' | '\u{061c}' | '\u{180e}'
            // zero-width space/joiners, LRM/RLM, line and paragraph separators,
            // bidi embeddings and overrides, word joiner and invisible operators,
            // bidi isolates, deprecated format characters, BOM, interlinear annotation
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            // tag characters (invisible ASCII look-alikes)
            | '\u{e0000}'..='\u{e007f}'
        )
}

/// `s` with every hostile character escaped: `\x1b` for one below U+0100, else
/// `\u{202e}`. Everything else, backslashes included, reads as given.
pub fn shown(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hostile) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_hostile(c) {
            if (c as u32) < 0x100 {
                out.push_str(&format!("\\x{:02x}", c as u32));
            } else {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text of our own that may hold lines: each line is [`shown`], the line breaks we
/// put there kept. For messages built by us around outside values, where a newline
/// in an outside value has already been escaped by the caller or is harmless as a
/// plain line break.
pub fn shown_lines(s: &str) -> String {
    s.split('\n')
        .map(|l| shown(l.strip_suffix('\r').unwrap_or(l)).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last guard before a terminal, for whole pages of our own output (tables,
/// answers, diffs) that carry outside values: line breaks and tabs stay, and so do
/// the colour sequences our renderer writes (`ESC [` digits and `;` then `m`);
/// every other hostile character is escaped as [`shown`] does. The values inside
/// are escaped where they are put in; this catches one that was not.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    let sgr_at = |rest: &str| -> Option<usize> {
        let body = rest.strip_prefix("\x1b[")?;
        let n = body.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
        body[n..].starts_with('m').then_some(2 + n + 1)
    };
    if !s.chars().any(|c| is_hostile(c) && c != '\n' && c != '\t') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let len = c.len_utf8();
        if c == '\x1b' {
            if let Some(n) = sgr_at(rest) {
                out.push_str(&rest[..n]);
                rest = &rest[n..];
                continue;
            }
        }
        if c == '\n' || c == '\t' || !is_hostile(c) {
            out.push(c);
        } else {
            out.push_str(&shown(&rest[..len]));
        }
        rest = &rest[len..];
    }
    Cow::Owned(out)
}

/// At most `max` bytes of `s` (cut at a character boundary), with "…" when cut: an
/// outside value in a message must not be able to fill the screen.
pub fn bounded(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… ({} bytes)", &s[..end], s.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_and_invisible_format_characters_are_escaped() {
        let hostile = "ok\x1b]0;pwned\x07\x1b[2J\r\n\u{85}\u{2028}\u{202e}gnp.exe\u{200b}\x7f\u{9b}";
        let s = shown(hostile);
        assert_eq!(
            s,
            "ok\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\x0a\\x85\\u{2028}\\u{202e}gnp.exe\\u{200b}\\x7f\\x9b"
        );
        assert!(!s.chars().any(is_hostile));
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for s in ["AES-128-GCM", "OpenSSL 3.0.19 27 Jan 2026", "ümlaut façade 東京", "C:\\path\\x", ""] {
            assert!(matches!(shown(s), Cow::Borrowed(_)), "{s}");
            assert_eq!(shown(s), s);
        }
    }

    #[test]
    fn every_char_below_0x20_and_in_the_c1_range_is_escaped() {
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            let s = c.to_string();
            let out = shown(&s);
            assert_ne!(out, s, "{c:?}");
            assert!(out.is_ascii());
        }
    }

    #[test]
    fn lines_keep_our_breaks_and_escape_the_rest() {
        assert_eq!(shown_lines("a\x1b\nb\r\nc"), "a\\x1b\nb\nc");
    }

    #[test]
    fn pages_keep_our_colours_and_lines_and_escape_the_rest() {
        let page = "\x1b[1;32mfast\x1b[0m\n\tGET / answered 'HTTP/1.1 200 \x1b]0;x\x07\x1b[2J'\r\u{2028}";
        assert_eq!(
            for_terminal(page),
            "\x1b[1;32mfast\x1b[0m\n\tGET / answered 'HTTP/1.1 200 \\x1b]0;x\\x07\\x1b[2J'\\x0d\\u{2028}"
        );
        assert!(matches!(for_terminal("plain\n\tpage"), Cow::Borrowed(_)));
    }

    #[test]
    fn bounded_cuts_at_a_char_boundary() {
        assert_eq!(bounded("abc", 5), "abc");
        let long = "é".repeat(10);
        let b = bounded(&long, 5);
        assert!(b.starts_with("éé…"), "{b}");
        assert!(b.ends_with("(20 bytes)"));
    }
}

//! The `cipherbench/1` JSON document, pretty-printed.
//!
//! Inside strings, every control and invisible format character that serde_json
//! would leave raw (DEL, C1 controls such as NEL and CSI, U+2028, bidi overrides:
//! what [`crate::untrusted::is_hostile`] names) is written as a `\uXXXX` escape. The
//! document means the same to any JSON parser, and printing it (`--json`, `cat` of
//! an export) cannot drive a terminal or reorder its text.

use crate::model::Document;
use serde_json::ser::{Formatter, PrettyFormatter};
use std::io::{self, Write};

pub fn render(doc: &Document) -> anyhow::Result<Vec<u8>> {
    let mut v = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut v, Escaping(PrettyFormatter::new()));
    serde::Serialize::serialize(doc, &mut ser)?;
    v.push(b'\n');
    Ok(v)
}

/// serde_json's pretty layout, with hostile characters in strings escaped.
struct Escaping<'a>(PrettyFormatter<'a>);

impl Formatter for Escaping<'_> {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if crate::untrusted::is_hostile(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                for unit in c.encode_utf16(&mut [0u16; 2]) {
                    write!(w, "\\u{unit:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(cpu: &str, lib: &str) -> Document {
        serde_json::from_value(serde_json::json!({
            "schema": "cipherbench/1",
            "run": {"id": "r", "started_at": "t", "status": "complete", "command": "speed",
                    "host": {"cpu_model": cpu, "cores": 2, "cpu_flags": ["aes"], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                    "libraries": {lib: "3"}, "settings": {"nested": [cpu]}},
            "results": []
        }))
        .unwrap()
    }

    #[test]
    fn hostile_characters_are_escaped_and_the_document_reads_back_the_same() {
        let cpu = "a\x1b[2J\x7f\u{85}\u{9b}31m\u{2028}\u{202e}gnp.exe\u{e0041}\t\"<b>\"";
        let d = doc(cpu, "open\u{9b}ssl");
        let out = String::from_utf8(render(&d).unwrap()).unwrap();
        assert!(!out.chars().any(|c| crate::untrusted::is_hostile(c) && c != '\n'), "{out}");
        assert!(
            out.contains(r#""cpu_model": "a\u001b[2J\u007f\u0085\u009b31m\u2028\u202egnp.exe\udb40\udc41\t\"<b>\"""#),
            "{out}"
        );
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(back, serde_json::to_value(&d).unwrap());
    }

    #[test]
    fn plain_documents_are_serde_json_pretty_byte_for_byte() {
        let d = doc("Intel(R) Xeon(R) ümlaut 東京", "openssl");
        let mut want = serde_json::to_vec_pretty(&d).unwrap();
        want.push(b'\n');
        assert_eq!(render(&d).unwrap(), want);
    }
}

//! The one word wrapper: words filled into lines of at most a given width, for
//! the progress notes, the answer page and `check`'s findings.
//!
//! The rule: a word goes on the current line when it fits there (after one blank
//! if the line holds a word already); otherwise it starts the next line. Words are
//! never split: one longer than a line keeps a line of its own, and stays on the
//! first line when that line holds no word yet and the next would give it no more
//! room (the first line is left empty when the next line starts further left).

/// How the width of text is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Terminal columns: wide characters take two, escape sequences none.
    Columns,
    /// Characters (`char`s).
    Chars,
}

impl Count {
    pub fn width(self, s: &str) -> usize {
        match self {
            Count::Columns => console::measure_text_width(s),
            Count::Chars => s.chars().count(),
        }
    }
}

/// `words` filled into lines of at most `width`: the first line starts after
/// `first` columns already used, the others after `indent`. The lines hold the
/// words only (joined by one blank; no indent); there is always at least one,
/// empty when there are no words (or when the first word moved to the second).
pub fn fill<'a>(words: impl IntoIterator<Item = &'a str>, width: usize, first: usize, indent: usize, count: Count) -> Vec<String> {
    let mut lines = vec![String::new()];
    let mut used = first;
    for w in words {
        let len = count.width(w);
        let line = lines.last_mut().expect("one line");
        if line.is_empty() && (used + len <= width || used <= indent) {
            line.push_str(w);
            used += len;
        } else if !line.is_empty() && used + 1 + len <= width {
            line.push(' ');
            line.push_str(w);
            used += 1 + len;
        } else {
            lines.push(w.to_string());
            used = indent + len;
        }
    }
    lines
}

/// [`fill`] with the prefixes written out: the first line starts with `first`,
/// the others with `indent`, and their widths count towards `width`.
pub fn lines<'a>(first: &str, words: impl IntoIterator<Item = &'a str>, indent: &str, width: usize, count: Count) -> Vec<String> {
    fill(words, width, count.width(first), count.width(indent), count)
        .into_iter()
        .enumerate()
        .map(|(i, l)| format!("{}{l}", if i == 0 { first } else { indent }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_to_the_width_and_no_further() {
        let w = ["aaaa", "bbbb", "cccc", "dddd", "eeee"];
        assert_eq!(fill(w, 14, 0, 2, Count::Columns), ["aaaa bbbb cccc", "dddd eeee"]);
        // The first line after 6 columns; the rest after 2.
        assert_eq!(fill(w, 14, 6, 2, Count::Columns), ["aaaa", "bbbb cccc", "dddd eeee"]);
        assert_eq!(fill(w, 15, 6, 2, Count::Columns), ["aaaa bbbb", "cccc dddd", "eeee"]);
        for (i, l) in lines("> ", w, "  ", 11, Count::Chars).iter().enumerate() {
            assert!(l.chars().count() <= 11, "{l:?}");
            assert!(l.starts_with(if i == 0 { "> " } else { "  " }), "{l:?}");
        }
    }

    #[test]
    fn a_long_word_keeps_a_line_of_its_own() {
        let long = "x".repeat(30);
        assert_eq!(fill([long.as_str(), "y"], 10, 0, 0, Count::Columns), [long.clone(), "y".into()]);
        assert_eq!(
            fill(["a", long.as_str(), "b"], 10, 0, 0, Count::Columns),
            ["a".to_string(), long.clone(), "b".into()]
        );
        // After a prefix wider than the indent, a word that does not fit moves to
        // the next line, where it has more room; after a narrower one it stays.
        assert_eq!(fill(["aaaaaaaa", "b"], 12, 6, 2, Count::Columns), ["", "aaaaaaaa b"]);
        assert_eq!(fill([long.as_str(), "b"], 10, 0, 3, Count::Columns), [long.as_str(), "b"]);
        assert_eq!(
            lines("head: ", [long.as_str()], "  ", 10, Count::Chars),
            ["head: ".to_string(), format!("  {long}")]
        );
    }

    #[test]
    fn no_words_is_one_empty_line() {
        assert_eq!(fill(Vec::<&str>::new(), 10, 3, 3, Count::Chars), [""]);
        assert_eq!(lines("head", Vec::<&str>::new(), "  ", 10, Count::Chars), ["head"]);
    }

    #[test]
    fn columns_and_chars_differ_on_wide_and_styled_text() {
        let wide = "日本語"; // 3 chars, 6 columns
        let red = "\u{1b}[31mred\u{1b}[0m"; // 3 columns
        assert_eq!((Count::Columns.width(wide), Count::Chars.width(wide)), (6, 3));
        assert_eq!(Count::Columns.width(red), 3);
        assert_eq!(fill([wide, wide], 10, 0, 0, Count::Columns).len(), 2);
        assert_eq!(fill([wide, wide], 10, 0, 0, Count::Chars).len(), 1);
        assert_eq!(fill([red, red], 7, 0, 0, Count::Columns), [format!("{red} {red}")]);
    }
}

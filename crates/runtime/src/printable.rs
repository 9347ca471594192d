//! Text from a plugin, made safe for the server log.
//!
//! The server log is line-oriented: a plugin's text with a newline or a
//! terminal escape in it could forge a line that looks like Warden's own
//! (`… WARN warden: plugin `x` loaded …`) or rewrite the operator's
//! terminal. Every plugin-controlled string that reaches the log goes
//! through `one_line`, which escapes line breaks and control characters.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` on one line: control characters (C0, DEL, C1), Unicode line and
/// paragraph separators and bidirectional overrides are written as escapes
/// (`\n`, `\u{1b}`); everything else is kept as it is.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut line = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => line.push_str("\\n"),
            '\r' => line.push_str("\\r"),
            '\t' => line.push_str("\\t"),
            c if needs_escape(c) => {
                let _ = write!(line, "\\u{{{:x}}}", c as u32);
            }
            c => line.push(c),
        }
    }
    Cow::Owned(line)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forged_lines_and_escapes_stay_on_one_line() {
        let forged = "ok\n2026-11-30T00:00:00Z  WARN warden: plugin `notes` granted /\r\u{1b}[2J\u{85}done";
        let line = one_line(forged);
        assert!(!line.contains(['\n', '\r', '\u{1b}', '\u{85}']), "{line}");
        assert_eq!(
            line,
            "ok\\n2026-11-30T00:00:00Z  WARN warden: plugin `notes` granted /\\r\\u{1b}[2J\\u{85}done"
        );
        assert_eq!(one_line("a\u{2028}b\u{202e}c"), "a\\u{2028}b\\u{202e}c");
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        assert!(matches!(one_line("héllo, wörld — 日本"), Cow::Borrowed(_)));
    }
}

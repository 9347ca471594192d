//! The one escaper: text from a plugin or a registry, made safe for the
//! server log and the operator's terminal.
//!
//! The server log is line-oriented: a plugin's text with a newline or a
//! terminal escape in it could forge a line that looks like Warden's own
//! (`… WARN warden: plugin `x` loaded …`, `✓ x: pulled …, signed by …`),
//! or write to the operator's clipboard or window title (OSC 52, OSC 0).
//! Every plugin- or registry-controlled string that reaches the log or a
//! terminal goes through here: `one_line` for a value inside a line,
//! `lines` for a report Warden composed of several, `log_event` for each
//! event the log writer is handed (so nothing reaches the log unescaped).

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

/// A report of several lines: its line breaks kept, every other control
/// character escaped as `one_line` does.
pub fn lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && needs_escape(c)) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.split('\n').map(one_line).collect::<Vec<_>>().join("\n"))
}

/// One event as the log's formatter wrote it (ending in a line break), made
/// one line: when `colors`, the SGR sequences (`ESC [ digits ; … m`) the
/// formatter colours with are kept — it escapes ESC in the values it writes
/// — and every other control character is escaped.
pub fn log_event(event: &str, colors: bool) -> Cow<'_, str> {
    let (body, end) = match event.strip_suffix('\n') {
        Some(body) => (body, "\n"),
        None => (event, ""),
    };
    if !body.chars().any(needs_escape) {
        return Cow::Borrowed(event);
    }
    let mut line = String::with_capacity(event.len() + 16);
    let mut rest = body;
    while let Some(at) = rest.find('\u{1b}') {
        line.push_str(&one_line(&rest[..at]));
        let after = &rest[at + 1..];
        match sgr_length(after) {
            Some(length) if colors => {
                line.push('\u{1b}');
                line.push_str(&after[..length]);
                rest = &after[length..];
            }
            _ => {
                line.push_str("\\u{1b}");
                rest = after;
            }
        }
    }
    line.push_str(&one_line(rest));
    line.push_str(end);
    Cow::Owned(line)
}

/// The length of `[` digits and `;` then `m` at the start of `text`.
fn sgr_length(text: &str) -> Option<usize> {
    let inner = text.strip_prefix('[')?;
    let parameters = inner.bytes().take_while(|b| b.is_ascii_digit() || *b == b';').count();
    (inner.as_bytes().get(parameters) == Some(&b'm')).then_some(parameters + 2)
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
    fn a_log_event_keeps_only_its_colours_and_its_end() {
        let forged =
            "\u{1b}[2mtime\u{1b}[0m \u{1b}[33mWARN\u{1b}[0m failed: busy\r\n✓ x: pulled\u{1b}]52;c;aGk=\u{7}\n";
        assert_eq!(
            log_event(forged, true),
            "\u{1b}[2mtime\u{1b}[0m \u{1b}[33mWARN\u{1b}[0m failed: busy\\r\\n✓ x: pulled\\u{1b}]52;c;aGk=\\u{7}\n"
        );
        let plain = log_event(forged, false);
        assert!(
            !plain.trim_end_matches('\n').contains(['\n', '\r', '\u{1b}', '\u{7}']),
            "{plain}"
        );
        assert!(
            plain.starts_with("\\u{1b}[2mtime") && plain.ends_with("\\u{7}\n"),
            "{plain}"
        );
        assert!(matches!(log_event("ok line\n", false), Cow::Borrowed(_)));
    }

    #[test]
    fn a_report_keeps_its_lines_and_nothing_else() {
        assert_eq!(lines("a\n\u{1b}[2Jb\r\n"), "a\n\\u{1b}[2Jb\\r\n");
        assert!(matches!(lines("a\nb\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        assert!(matches!(one_line("héllo, wörld — 日本"), Cow::Borrowed(_)));
    }
}

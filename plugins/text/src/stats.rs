//! `text_stats`: counting characters, bytes, words, lines and sentences.

use schemars::JsonSchema;
use serde::Serialize;

#[derive(Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    /// Unicode scalar values.
    pub characters: usize,
    /// Length in UTF-8 bytes.
    pub bytes: usize,
    pub words: usize,
    pub lines: usize,
    pub sentences: usize,
}

impl Stats {
    pub fn of(text: &str) -> Stats {
        Stats {
            characters: text.chars().count(),
            bytes: text.len(),
            words: text.split_whitespace().count(),
            lines: text.lines().count(),
            sentences: sentences(text),
        }
    }

    /// For example `11 characters (11 bytes), 2 words, 1 line, 1 sentence.`
    pub fn describe(&self) -> String {
        format!(
            "{} ({}), {}, {}, {}.",
            count(self.characters, "character"),
            count(self.bytes, "byte"),
            count(self.words, "word"),
            count(self.lines, "line"),
            count(self.sentences, "sentence"),
        )
    }
}

fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Ends a sentence when followed by whitespace or the end of the text.
fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

/// Ends a sentence wherever it stands (CJK full-width punctuation).
fn is_wide_terminator(c: char) -> bool {
    matches!(c, '。' | '！' | '？')
}

/// May stand between a terminator and the following space: `He said "Hi."`.
fn is_closing(c: char) -> bool {
    matches!(c, '"' | '\'' | '”' | '’' | '»' | ')' | ']' | '}')
}

/// Sentences are stretches that contain a letter or digit and end at a terminator
/// run (optionally followed by closing quotes or brackets) that is followed by
/// whitespace or the end of the text; trailing text without a terminator counts too.
fn sentences(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut count = 0;
    let mut has_content = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() {
            has_content = true;
            i += 1;
        } else if is_terminator(c) || is_wide_terminator(c) {
            let mut j = i;
            let mut wide = false;
            while j < chars.len() && (is_terminator(chars[j]) || is_wide_terminator(chars[j])) {
                wide |= is_wide_terminator(chars[j]);
                j += 1;
            }
            while j < chars.len() && is_closing(chars[j]) {
                j += 1;
            }
            let ends = wide || j == chars.len() || chars[j].is_whitespace();
            if ends && has_content {
                count += 1;
                has_content = false;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    if has_content {
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(c: usize, b: usize, w: usize, l: usize, s: usize) -> Stats {
        Stats {
            characters: c,
            bytes: b,
            words: w,
            lines: l,
            sentences: s,
        }
    }

    #[test]
    fn counts() {
        assert_eq!(Stats::of(""), stats(0, 0, 0, 0, 0));
        assert_eq!(Stats::of("Hello world"), stats(11, 11, 2, 1, 1));
        assert_eq!(Stats::of("Hello world. How are you?\nFine!"), stats(31, 31, 6, 2, 3));
        assert_eq!(Stats::of("Café ☕"), stats(6, 9, 2, 1, 1));
        assert_eq!(Stats::of("a\n\nb\n"), stats(5, 5, 2, 3, 1));
    }

    #[test]
    fn sentence_rules() {
        assert_eq!(sentences("Version 1.2 is out"), 1);
        assert_eq!(sentences("Wait... what?!"), 2);
        assert_eq!(sentences("He said \"Hi.\" Then left."), 2);
        assert_eq!(sentences("..."), 0);
        assert_eq!(sentences("你好。再见。"), 2);
        assert_eq!(sentences("no punctuation at all"), 1);
    }

    #[test]
    fn description() {
        assert_eq!(
            Stats::of("Hello world").describe(),
            "11 characters (11 bytes), 2 words, 1 line, 1 sentence."
        );
        assert_eq!(
            Stats::of("").describe(),
            "0 characters (0 bytes), 0 words, 0 lines, 0 sentences."
        );
    }

    #[test]
    fn json_shape() {
        assert_eq!(
            serde_json::to_value(Stats::of("Hi.")).unwrap(),
            serde_json::json!({"bytes": 3, "characters": 3, "lines": 1, "sentences": 1, "words": 1})
        );
    }
}

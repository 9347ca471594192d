//! Finding a plugin's secrets in text it gave Warden, and writing
//! `[redacted]` in their place.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use aho_corasick::AhoCorasick;
use anyhow::{Context, Result};

use super::Secret;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not redacted. A value of a few bytes
/// ("on", "1", "abc") occurs all over ordinary text: replacing it would make
/// logs unreadable, and every `[redacted]` would show the reader where the
/// value occurs — for a value that short, that is the value itself. (A value
/// that short is no secret worth the name either: three bytes are guessed
/// in 16 million tries.) Loading a plugin warns about such a value.
pub const MIN_REDACTED_BYTES: usize = 4;

/// One plugin's secret values, built once per load, and where they occur
/// in a text. Empty for a plugin without secrets, which then costs nothing.
#[derive(Default)]
pub struct Redactor {
    /// All the secrets at once: one pass over a text finds every
    /// occurrence, overlapping ones included, in time linear in the text.
    finder: Option<AhoCorasick>,
    /// Each secret with its prefix function, for `redact_cut`.
    secrets: Vec<(Box<[u8]>, Vec<u32>)>,
}

impl Redactor {
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a Secret>) -> Result<Self> {
        let mut kept: Vec<&[u8]> = secrets
            .into_iter()
            .map(|secret| secret.expose().as_bytes())
            .filter(|value| value.len() >= MIN_REDACTED_BYTES)
            .collect();
        kept.sort_unstable();
        kept.dedup();
        if kept.is_empty() {
            return Ok(Self::default());
        }
        let finder = AhoCorasick::new(&kept).context("cannot prepare to redact the plugin's secrets")?;
        Ok(Self {
            finder: Some(finder),
            secrets: kept
                .into_iter()
                .map(|value| (value.into(), prefix_function(value)))
                .collect(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.finder.is_none()
    }

    /// `text` with every occurrence of a secret replaced by `[redacted]`;
    /// occurrences that overlap or touch become one `[redacted]`, so no part
    /// of either is left.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Some(finder) = &self.finder else {
            return Cow::Borrowed(text);
        };
        let mut found: Vec<Range<usize>> = finder.find_overlapping_iter(text).map(|m| m.range()).collect();
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        found.sort_unstable_by_key(|range| range.start);
        let mut redacted = String::with_capacity(text.len());
        let mut written = 0;
        let mut current = found[0].clone();
        for range in found.into_iter().skip(1) {
            if range.start <= current.end {
                current.end = current.end.max(range.end);
            } else {
                redacted.push_str(&text[written..current.start]);
                redacted.push_str(REDACTED);
                written = current.end;
                current = range;
            }
        }
        redacted.push_str(&text[written..current.start]);
        redacted.push_str(REDACTED);
        redacted.push_str(&text[current.end..]);
        Cow::Owned(redacted)
    }

    /// `redact` for a text Warden owns: unchanged text is not copied.
    pub fn redact_owned(&self, text: String) -> String {
        match self.redact(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(redacted) => redacted,
        }
    }

    /// Like `redact`, for a text that was cut off at its end (output past a
    /// buffer's cap): a secret's beginning left at the cut is redacted too,
    /// so a plugin whose output hits the cap mid-secret does not log half of it.
    pub fn redact_cut<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let redacted = self.redact(text);
        let bytes = redacted.as_bytes();
        let cut = self
            .secrets
            .iter()
            .map(|(secret, prefix)| prefix_at_end(secret, prefix, bytes))
            .max()
            .unwrap_or(0);
        let keep = redacted.len() - cut;
        if cut == 0 || !redacted.is_char_boundary(keep) {
            return redacted;
        }
        Cow::Owned(format!("{}{REDACTED}", &redacted[..keep]))
    }

    /// An error whose text may carry the plugin's words (a load error
    /// quoting its declarations), with the secrets in it redacted.
    pub fn redact_error(&self, error: anyhow::Error) -> anyhow::Error {
        if self.is_empty() {
            return error;
        }
        let text = format!("{error:#}");
        match self.redact(&text) {
            Cow::Borrowed(_) => error,
            Cow::Owned(redacted) => anyhow::anyhow!(redacted),
        }
    }
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

/// The prefix function of `value` (Knuth–Morris–Pratt): at each position,
/// the length of the longest proper prefix that ends there.
fn prefix_function(value: &[u8]) -> Vec<u32> {
    let mut prefix = vec![0u32; value.len()];
    let mut length = 0usize;
    for i in 1..value.len() {
        while length > 0 && value[i] != value[length] {
            length = prefix[length - 1] as usize;
        }
        if value[i] == value[length] {
            length += 1;
        }
        prefix[i] = length as u32;
    }
    prefix
}

/// The length of the longest proper prefix of `secret` that `text` ends
/// with, in time linear in the secret's length.
fn prefix_at_end(secret: &[u8], prefix: &[u32], text: &[u8]) -> usize {
    // Only the last `len - 1` bytes can hold a proper prefix.
    let tail = &text[text.len().saturating_sub(secret.len() - 1)..];
    let mut matched = 0usize;
    for &byte in tail {
        while matched > 0 && secret[matched] != byte {
            matched = prefix[matched - 1] as usize;
        }
        if secret[matched] == byte {
            matched += 1;
        }
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor(secrets: &[&str]) -> Redactor {
        let secrets: Vec<Secret> = secrets.iter().map(|s| Secret::new(*s)).collect();
        Redactor::new(&secrets).unwrap()
    }

    #[test]
    fn every_occurrence_is_replaced() {
        let r = redactor(&["sk-live-4f9a1c", "hunter22"]);
        assert_eq!(
            r.redact("key sk-live-4f9a1c, password hunter22, key again sk-live-4f9a1c."),
            "key [redacted], password [redacted], key again [redacted]."
        );
        assert_eq!(r.redact("sk-live-4f9a1csk-live-4f9a1c"), "[redacted]");
        assert_eq!(r.redact("émoji 🔑hunter22🔑"), "émoji 🔑[redacted]🔑");
    }

    #[test]
    fn text_without_secrets_is_borrowed_unchanged() {
        let r = redactor(&["sk-live-4f9a1c"]);
        assert!(matches!(r.redact("sk-live-4f9a1 is not it"), Cow::Borrowed(_)));
        assert!(matches!(Redactor::default().redact("anything"), Cow::Borrowed(_)));
        assert!(Redactor::default().is_empty());
        assert_eq!(r.redact_owned("a sk-live-4f9a1c".into()), "a [redacted]");
    }

    #[test]
    fn overlapping_secrets_leave_no_part_of_either() {
        let r = redactor(&["abcdef", "cdefgh"]);
        assert_eq!(r.redact("<abcdefgh>"), "<[redacted]>");
        let r = redactor(&["abab"]);
        assert_eq!(r.redact("xabababx"), "x[redacted]x");
        let r = redactor(&["secret-key", "key-material"]);
        assert_eq!(r.redact("the secret-key-material!"), "the [redacted]!");
    }

    #[test]
    fn values_shorter_than_four_bytes_are_not_redacted() {
        let r = redactor(&["abc", "on", ""]);
        assert!(r.is_empty());
        assert_eq!(r.redact("abc is on"), "abc is on");
        let r = redactor(&["abcd"]);
        assert_eq!(r.redact("abcd"), "[redacted]");
    }

    #[test]
    fn a_secret_cut_off_at_the_end_is_redacted_too() {
        let r = redactor(&["sk-live-4f9a1c", "abab-tail"]);
        assert_eq!(r.redact_cut("the key is sk-live-4f"), "the key is [redacted]");
        assert_eq!(r.redact_cut("the key is s"), "the key is [redacted]");
        assert_eq!(r.redact_cut("ends with aba"), "ends with [redacted]");
        assert_eq!(r.redact_cut("ends with abab-"), "ends with [redacted]");
        assert_eq!(
            r.redact_cut("a whole sk-live-4f9a1c and no cut"),
            "a whole [redacted] and no cut"
        );
        assert_eq!(r.redact_cut("nothing at the end"), "nothing at the end");
        // Only a cut text is treated so.
        assert_eq!(r.redact("the key is sk-live-4f"), "the key is sk-live-4f");
    }

    #[test]
    fn errors_are_redacted_and_debug_names_no_secret() {
        let r = redactor(&["sk-live-4f9a1c"]);
        let error = anyhow::anyhow!("tool name `sk-live-4f9a1c` is invalid").context("list-tools");
        assert_eq!(
            format!("{:#}", r.redact_error(error)),
            "list-tools: tool name `[redacted]` is invalid"
        );
        assert_eq!(format!("{r:?}"), "Redactor { secrets: 1 }");
    }
}

//! The anchored glob the trust policy writes repository patterns and keyless
//! subjects in: `*` matches within one path segment, `**` across them, and
//! the whole text must match — `ghcr.io/acme/*` never matches
//! `ghcr.io/acme-evil/x` or `evil.io/ghcr.io/acme/x`.

/// Anchored glob: `*` matches within one path segment, `**` across them.
pub fn matches(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p {
            [] => t.is_empty(),
            [b'*', b'*', rest @ ..] => (0..=t.len()).any(|i| go(rest, &t[i..])),
            [b'*', rest @ ..] => {
                let segment = t.iter().position(|&b| b == b'/').unwrap_or(t.len());
                (0..=segment).any(|i| go(rest, &t[i..]))
            }
            [c, rest @ ..] => t.first() == Some(c) && go(rest, &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_anchored_and_segment_aware() {
        assert!(matches("ghcr.io/acme/*", "ghcr.io/acme/hello"));
        assert!(!matches("ghcr.io/acme/*", "ghcr.io/acme/x/y"));
        assert!(matches("ghcr.io/acme/**", "ghcr.io/acme/x/y"));
        assert!(!matches("ghcr.io/acme/*", "ghcr.io/acme-evil/hello"));
        assert!(!matches("ghcr.io/acme/hello", "ghcr.io/acme/hello2"));
        assert!(!matches("ghcr.io/acme/hello", "evil.io/ghcr.io/acme/hello"));
        assert!(matches("127.0.0.1:5000/tools/*", "127.0.0.1:5000/tools/hello"));
    }
}

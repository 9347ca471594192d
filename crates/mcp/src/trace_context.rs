//! W3C Trace Context: the `traceparent` a client sends with a request —
//! in `_meta` (SEP-414, the 2026-07-28 wire) or as an HTTP header — is
//! carried into the log lines and the audit record of the call it starts, so
//! an operator can follow one agent action across their tracing system and
//! Warden's logs. Only a well-formed value is kept (W3C: otherwise ignore
//! it); it is at most 55 characters, so a client cannot make log lines grow.

/// A validated `traceparent` (version 00 layout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent(String);

impl TraceParent {
    /// `version-traceid-parentid-flags`, lowercase hex, with neither id all
    /// zeros and version `ff` refused. A later version's extra fields are
    /// dropped, as the spec tells version-00 parsers to do.
    pub fn parse(value: &str) -> Option<Self> {
        let value = value.trim();
        // A traceparent is ASCII; refusing anything else keeps every index
        // below on a character boundary (a client's `_meta` string is not).
        if !value.is_ascii() {
            return None;
        }
        let head = value.get(..55)?;
        // A later version may add fields after a `-`; version 00 may not.
        if value.len() > 55 && (value.as_bytes()[55] != b'-' || value.starts_with("00")) {
            return None;
        }
        let mut parts = head.split('-');
        let (version, trace_id, parent_id, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let ok = hex(version, 2)
            && version != "ff"
            && hex(trace_id, 32)
            && trace_id.bytes().any(|b| b != b'0')
            && hex(parent_id, 16)
            && parent_id.bytes().any(|b| b != b'0')
            && hex(flags, 2);
        ok.then(|| TraceParent(head.to_string()))
    }

    /// From a request: `_meta.traceparent` first, else the HTTP header.
    pub fn of_request(meta: Option<&str>, header: Option<&str>) -> Option<Self> {
        meta.and_then(Self::parse).or_else(|| header.and_then(Self::parse))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn trace_id(&self) -> &str {
        &self.0[3..35]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_multibyte_character_where_an_index_falls_is_refused_not_a_panic() {
        for bad in [format!("€{}-x", "a".repeat(52)), format!("0é{}-x", "a".repeat(52))] {
            assert_eq!(TraceParent::parse(&bad), None, "{bad}");
        }
    }

    #[test]
    fn well_formed_values_only() {
        let parsed = TraceParent::parse(VALID).unwrap();
        assert_eq!(parsed.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
        // A later version may append fields; the version-00 part is kept.
        let later = TraceParent::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what").unwrap();
        assert_eq!(
            later.as_str(),
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        assert_eq!(
            TraceParent::of_request(Some("junk"), Some(VALID)).unwrap().as_str(),
            VALID,
            "an invalid _meta value falls back to the header"
        );
    }
}

//! Cursor pagination for list results. A cursor is the opaque offset of the
//! next page; lists are sorted, so pages are deterministic for a snapshot.

use rmcp::ErrorData as McpError;

pub const PAGE_SIZE: usize = 100;

/// The range of items for this page and the cursor of the next one.
pub fn page(cursor: Option<&str>, total: usize) -> Result<(std::ops::Range<usize>, Option<String>), McpError> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("o:")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n <= total)
            .ok_or_else(|| McpError::invalid_params(format!("invalid cursor {cursor:?}"), None))?,
    };
    let end = (start + PAGE_SIZE).min(total);
    let next = (end < total).then(|| format!("o:{end}"));
    Ok((start..end, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_through_and_rejects_bad_cursors() {
        assert_eq!(page(None, 3).unwrap(), (0..3, None));
        assert_eq!(page(None, 250).unwrap(), (0..100, Some("o:100".into())));
        assert_eq!(page(Some("o:200"), 250).unwrap(), (200..250, None));
        assert!(page(Some("o:300"), 250).is_err());
        assert!(page(Some("garbage"), 250).is_err());
    }
}

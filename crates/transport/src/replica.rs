//! A replica's name (`--replica-id`): the prefix of the 2025-11-25 session
//! ids it makes, so a proxy can route a session to the replica holding it.

/// The longest replica name accepted.
const MAX_LEN: usize = 32;

/// Accepts 1 to 32 characters of `a-z`, `0-9` and `-`, not starting or
/// ending with `-`: safe in a header, a regular expression and a log line.
pub fn parse_replica_id(text: &str) -> Result<String, String> {
    let valid = !text.is_empty()
        && text.len() <= MAX_LEN
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !text.starts_with('-')
        && !text.ends_with('-');
    if valid {
        Ok(text.to_string())
    } else {
        Err(format!(
            "a replica id is 1 to {MAX_LEN} characters of a-z, 0-9 and '-', not starting or ending with '-'"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lowercase_names_only() {
        for good in ["r1", "warden-0", "a", "0", &"x".repeat(32)] {
            assert_eq!(parse_replica_id(good).as_deref(), Ok(good), "{good}");
        }
        for bad in ["", "R1", "r.1", "r_1", "-r", "r-", "r 1", "ré", &"x".repeat(33)] {
            assert!(parse_replica_id(bad).is_err(), "{bad:?} was accepted");
        }
    }
}

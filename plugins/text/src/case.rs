//! `change_case`: upper, lower and word-based cases (title, snake, kebab, camel, pascal, constant).

pub const CASES: [&str; 8] = [
    "upper", "lower", "title", "snake", "kebab", "camel", "pascal", "constant",
];

/// The names are those of `CASES`, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Case {
    Upper,
    Lower,
    Title,
    Snake,
    Kebab,
    Camel,
    Pascal,
    Constant,
}

impl Case {
    #[cfg(test)]
    pub fn from_name(name: &str) -> Option<Case> {
        Some(match name {
            "upper" => Case::Upper,
            "lower" => Case::Lower,
            "title" => Case::Title,
            "snake" => Case::Snake,
            "kebab" => Case::Kebab,
            "camel" => Case::Camel,
            "pascal" => Case::Pascal,
            "constant" => Case::Constant,
            _ => return None,
        })
    }

    /// Fails only for a word-based case when the text has no letters or digits.
    pub fn convert(self, text: &str) -> Result<String, String> {
        match self {
            Case::Upper => return Ok(text.to_uppercase()),
            Case::Lower => return Ok(text.to_lowercase()),
            _ => {}
        }
        let words = words(text);
        if words.is_empty() {
            return Err(format!(
                "the text has no letters or digits to convert to {} case; \
                 use `upper` or `lower` to change a text without words",
                self.name()
            ));
        }
        let bare = |w: &String| -> String { w.chars().filter(|c| !is_apostrophe(*c)).collect() };
        Ok(match self {
            Case::Title => words.iter().map(|w| capitalize(w)).collect::<Vec<_>>().join(" "),
            Case::Snake => join(words.iter().map(|w| bare(w).to_lowercase()), "_"),
            Case::Kebab => join(words.iter().map(|w| bare(w).to_lowercase()), "-"),
            Case::Constant => join(words.iter().map(|w| bare(w).to_uppercase()), "_"),
            Case::Pascal => join(words.iter().map(|w| capitalize(&bare(w))), ""),
            Case::Camel => join(
                words.iter().enumerate().map(|(i, w)| {
                    if i == 0 {
                        bare(w).to_lowercase()
                    } else {
                        capitalize(&bare(w))
                    }
                }),
                "",
            ),
            Case::Upper | Case::Lower => unreachable!(),
        })
    }

    fn name(self) -> &'static str {
        CASES[self as usize]
    }
}

fn join(parts: impl Iterator<Item = String>, separator: &str) -> String {
    parts.collect::<Vec<_>>().join(separator)
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect(),
        None => String::new(),
    }
}

fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '’'
}

/// Splits a text into words: runs of letters and digits (an apostrophe between two
/// of them stays inside the word: "don't"), broken where a lowercase letter or digit
/// meets an uppercase one ("helloWorld") and before the last capital of an acronym
/// followed by lowercase ("HTTPServer" is HTTP, Server).
pub fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    let mut prev: Option<char> = None; // last letter or digit of `current`
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        if c.is_alphanumeric() {
            if let Some(p) = prev {
                let lower_to_upper = (p.is_lowercase() || p.is_numeric()) && c.is_uppercase();
                let acronym_end = p.is_uppercase() && c.is_uppercase() && next.is_some_and(|n| n.is_lowercase());
                if lower_to_upper || acronym_end {
                    words.push(std::mem::take(&mut current));
                }
            }
            current.push(c);
            prev = Some(c);
        } else if is_apostrophe(c) && prev.is_some() && next.is_some_and(|n| n.is_alphanumeric()) {
            current.push(c);
        } else {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            prev = None;
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(case: &str, text: &str) -> String {
        Case::from_name(case).unwrap().convert(text).unwrap()
    }

    #[test]
    fn splitting() {
        assert_eq!(words("parseHTTPRequest"), ["parse", "HTTP", "Request"]);
        assert_eq!(words("  hello_world-foo bar "), ["hello", "world", "foo", "bar"]);
        assert_eq!(words("don't stop"), ["don't", "stop"]);
        assert_eq!(words("utf8String v2"), ["utf8", "String", "v2"]);
        assert_eq!(words("'quoted'"), ["quoted"]);
    }

    #[test]
    fn cases() {
        assert_eq!(convert("upper", "Hello, World! ß"), "HELLO, WORLD! SS");
        assert_eq!(convert("lower", "Hello, World!"), "hello, world!");
        assert_eq!(convert("title", "the QUICK brown_fox"), "The Quick Brown Fox");
        assert_eq!(convert("title", "don't stop"), "Don't Stop");
        assert_eq!(convert("snake", "Hello World"), "hello_world");
        assert_eq!(convert("snake", "parseHTTPRequest"), "parse_http_request");
        assert_eq!(convert("kebab", "Hello World"), "hello-world");
        assert_eq!(convert("camel", "hello world"), "helloWorld");
        assert_eq!(convert("camel", "XML http request"), "xmlHttpRequest");
        assert_eq!(convert("pascal", "hello_world"), "HelloWorld");
        assert_eq!(convert("constant", "max-retry count"), "MAX_RETRY_COUNT");
        assert_eq!(convert("snake", "don't stop"), "dont_stop");
        assert_eq!(convert("upper", ""), "");
    }

    #[test]
    fn no_words() {
        let err = Case::Snake.convert("!!! ...").unwrap_err();
        assert!(err.contains("snake case"), "{err}");
    }

    #[test]
    fn names_round_trip() {
        for name in CASES {
            assert_eq!(Case::from_name(name).unwrap().name(), name);
        }
        assert_eq!(Case::from_name("Upper"), None);
        for name in CASES {
            let case: Case = serde_json::from_value(serde_json::json!(name)).unwrap();
            assert_eq!(case.name(), name);
        }
    }
}

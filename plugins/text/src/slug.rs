//! `slugify`: titles to URL slugs.

pub struct Options {
    pub separator: char,
    pub max_length: Option<usize>,
    pub allow_unicode: bool,
}

pub fn slugify(text: &str, options: &Options) -> Result<String, String> {
    let mut slug = String::new();
    let mut pending_separator = false;
    let push = |slug: &mut String, piece: &str, pending: &mut bool| {
        if *pending && !slug.is_empty() {
            slug.push(options.separator);
        }
        *pending = false;
        slug.push_str(piece);
    };
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            push(&mut slug, c.encode_utf8(&mut [0; 4]), &mut pending_separator);
        } else if c == '\'' || c == '’' || ('\u{300}'..='\u{36f}').contains(&c) {
            // Apostrophes and combining accents vanish: "don't" is "dont".
        } else if let Some(ascii) = transliterate(c) {
            push(&mut slug, ascii, &mut pending_separator);
        } else if c.is_alphanumeric() && options.allow_unicode {
            push(&mut slug, c.encode_utf8(&mut [0; 4]), &mut pending_separator);
        } else {
            pending_separator = true;
        }
    }
    if slug.is_empty() {
        return Err(if options.allow_unicode {
            "the text has no letters or digits to make a slug from".to_string()
        } else {
            "the text has no letters or digits with an ASCII form, so the slug would be \
             empty; pass \"allow_unicode\": true to keep non-Latin letters"
                .to_string()
        });
    }
    if let Some(max) = options.max_length {
        slug = shorten(&slug, max, options.separator);
    }
    Ok(slug)
}

/// Cuts at the last separator that fits; cuts inside the first word only when it alone
/// is too long.
fn shorten(slug: &str, max: usize, separator: char) -> String {
    if slug.chars().count() <= max {
        return slug.to_string();
    }
    let cut: String = slug.chars().take(max).collect();
    let next_is_separator = slug.chars().nth(max) == Some(separator);
    if next_is_separator {
        return cut;
    }
    match cut.rfind(separator) {
        Some(at) if at > 0 => cut[..at].to_string(),
        _ => cut,
    }
}

/// ASCII forms of the lowercase Latin letters in Latin-1 and Latin Extended-A.
fn transliterate(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì' | 'í' | 'î' | 'ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĳ' => "ij",
        'ĵ' => "j",
        'ķ' | 'ĸ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' | 'ŉ' | 'ŋ' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' | 'ș' | 'ſ' => "s",
        'ß' => "ss",
        'ţ' | 'ť' | 'ŧ' | 'ț' => "t",
        'þ' => "th",
        'ù' | 'ú' | 'û' | 'ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slug(text: &str) -> String {
        slugify(
            text,
            &Options {
                separator: '-',
                max_length: None,
                allow_unicode: false,
            },
        )
        .unwrap()
    }

    #[test]
    fn basics() {
        assert_eq!(slug("Hello, World!"), "hello-world");
        assert_eq!(slug("Crème Brûlée: A How-To!"), "creme-brulee-a-how-to");
        assert_eq!(slug("  Don't Panic  "), "dont-panic");
        assert_eq!(slug("Straße & Smørrebrød"), "strasse-smorrebrod");
        assert_eq!(slug("İstanbul"), "istanbul");
        assert_eq!(slug("Rust 2024 — what's new?"), "rust-2024-whats-new");
        assert_eq!(slug("foo日本bar"), "foo-bar");
    }

    #[test]
    fn options() {
        let underscore = Options {
            separator: '_',
            max_length: None,
            allow_unicode: false,
        };
        assert_eq!(slugify("Hello World", &underscore).unwrap(), "hello_world");
        let unicode = Options {
            separator: '-',
            max_length: None,
            allow_unicode: true,
        };
        assert_eq!(slugify("Привет, мир!", &unicode).unwrap(), "привет-мир");
        let short = |max| Options {
            separator: '-',
            max_length: Some(max),
            allow_unicode: false,
        };
        assert_eq!(slugify("The quick brown fox", &short(15)).unwrap(), "the-quick-brown");
        assert_eq!(slugify("The quick brown fox", &short(12)).unwrap(), "the-quick");
        assert_eq!(slugify("Supercalifragilistic", &short(5)).unwrap(), "super");
    }

    #[test]
    fn empty() {
        let plain = Options {
            separator: '-',
            max_length: None,
            allow_unicode: false,
        };
        assert!(slugify("日本語", &plain).unwrap_err().contains("allow_unicode"));
        assert!(slugify("!!!", &plain).is_err());
    }
}

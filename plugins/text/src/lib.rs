//! `text`: text utilities for Warden — statistics, case conversion and URL slugs.
//!
//! Everything here is pure and deterministic; the plugin needs no capabilities.

mod case;
mod slug;
mod stats;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use warden_plugin::{Error, Structured, tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TextArgs {
    /// The text to measure.
    text: String,
}

/// Counts the characters (Unicode scalar values), UTF-8 bytes, words (runs of
/// non-whitespace), lines and sentences in a text. A sentence ends at `.`, `!`, `?` or `…`
/// followed by whitespace or the end of the text, so abbreviations like "Dr." count as a
/// sentence end. Use it to check length limits or to describe a document.
#[tool(
    title = "Text statistics",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
fn text_stats(args: TextArgs) -> Structured<stats::Stats> {
    let stats = stats::Stats::of(&args.text);
    Structured::new(stats.describe(), stats)
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ChangeCaseArgs {
    /// The text to convert.
    text: String,
    /// The case to convert to.
    case: case::Case,
}

/// Rewrites a text in another letter case. `upper` and `lower` change every letter and keep
/// everything else. The other cases first split the text into words at spaces, punctuation
/// and case changes ("parseHTTPRequest" is parse, HTTP, Request) and join them again:
/// `title` gives "Parse Http Request", `snake` "parse_http_request", `kebab`
/// "parse-http-request", `camel` "parseHttpRequest", `pascal` "ParseHttpRequest" and
/// `constant` "PARSE_HTTP_REQUEST".
#[tool(
    title = "Change case",
    read_only,
    destructive = false,
    idempotent,
    open_world = false
)]
fn change_case(args: ChangeCaseArgs) -> Result<String, Error> {
    args.case.convert(&args.text).map_err(Error::InvalidArguments)
}

#[derive(Default, Deserialize, Serialize, JsonSchema)]
enum Separator {
    #[default]
    #[serde(rename = "-")]
    Dash,
    #[serde(rename = "_")]
    Underscore,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SlugifyArgs {
    /// The text to turn into a slug.
    text: String,
    /// What goes between words.
    #[serde(default)]
    separator: Separator,
    /// Longest slug wanted, in characters.
    #[schemars(range(min = 1, max = 1000))]
    max_length: Option<usize>,
    /// Keep letters and digits that have no ASCII form (lowercased) instead of dropping them.
    #[serde(default)]
    allow_unicode: bool,
}

/// Turns a title or phrase into a URL slug: lowercase ASCII letters and digits joined by a
/// separator, e.g. "Crème Brûlée: A How-To!" becomes "creme-brulee-a-how-to". Accented
/// Latin letters are transliterated, apostrophes are dropped, other characters separate
/// words. Letters with no ASCII form (e.g. Cyrillic, CJK) are dropped unless `allow_unicode`
/// is true. `max_length` shortens the slug at a word boundary when it can.
#[tool(title = "Slugify", read_only, destructive = false, idempotent, open_world = false)]
fn slugify(args: SlugifyArgs) -> Result<String, Error> {
    let options = slug::Options {
        separator: match args.separator {
            Separator::Dash => '-',
            Separator::Underscore => '_',
        },
        max_length: args.max_length,
        allow_unicode: args.allow_unicode,
    };
    slug::slugify(&args.text, &options).map_err(Error::InvalidArguments)
}

warden_plugin::export! { tools: [text_stats, change_case, slugify] }

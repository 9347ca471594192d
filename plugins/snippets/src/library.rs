//! The snippets themselves, and everything the plugin computes from them: search,
//! URIs, the Markdown index, prompt texts and completions. Pure, so it is tested natively.

/// One code snippet in the library.
#[derive(Debug, PartialEq, Eq)]
pub struct Snippet {
    pub language: &'static str,
    pub name: &'static str,
    /// One line, for lists and search results.
    pub title: &'static str,
    pub code: &'static str,
}

impl Snippet {
    /// `snippets://<language>/<name>`.
    pub fn uri(&self) -> String {
        format!("{SCHEME}{}/{}", self.language, self.name)
    }
}

pub const SCHEME: &str = "snippets://";
pub const INDEX_URI: &str = "snippets://index";
pub const TEMPLATE: &str = "snippets://{language}/{name}";

/// The languages, sorted.
pub const LANGUAGES: [&str; 3] = ["python", "rust", "shell"];

/// The library, sorted by language and then by name.
pub const SNIPPETS: [Snippet; 6] = [
    Snippet {
        language: "python",
        name: "http_get",
        title: "GET a URL and decode its JSON body with the standard library",
        code: r#"import json
import urllib.request


def http_get(url: str, timeout: float = 10.0):
    """GET `url` and return its JSON body; raises on HTTP errors and timeouts."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.load(response)
"#,
    },
    Snippet {
        language: "python",
        name: "read_file",
        title: "Read a whole text file into a string",
        code: r#"from pathlib import Path


def read_file(path: str) -> str:
    """Return the text of the file at `path`, decoded as UTF-8."""
    return Path(path).read_text(encoding="utf-8")
"#,
    },
    Snippet {
        language: "rust",
        name: "parse_args",
        title: "Parse command-line flags and file names with std::env",
        code: r#"use std::env;
use std::process;

fn main() {
    let mut verbose = false;
    let mut files = Vec::new();
    for arg in env::args().skip(1) {
        if arg == "-v" || arg == "--verbose" {
            verbose = true;
        } else if arg.starts_with('-') {
            eprintln!("unknown option: {arg}");
            process::exit(2);
        } else {
            files.push(arg);
        }
    }
    println!("verbose: {verbose}, files: {files:?}");
}
"#,
    },
    Snippet {
        language: "rust",
        name: "read_file",
        title: "Read a whole text file into a String",
        code: r#"use std::fs;
use std::io;
use std::path::Path;

/// Returns the text of the file at `path`; fails if it is missing or not UTF-8.
fn read_file(path: &Path) -> io::Result<String> {
    fs::read_to_string(path)
}
"#,
    },
    Snippet {
        language: "shell",
        name: "find_large_files",
        title: "List the files over a size under a folder, largest first",
        code: r#"#!/usr/bin/env bash
# usage: find_large_files [DIR] [SIZE]   (defaults: . and 100M)
dir="${1:-.}"
size="${2:-100M}"
find "$dir" -type f -size +"$size" -exec du -h {} + | sort -rh
"#,
    },
    Snippet {
        language: "shell",
        name: "retry",
        title: "Run a command until it succeeds, with exponential backoff",
        code: r#"# usage: retry ATTEMPTS COMMAND [ARGS...]
retry() {
  local attempts="$1" delay=1 n=1
  shift
  until "$@"; do
    if [ "$n" -ge "$attempts" ]; then
      echo "retry: '$*' failed $n times" >&2
      return 1
    fi
    sleep "$delay"
    delay=$((delay * 2))
    n=$((n + 1))
  done
}
"#,
    },
];

pub fn find(language: &str, name: &str) -> Option<&'static Snippet> {
    SNIPPETS.iter().find(|s| s.language == language && s.name == name)
}

/// The snippet at a `snippets://<language>/<name>` URI (the SDK matches the template).
#[cfg(test)]
pub fn by_uri(uri: &str) -> Option<&'static Snippet> {
    let (language, name) = uri.strip_prefix(SCHEME)?.split_once('/')?;
    find(language, name)
}

/// Snippets whose name, title or code contains `query`, ignoring case, in library
/// order; only those in `language` when it is given. An empty query matches them all.
pub fn search(query: &str, language: Option<&str>) -> Vec<&'static Snippet> {
    let query = query.to_lowercase();
    SNIPPETS
        .iter()
        .filter(|s| language.is_none_or(|language| s.language == language))
        .filter(|s| {
            [s.name, s.title, s.code]
                .iter()
                .any(|field| field.to_lowercase().contains(&query))
        })
        .collect()
}

/// The snippet names of `language` (all names when it is unknown), sorted.
pub fn names(language: Option<&str>) -> Vec<&'static str> {
    let mut names: Vec<&str> = SNIPPETS
        .iter()
        .filter(|s| language.is_none_or(|language| s.language == language))
        .map(|s| s.name)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Completions for the `explain_snippet` prompt and the snippet template: `language`
/// gives languages and `name` every snippet name (deduplicated), each starting with
/// `value` (ignoring case), sorted. Any other argument gets nothing.
pub fn complete(argument: &str, value: &str) -> Vec<String> {
    let candidates = match argument {
        "language" => LANGUAGES.to_vec(),
        "name" => names(None),
        _ => return Vec::new(),
    };
    let prefix = value.to_lowercase();
    candidates
        .into_iter()
        .filter(|candidate| candidate.to_lowercase().starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

/// The text of `snippets://index`: every snippet, grouped by language.
pub fn index_markdown() -> String {
    let mut out = String::from("# Snippets\n\n");
    out.push_str(&format!(
        "{} snippets in {} languages. Read one at its URI, `snippets://<language>/<name>`.\n",
        SNIPPETS.len(),
        LANGUAGES.len()
    ));
    for language in LANGUAGES {
        out.push_str(&format!("\n## {language}\n\n"));
        for s in SNIPPETS.iter().filter(|s| s.language == language) {
            out.push_str(&format!("- `{}` — {} (`{}`)\n", s.name, s.title, s.uri()));
        }
    }
    out
}

/// Why a URI names no snippet, and what to read instead.
pub fn not_found_message(uri: &str) -> String {
    let hint = format!(
        "snippet URIs look like `snippets://<language>/<name>`, with a language among {}; \
         read {INDEX_URI} for the list",
        LANGUAGES.join(", ")
    );
    match uri.strip_prefix(SCHEME).and_then(|rest| rest.split_once('/')) {
        Some((language, name)) if LANGUAGES.contains(&language) => format!(
            "there is no {language} snippet named {name:?}; the {language} snippets are {}",
            names(Some(language)).join(", ")
        ),
        Some((language, _)) => format!("there are no snippets in the language {language:?}; {hint}"),
        None => format!("no snippet at {uri:?}: {hint}"),
    }
}

/// The snippet for the `explain_snippet` prompt, or why the arguments name none.
pub fn lookup(language: &str, name: &str) -> Result<&'static Snippet, String> {
    if !LANGUAGES.contains(&language) {
        return Err(format!(
            "`language` must be one of {}; got {language:?}",
            LANGUAGES.join(", ")
        ));
    }
    find(language, name).ok_or_else(|| {
        format!(
            "there is no {language} snippet named {name:?}; `name` must be one of {}",
            names(Some(language)).join(", ")
        )
    })
}

/// The instruction that follows the snippet in `explain_snippet`.
pub fn explain_text(language: &str) -> String {
    format!("Explain what this {language} snippet does, line by line, and point out anything that could fail.")
}

/// The single message of `review_code`.
pub fn review_text(code: &str, language: Option<&str>) -> String {
    let subject = language.filter(|l| !l.is_empty()).unwrap_or("code");
    format!("Review this {subject} for bugs, unclear names and missing error handling:\n\n{code}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uris(found: Vec<&Snippet>) -> Vec<String> {
        found.iter().map(|s| s.uri()).collect()
    }

    #[test]
    fn library_is_sorted_and_well_formed() {
        let keys: Vec<(&str, &str)> = SNIPPETS.iter().map(|s| (s.language, s.name)).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            keys, sorted,
            "SNIPPETS must be sorted by language, then name, without repeats"
        );
        for language in LANGUAGES {
            assert_eq!(names(Some(language)).len(), 2, "{language}");
        }
        for s in &SNIPPETS {
            assert!(!s.title.contains('\n') && !s.title.is_empty(), "{}", s.name);
            assert!(s.code.ends_with('\n') && !s.code.trim().is_empty(), "{}", s.name);
            assert_eq!(by_uri(&s.uri()), Some(s));
        }
    }

    #[test]
    fn searching() {
        assert_eq!(
            uris(search("read", None)),
            ["snippets://python/read_file", "snippets://rust/read_file"]
        );
        assert_eq!(uris(search("READ", Some("rust"))), ["snippets://rust/read_file"]);
        assert_eq!(uris(search("backoff", None)), ["snippets://shell/retry"]);
        // The code is searched too: only the Python GET snippet mentions urllib.
        assert_eq!(uris(search("urllib", None)), ["snippets://python/http_get"]);
        assert_eq!(search("", None).len(), SNIPPETS.len());
        assert!(search("cobol", None).is_empty());
        assert!(search("read", Some("shell")).is_empty());
    }

    #[test]
    fn uris_resolve() {
        assert_eq!(by_uri("snippets://python/read_file").unwrap().language, "python");
        assert!(by_uri("snippets://cobol/x").is_none());
        assert!(by_uri("snippets://python/").is_none());
        assert!(by_uri("snippets://index").is_none());
        assert!(by_uri("file:///etc/passwd").is_none());
    }

    #[test]
    fn completing() {
        assert_eq!(complete("language", "r"), ["rust"]);
        assert_eq!(complete("language", "S"), ["shell"]);
        assert_eq!(complete("language", ""), ["python", "rust", "shell"]);
        assert_eq!(complete("name", "re"), ["read_file", "retry"]);
        assert_eq!(
            complete("name", ""),
            ["find_large_files", "http_get", "parse_args", "read_file", "retry"]
        );
        assert_eq!(complete("name", "RE"), ["read_file", "retry"]);
        assert!(complete("name", "x").is_empty());
        assert!(complete("code", "").is_empty());
    }

    #[test]
    fn index() {
        let index = index_markdown();
        assert!(index.starts_with("# Snippets\n\n6 snippets in 3 languages."), "{index}");
        for s in &SNIPPETS {
            let line = format!("- `{}` — {} (`{}`)\n", s.name, s.title, s.uri());
            assert!(index.contains(&line), "{line} missing from\n{index}");
        }
        let python = index.find("## python").unwrap();
        let rust = index.find("## rust").unwrap();
        let shell = index.find("## shell").unwrap();
        assert!(python < rust && rust < shell);
        assert!(index.find("snippets://python/http_get").unwrap() < rust);
    }

    #[test]
    fn messages() {
        let unknown = not_found_message("snippets://cobol/x");
        assert!(
            unknown.contains("\"cobol\"") && unknown.contains("python, rust, shell"),
            "{unknown}"
        );
        let missing = not_found_message("snippets://rust/nope");
        assert!(missing.contains("parse_args, read_file"), "{missing}");
        assert!(not_found_message("other://x").contains(INDEX_URI));

        assert!(lookup("python", "http_get").is_ok());
        assert!(lookup("cobol", "x").unwrap_err().contains("python, rust, shell"));
        assert!(lookup("shell", "nope").unwrap_err().contains("find_large_files, retry"));
    }

    #[test]
    fn prompt_texts() {
        assert_eq!(
            explain_text("python"),
            "Explain what this python snippet does, line by line, and point out anything that could fail."
        );
        assert_eq!(
            review_text("x = 1", Some("python")),
            "Review this python for bugs, unclear names and missing error handling:\n\nx = 1"
        );
        assert_eq!(
            review_text("x = 1", None),
            "Review this code for bugs, unclear names and missing error handling:\n\nx = 1"
        );
        assert_eq!(review_text("x", Some("")), review_text("x", None));
    }

    /// The SDK interop script (`tests/interop/sdk_clients.sh`) reads its expected values
    /// from a fixture; keep it in step with the library.
    #[test]
    fn interop_fixture_matches() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/interop/sdk_expected.json")).unwrap();
        let strings = |value: &serde_json::Value| -> Vec<String> {
            value
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        };

        let found = &fixture["find_snippets"];
        let query = found["arguments"]["query"].as_str().unwrap();
        assert_eq!(uris(search(query, None)), strings(&found["uris"]));

        let read = &fixture["read"];
        let snippet = by_uri(read["uri"].as_str().unwrap()).unwrap();
        assert_eq!(read["text"], snippet.code);
        assert!(by_uri(fixture["read_unknown"]["uri"].as_str().unwrap()).is_none());

        let explain = &fixture["explain"];
        let snippet = find(
            explain["arguments"]["language"].as_str().unwrap(),
            explain["arguments"]["name"].as_str().unwrap(),
        )
        .unwrap();
        let messages = &explain["messages"];
        assert_eq!(messages[0]["content"]["resource"]["uri"], snippet.uri().as_str());
        assert_eq!(messages[0]["content"]["resource"]["text"], snippet.code);
        assert_eq!(messages[1]["content"]["text"], explain_text(snippet.language).as_str());

        for key in ["complete_prompt", "complete_template"] {
            let case = &fixture[key];
            let argument = &case["argument"];
            assert_eq!(
                complete(argument["name"].as_str().unwrap(), argument["value"].as_str().unwrap()),
                strings(&case["values"]),
                "{key}"
            );
        }
        assert_eq!(fixture["template"]["uriTemplate"], TEMPLATE);
        assert_eq!(fixture["index"]["uri"], INDEX_URI);
    }
}

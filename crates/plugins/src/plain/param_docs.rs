//! Parameter descriptions from a function's doc comment. WIT has no doc
//! comments on parameters, so authors describe them in the function's, in
//! one of a few common conventions, which are read here:
//!
//! - under a heading `# Arguments` or `# Parameters` (any level, any case)
//!   or a line `Arguments:` or `Parameters:`, list items
//!   ``* `name` - text``, ``- `name`: text``, `- name: text`,
//!   `* name - text` (backticks optional; `-`, `:` or `–` after the name);
//!   a colon heading's list ends at a line of text no more indented than
//!   the heading, a `#` heading's at the next `#` heading;
//! - anywhere, `@param name text`, `@param {type} name text` (the JSDoc
//!   forms `[name]`, `[name=default]` and `name - text` too).
//!
//! A line indented more than its item, and not an item or a heading itself,
//! continues it (joined with a space); a blank line ends it. An item whose
//! name is not one of the function's parameters (exactly, as WIT spells it)
//! is ignored with its continuation lines, and so is a parameter's second
//! item: the first wins. Nothing inside a fenced code block counts.
//!
//! The doc comment is read once, line by line, each line a constant number
//! of times: linear in its length. The descriptions are written as `Text`
//! under the component's load budget, like everything else derived from it.

use std::collections::HashMap;

use super::budget::{LoadBudget, OverBudget, Text};

/// What `Text` calls a parameter's description in a refusal.
const WHAT: &str = "parameter description";

/// The descriptions `doc` (a function's doc comment) gives the parameters
/// `params`, in their order; `None` for a parameter it does not describe.
pub fn describe(doc: &str, params: &[&str], budget: &LoadBudget) -> Result<Vec<Option<String>>, OverBudget> {
    // WIT parameter names are unique; were they not, the first would win.
    let index: HashMap<&str, usize> = params.iter().enumerate().rev().map(|(n, p)| (*p, n)).collect();
    let mut found: Vec<Option<String>> = vec![None; params.len()];
    let mut section: Option<Section> = None;
    let mut item: Option<Item> = None;
    let mut fenced = false;
    for line in doc.lines() {
        let text = line.trim();
        let indent = line.len() - line.trim_start().len();
        if text.starts_with("```") || text.starts_with("~~~") {
            finish(item.take(), &mut found);
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if text.is_empty() {
            finish(item.take(), &mut found);
            continue;
        }
        let heading = heading(text);
        let entry = param_tag(text).or_else(|| section.and_then(|_| list_item(text)));
        if let Some(current) = &mut item
            && indent > current.indent
            && heading.is_none()
            && entry.is_none()
        {
            current.extend(text)?;
            continue;
        }
        finish(item.take(), &mut found);
        if let Some(heading) = heading {
            section = heading.map(|colon| Section { indent, colon });
        } else if let Some((name, text)) = entry {
            let target = index.get(name).copied().filter(|&n| found[n].is_none());
            item = Some(Item::start(budget, indent, target, text)?);
        } else if section.is_some_and(|s| s.colon && indent <= s.indent) {
            section = None;
        }
    }
    finish(item, &mut found);
    Ok(found)
}

/// An `Arguments` heading's list: where the heading is, and whether it is
/// `Arguments:` (else `# Arguments`).
#[derive(Clone, Copy)]
struct Section {
    indent: usize,
    colon: bool,
}

/// The item being read: its indentation, and the parameter it describes
/// with the text so far (`None` for an item that describes none).
struct Item<'b> {
    indent: usize,
    target: Option<(usize, Text<'b>)>,
}

impl<'b> Item<'b> {
    fn start(budget: &'b LoadBudget, indent: usize, target: Option<usize>, text: &str) -> Result<Self, OverBudget> {
        let mut item = Self {
            indent,
            target: target.map(|n| (n, Text::new(budget, WHAT))),
        };
        item.extend(text)?;
        Ok(item)
    }

    fn extend(&mut self, text: &str) -> Result<(), OverBudget> {
        let Some((_, out)) = &mut self.target else {
            return Ok(());
        };
        if text.is_empty() {
            return Ok(());
        }
        if !out.is_empty() {
            out.push(" ")?;
        }
        out.push(text)
    }
}

/// Keeps what `item` says, if anything: an item without text claims nothing.
fn finish(item: Option<Item>, found: &mut [Option<String>]) {
    if let Some(Item {
        target: Some((n, text)),
        ..
    }) = item
        && !text.is_empty()
    {
        found[n] = Some(text.finish());
    }
}

/// A heading line: `Some(Some(colon))` for an `Arguments` or `Parameters`
/// heading (`colon` for `Arguments:`), `Some(None)` for any other `#` heading.
fn heading(line: &str) -> Option<Option<bool>> {
    let title = line.trim_start_matches('#');
    if title.len() < line.len() {
        if !(title.is_empty() || title.starts_with(char::is_whitespace)) {
            return None;
        }
        let title = title.trim_end_matches('#').trim().trim_end_matches(':').trim_end();
        return Some(is_arguments(title).then_some(false));
    }
    let title = line.strip_suffix(':')?.trim_end();
    is_arguments(title).then_some(Some(true))
}

fn is_arguments(title: &str) -> bool {
    ["arguments", "parameters"]
        .iter()
        .any(|w| title.eq_ignore_ascii_case(w))
}

/// `@param [{type}] name [separator] text`: the name and the text. A tag
/// whose name cannot be read is an item describing no parameter (`""`).
fn param_tag(line: &str) -> Option<(&str, &str)> {
    const TAG: &str = "@param";
    if !line.get(..TAG.len())?.eq_ignore_ascii_case(TAG) {
        return None;
    }
    let rest = &line[TAG.len()..];
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None; // `@params`, `@parameter`
    }
    let mut rest = rest.trim_start();
    if rest.starts_with('{') {
        let Some(after) = after_braces(rest) else {
            return Some(("", ""));
        };
        rest = after.trim_start();
    }
    let (name, rest) = if let Some(optional) = rest.strip_prefix('[') {
        let Some((inside, rest)) = optional.split_once(']') else {
            return Some(("", ""));
        };
        (inside.split('=').next().unwrap_or(inside).trim(), rest)
    } else {
        name(rest).unwrap_or(("", ""))
    };
    let rest = rest.trim_start();
    Some((name, separator(rest).unwrap_or(rest).trim()))
}

/// A list item under an `Arguments` heading, ``* `name` - text`` and the
/// like: the name and the text. A list line without a separator after its
/// first word is not an item (a continuation can be a nested list).
fn list_item(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix(['*', '-', '+'])?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let (name, rest) = name(rest.trim_start())?;
    Some((name, separator(rest.trim_start())?.trim()))
}

/// A parameter name at the start of `text`, in backticks or not: the name
/// and what follows it.
fn name(text: &str) -> Option<(&str, &str)> {
    if let Some(quoted) = text.strip_prefix('`') {
        let (name, rest) = quoted.split_once('`')?;
        return Some((name.trim(), rest));
    }
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '%'))
        .unwrap_or(text.len());
    let name = &text[..end];
    // `%` escapes a WIT keyword (`%type`); the parameter is `type`.
    let name = name.strip_prefix('%').unwrap_or(name);
    (!name.is_empty()).then_some((name, &text[end..]))
}

/// The text after a separator `:`, `-`, `–` or `—` at the start of `text`
/// (a dash followed by a space or nothing, so `-1` is not one).
fn separator(text: &str) -> Option<&str> {
    if let Some(rest) = text.strip_prefix(':') {
        return Some(rest);
    }
    let rest = text.strip_prefix(['-', '–', '—'])?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then_some(rest)
}

/// What follows the `{…}` `text` starts with (braces nest), if they close.
fn after_braces(text: &str) -> Option<&str> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[at + 1..]);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(doc: &str, params: &[&str]) -> Vec<Option<String>> {
        describe(doc, params, &LoadBudget::for_component(0)).unwrap()
    }

    fn some(texts: &[&str]) -> Vec<Option<String>> {
        texts.iter().map(|t| (!t.is_empty()).then(|| t.to_string())).collect()
    }

    #[test]
    fn rustdoc_lists_under_an_arguments_heading() {
        let doc = "Divides one number by another.\n\
                   \n\
                   # Arguments\n\
                   \n\
                   * `dividend` - The number to divide.\n\
                   * `divisor` - What to divide it by.\n\
                   \n\
                   # Returns\n\
                   \n\
                   * `dividend` - not under an arguments heading any more.\n";
        assert_eq!(
            described(doc, &["dividend", "divisor"]),
            some(&["The number to divide.", "What to divide it by."])
        );
    }

    #[test]
    fn each_heading_and_list_form() {
        let params = ["a", "b", "c", "d", "e", "f"];
        let items = "- `a`: one\n- b: two\n* c - three\n* `d` – four\n+ `e` — five\n-   f:six";
        let all = some(&["one", "two", "three", "four", "five", "six"]);
        for heading in [
            "# Arguments",
            "## Arguments",
            "### parameters ###",
            "# PARAMETERS:",
            "Arguments:",
            "parameters:",
        ] {
            let doc = format!("Does things.\n\n{heading}\n{items}\n");
            assert_eq!(described(&doc, &params), all, "{heading}");
        }
        // Indented under a colon heading, as a docstring writes them.
        assert_eq!(
            described("Parameters:\n  - a: one\n  - `b` - two", &params[..2]),
            some(&["one", "two"])
        );
        // Without a heading, a list is only a list.
        assert_eq!(described(items, &params), vec![None; 6]);
        // Nor is an argument list under another heading.
        assert_eq!(described(&format!("# Examples\n{items}"), &params), vec![None; 6]);
        assert_eq!(described(&format!("Returns:\n{items}"), &params), vec![None; 6]);
    }

    #[test]
    fn a_colon_heading_ends_at_text_and_a_hash_heading_at_the_next_heading() {
        let doc = "Arguments:\n- a: one\n\nIt wraps around.\n- b: not an argument";
        assert_eq!(described(doc, &["a", "b"]), some(&["one", ""]));
        let doc = "# Arguments\n- a: one\n\nSome prose.\n- b: two\n# Errors\n- c: three";
        assert_eq!(described(doc, &["a", "b", "c"]), some(&["one", "two", ""]));
    }

    #[test]
    fn param_tags_anywhere() {
        let doc = "Repeats a text.\n\
                   @param text the text to repeat\n\
                   @param {number} times how many times\n\
                   @param {{sep: string}} options - nested braces\n\
                   @PARAM [label=\"x\"] what to call it\n\
                   @param `quoted`: a quoted name\n\
                   @param %type a keyword\n\
                   @param bare\n\
                   @param negative -1 means none\n\
                   @params nope not a tag\n";
        let params = [
            "text", "times", "options", "label", "quoted", "type", "bare", "negative", "nope",
        ];
        assert_eq!(
            described(doc, &params),
            some(&[
                "the text to repeat",
                "how many times",
                "nested braces",
                "what to call it",
                "a quoted name",
                "a keyword",
                "",
                "-1 means none",
                "",
            ])
        );
    }

    #[test]
    fn names_must_be_parameters_exactly() {
        let doc = "@param first_number snake case\n\
                   @param First-Number other case\n\
                   @param first-number the first\n\
                   \x20 continued\n\
                   @param other not a parameter\n\
                   \x20 nor its continuation\n\
                   @param {unclosed second the second?\n\
                   \x20 nor this\n";
        assert_eq!(
            described(doc, &["first-number", "second"]),
            some(&["the first continued", ""])
        );
    }

    #[test]
    fn the_first_description_of_a_parameter_wins() {
        let doc = "@param a first\n  more\n@param a second\n  still second\n\n# Arguments\n- a: third";
        assert_eq!(described(doc, &["a"]), some(&["first more"]));
        // An item with nothing to say claims nothing.
        assert_eq!(described("@param a\n@param a says", &["a"]), some(&["says"]));
        assert_eq!(described("@param a\n    says", &["a"]), some(&["says"]));
    }

    #[test]
    fn continuation_lines_are_indented_more_than_their_item() {
        let doc = "# Arguments\n\
                   \n\
                   * `a` - The first\n\
                   \x20 number, which is\n\
                   \x20\x20\x20\x20 never zero:\n\
                   \x20 - nested lists are text too\n\
                   * `b` - The second.\n\
                   Not indented: not a continuation.\n\
                   * `c` - The third.\n\
                   \n\
                   \x20 After a blank line: not one either.\n\
                   \x20\x20 @param d a new item, not a continuation\n";
        assert_eq!(
            described(doc, &["a", "b", "c", "d"]),
            some(&[
                "The first number, which is never zero: - nested lists are text too",
                "The second.",
                "The third.",
                "a new item, not a continuation",
            ])
        );
        // An item whose text starts on the next line.
        assert_eq!(described("Arguments:\n- a:\n    the a", &["a"]), some(&["the a"]));
        // A heading is not a continuation.
        assert_eq!(described("@param a one\n  # Errors\n  more", &["a"]), some(&["one"]));
    }

    #[test]
    fn code_blocks_are_not_read() {
        let doc = "Example:\n```js\n/** @param a not this */\n@param a nor this\n```\n@param a this";
        assert_eq!(described(doc, &["a"]), some(&["this"]));
    }

    #[test]
    fn descriptions_are_written_under_the_budget() {
        let budget = LoadBudget::for_component(0);
        let found = describe("@param a one\n  two", &["a"], &budget).unwrap();
        assert_eq!(found, some(&["one two"]));
        assert_eq!(budget.bytes(), "one two".len());
        // One parameter's description is one text: 256 KiB at most.
        let long = format!("@param a {}", "x".repeat(300 << 10));
        assert_eq!(describe(&long, &["a"], &budget), Err(OverBudget::TextBytes(WHAT)));
    }

    #[test]
    fn a_mebibyte_of_tags_is_read_quickly_in_bounded_memory() {
        let mut params: Vec<String> = (0..1000).map(|n| format!("p{n}")).collect();
        params.push("a".into());
        let params: Vec<&str> = params.iter().map(String::as_str).collect();
        let docs = [
            // The same parameter again and again: the first wins, the rest cost nothing.
            "@param a x\n".repeat(1 << 17),
            // Names that are not parameters, each with a continuation.
            "@param {T} nobody text\n  more\n".repeat(1 << 15),
            // Every parameter once, then the list again under a heading.
            format!(
                "{}# Arguments\n{}",
                "@param p1 y\n".repeat(1 << 16),
                "* `p2` - z\n".repeat(1 << 16)
            ),
            // One line of unclosed braces; one of nothing but dashes and colons.
            format!("@param {}", "{".repeat(1 << 20)),
            format!("Arguments:\n- {}", "- :".repeat(1 << 18)),
            // A million blank or indented lines.
            format!("@param p0 start\n{}", "\n \n".repeat(1 << 18)),
        ];
        for doc in &docs {
            assert!(doc.len() >= 1 << 19, "{}", doc.len());
            let budget = LoadBudget::for_component(0);
            let started = std::time::Instant::now();
            let found = describe(doc, &params, &budget).unwrap();
            let took = started.elapsed();
            assert!(took < std::time::Duration::from_secs(2), "{took:?}");
            let kept: usize = found.iter().flatten().map(String::len).sum();
            assert!(kept <= 16 && budget.bytes() == kept, "{kept} {}", budget.bytes());
        }
        // A continuation as long as the doc: refused at the text's bound, not copied past it.
        let budget = LoadBudget::for_component(0);
        let doc = format!("@param a x\n{}", "  y\n".repeat(1 << 18));
        assert_eq!(describe(&doc, &params, &budget), Err(OverBudget::TextBytes(WHAT)));
        assert!(budget.bytes() <= crate::schema_budget::MAX_SCHEMA_BYTES);
    }
}

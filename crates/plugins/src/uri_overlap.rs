//! Do two resource templates claim a common URI? Each template is a regular
//! language (`UriTemplate` matches with an anchored regex), so two overlap
//! exactly when the product of their DFAs reaches a state where both accept.
//! The search also yields a shortest URI both match, for the error message.

use std::collections::{HashMap, VecDeque};

use regex_automata::Anchored;
use regex_automata::dfa::Automaton;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;

use std::sync::Arc;

use crate::plugin::Plugin;
use crate::uri_template::UriTemplate;

/// Pairs of states explored before giving up.
const MAX_PRODUCT_STATES: usize = 200_000;

/// The answer for two templates.
#[derive(Debug, PartialEq, Eq)]
pub enum Overlap {
    Disjoint,
    /// Both match this URI.
    Common(String),
    /// Could not be decided within the bounds above: treated as overlapping.
    Undecided(String),
}

/// A pair of states of the two DFAs.
type Pair = (StateID, StateID);
/// For each pair reached, the pair and byte it was first reached from.
type Reached = HashMap<Pair, Option<(Pair, u8)>>;

/// Whether some URI matches both `a` and `b`.
pub fn overlap(a: &UriTemplate, b: &UriTemplate) -> Overlap {
    // Cheap and common: literal prefixes that differ rule out any overlap.
    let (pa, pb) = (a.literal_prefix(), b.literal_prefix());
    if !pa.starts_with(pb) && !pb.starts_with(pa) {
        return Overlap::Disjoint;
    }
    let (da, db) = match (a.dfa(), b.dfa()) {
        (Ok(da), Ok(db)) => (da, db),
        (Err(why), _) | (_, Err(why)) => return Overlap::Undecided(why),
    };
    let anchored = start::Config::new().anchored(Anchored::Yes);
    let (Ok(sa), Ok(sb)) = (da.start_state(&anchored), db.start_state(&anchored)) else {
        return Overlap::Undecided("no anchored start state".into());
    };
    // A byte in the same class as the byte before it, in both automata,
    // moves both exactly as that byte does: trying one byte per run is
    // enough. Each run is tried with its most readable byte, readable runs
    // first, so the URI in a message is legible.
    let (ca, cb) = (da.byte_classes(), db.byte_classes());
    let mut runs: Vec<Vec<u8>> = Vec::new();
    for b in 0..=255u8 {
        match runs.last_mut() {
            Some(run) if ca.get(b) == ca.get(b - 1) && cb.get(b) == cb.get(b - 1) => run.push(b),
            _ => runs.push(vec![b]),
        }
    }
    let readability = |b: u8| match b {
        b'a'..=b'z' | b'0'..=b'9' => 0,
        b'A'..=b'Z' => 1,
        0x21..=0x7e => 2,
        _ => 3,
    };
    let mut bytes: Vec<u8> = runs
        .iter()
        .map(|run| *run.iter().min_by_key(|&&b| readability(b)).expect("runs are not empty"))
        .collect();
    bytes.sort_by_key(|&b| readability(b));
    // Breadth first, so the URI found is a shortest one; each pair remembers
    // the pair and byte it was reached from.
    let mut seen: Reached = HashMap::new();
    let mut queue = VecDeque::new();
    seen.insert((sa, sb), None);
    queue.push_back((sa, sb));
    while let Some(pair @ (sa, sb)) = queue.pop_front() {
        if da.is_match_state(da.next_eoi_state(sa)) && db.is_match_state(db.next_eoi_state(sb)) {
            return Overlap::Common(witness(&seen, pair));
        }
        for &byte in &bytes {
            let next = (da.next_state(sa, byte), db.next_state(sb, byte));
            if da.is_dead_state(next.0) || db.is_dead_state(next.1) || seen.contains_key(&next) {
                continue;
            }
            if da.is_quit_state(next.0) || db.is_quit_state(next.1) {
                return Overlap::Undecided("the automaton gave up on a byte".into());
            }
            if seen.len() >= MAX_PRODUCT_STATES {
                return Overlap::Undecided(format!("more than {MAX_PRODUCT_STATES} states to explore"));
            }
            seen.insert(next, Some((pair, byte)));
            queue.push_back(next);
        }
    }
    Overlap::Disjoint
}

/// The bytes that lead from the start to `pair`, as text.
fn witness(seen: &Reached, mut pair: Pair) -> String {
    let mut bytes = Vec::new();
    while let Some(Some((previous, byte))) = seen.get(&pair) {
        bytes.push(*byte);
        pair = *previous;
    }
    bytes.reverse();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Why `plugin` would receive reads meant for one of `earlier` (plugins
/// already in the catalog), if it would: a URI it lists matching another's
/// template, a template of its matching another's URI, or two templates
/// with a URI in common. Exact duplicates are reported before this runs.
pub fn claim_clash(plugin: &Plugin, earlier: &[Arc<Plugin>]) -> Option<String> {
    let refused = |what: String, owner: &Plugin| {
        Some(format!(
            "{what} of plugin `{}`; two plugins may not claim the same resource URIs \
             (plugin `{}` is refused whole)",
            owner.name, plugin.name
        ))
    };
    for owner in earlier {
        for theirs in &owner.templates {
            let prefix = theirs.matcher.literal_prefix();
            let candidates = starting_with(&plugin.resources, prefix, |r| &r.resource.uri);
            if let Some(r) = candidates
                .iter()
                .find(|r| theirs.matcher.matches(&r.resource.uri).is_some())
            {
                let what = format!(
                    "its resource `{}` matches the resource template `{}`",
                    r.resource.uri,
                    theirs.matcher.as_str()
                );
                return refused(what, owner);
            }
        }
        for mine in &plugin.templates {
            let prefix = mine.matcher.literal_prefix();
            let candidates = starting_with(&owner.resources, prefix, |r| &r.resource.uri);
            if let Some(r) = candidates
                .iter()
                .find(|r| mine.matcher.matches(&r.resource.uri).is_some())
            {
                let what = format!(
                    "its resource template `{}` matches the resource `{}`",
                    mine.matcher.as_str(),
                    r.resource.uri
                );
                return refused(what, owner);
            }
            for theirs in &owner.templates {
                let what = match overlap(&mine.matcher, &theirs.matcher) {
                    Overlap::Disjoint => continue,
                    Overlap::Common(uri) => format!(
                        "its resource template `{}` and the resource template `{}` both match `{uri}`, \
                         which is",
                        mine.matcher.as_str(),
                        theirs.matcher.as_str()
                    ),
                    Overlap::Undecided(why) => format!(
                        "its resource template `{}` cannot be shown to claim no URI of the resource template `{}` \
                         ({why}), which is",
                        mine.matcher.as_str(),
                        theirs.matcher.as_str()
                    ),
                };
                return refused(what, owner);
            }
        }
    }
    None
}

/// The items of `sorted` (by `key`) whose key starts with `prefix`.
fn starting_with<'a, T>(sorted: &'a [T], prefix: &str, key: impl Fn(&T) -> &String) -> &'a [T] {
    let start = sorted.partition_point(|item| key(item).as_str() < prefix);
    let len = sorted[start..].partition_point(|item| key(item).starts_with(prefix));
    &sorted[start..start + len]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(a: &str, b: &str) -> Overlap {
        overlap(&UriTemplate::parse(a).unwrap(), &UriTemplate::parse(b).unwrap())
    }

    #[test]
    fn overlapping_templates_are_found_with_a_uri_both_match() {
        for (a, b) in [
            ("mem://items/{id}", "mem://{+path}"),
            ("mem://items/{id}", "mem://items/{id}"),
            ("mem://items/{id}", "mem://{kind}/{id}"),
            ("file:///{+path}", "file:///etc/{name}"),
            ("docs://x{/a,b}", "docs://x/{a}/{b}"),
            ("search://items{?q}", "search://{what}"),
            ("v://a{.ext}", "v://{name}"),
            ("x://{a}z", "x://{b}"),
        ] {
            let Overlap::Common(uri) = check(a, b) else {
                panic!("{a} and {b} should overlap")
            };
            let (ta, tb) = (UriTemplate::parse(a).unwrap(), UriTemplate::parse(b).unwrap());
            assert!(
                ta.matches(&uri).is_some() && tb.matches(&uri).is_some(),
                "{a} {b}: {uri:?}"
            );
            assert!(!check(b, a).is_disjoint());
        }
    }

    #[test]
    fn disjoint_templates_are_allowed() {
        for (a, b) in [
            ("mem://items/{id}", "mem://readme"),
            ("mem://items/{id}", "mem://items/{id}/raw"),
            ("mem://items/{id}", "notes://{name}"),
            ("test://template/{id}/data", "test://static-text"),
            ("snippets://{language}/{name}", "snippets://index"),
            ("a://{x}.json", "a://{x}.toml"),
        ] {
            assert_eq!(check(a, b), Overlap::Disjoint, "{a} {b}");
            assert_eq!(check(b, a), Overlap::Disjoint, "{b} {a}");
        }
    }

    impl Overlap {
        fn is_disjoint(&self) -> bool {
            *self == Overlap::Disjoint
        }
    }
}

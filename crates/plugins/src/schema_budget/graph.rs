//! The schemas of a document as a graph: each schema once, linked by the
//! keywords (and `$ref`s) that reach it, with where it is for messages.

/// How a group of child schemas reaches one member or item.
pub(super) enum Group {
    /// At most one of them applies.
    OneOf(Vec<Edge>),
    /// All of them may apply (`patternProperties`: each is a pattern tried
    /// on every member's name).
    All(Vec<Edge>),
}

/// Where a schema is: its parent and the keyword (and member) below it, or
/// the target of a `$ref`. Kept as references into the document, so that a
/// deep schema with long keys costs no more than its text; the JSON pointer
/// is written out only for a message.
#[derive(Clone, Copy)]
pub(super) enum Place<'a> {
    Root,
    Under {
        parent: usize,
        keyword: &'a str,
        member: Option<Member<'a>>,
    },
    Ref(&'a str),
}

#[derive(Clone, Copy)]
pub(super) enum Member<'a> {
    Key(&'a str),
    Index(usize),
}

impl Place<'_> {
    /// The bytes this place adds to its parent's location, as jsonschema writes it.
    pub(super) fn segment_len(&self) -> u64 {
        let escaped = |key: &str| 1 + key.len() + key.matches(['~', '/']).count();
        match self {
            Place::Root => 0,
            // jsonschema compiles a reference's target at `…/$ref`.
            Place::Ref(_) => "/$ref".len() as u64,
            Place::Under { keyword, member, .. } => {
                let member = match member {
                    None => 0,
                    Some(Member::Key(key)) => escaped(key),
                    Some(Member::Index(n)) => 1 + n.to_string().len(),
                };
                (escaped(keyword) + member) as u64
            }
        }
    }
}

/// A child schema and the bytes its place adds to the location.
pub(super) type Edge = (usize, u64);

/// One schema (a document location reached by keywords or `$ref`).
pub(super) struct Node<'a> {
    /// Where it was first reached, for messages.
    pub(super) place: Place<'a>,
    /// Cost units of the schema's own keywords.
    pub(super) own: u64,
    pub(super) patterns: u64,
    pub(super) in_place: Vec<Edge>,
    pub(super) descend: Vec<Group>,
}

/// Every schema reachable from the root, each once, linked by keywords.
pub(super) struct Graph<'a> {
    pub(super) nodes: Vec<Node<'a>>,
}

/// The JSON pointer of node `i`, for messages.
pub(super) fn pointer_of(nodes: &[Node], i: usize) -> String {
    let mut segments = Vec::new();
    let mut at = i;
    let base = loop {
        match nodes[at].place {
            Place::Root => break String::new(),
            Place::Ref(reference) => break reference.trim_start_matches('#').to_string(),
            Place::Under {
                parent,
                keyword,
                member,
            } => {
                let member = match member {
                    None => String::new(),
                    Some(Member::Key(key)) => format!("/{}", escape(key)),
                    Some(Member::Index(n)) => format!("/{n}"),
                };
                segments.push(format!("/{}{member}", escape(keyword)));
                at = parent;
            }
        }
    };
    segments.iter().rev().fold(base, |pointer, segment| pointer + segment)
}

/// A key as a JSON pointer segment.
pub(super) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl Graph<'_> {
    pub(super) fn children(&self, i: usize, descending: bool) -> impl Iterator<Item = usize> + '_ {
        let node = &self.nodes[i];
        let descend = node.descend.iter().filter(move |_| descending).flat_map(|g| match g {
            Group::OneOf(m) | Group::All(m) => m.iter().map(|&(c, _)| c),
        });
        node.in_place.iter().map(|&(c, _)| c).chain(descend)
    }
}

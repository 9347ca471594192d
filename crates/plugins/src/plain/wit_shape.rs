//! A type of the component's WIT, followed beside the wasmtime type a schema
//! is written from (`schema.rs`), for the doc comments WIT gives record
//! fields, variant cases and named types: what a model reads as a
//! property's description. WIT has no doc comments on parameters, so a
//! parameter is described from its function's doc comment (`param_docs.rs`),
//! else by its type's doc comment.

use wit_parser::{Resolve, Type, TypeDef, TypeDefKind};

use super::schema::MAX_DEPTH;

/// One type of the component's decoded WIT. Its accessors answer `None`
/// where the WIT does not have the structure asked for (it always has, for
/// a component's own types; nothing below is described then).
#[derive(Clone, Copy)]
pub struct Shape<'r> {
    resolve: &'r Resolve,
    ty: Type,
}

impl<'r> Shape<'r> {
    pub fn new(resolve: &'r Resolve, ty: Type) -> Self {
        Self { resolve, ty }
    }

    fn at(&self, ty: Type) -> Self {
        Self::new(self.resolve, ty)
    }

    /// The definition behind aliases (`type path = string`) and the first
    /// doc comment met on the way there.
    fn resolved(&self) -> (Option<&'r TypeDef>, Option<&'r str>) {
        let mut ty = self.ty;
        let mut docs = None;
        // Aliases cannot form a cycle in a valid component; bounded anyway.
        for _ in 0..=MAX_DEPTH {
            let Type::Id(id) = ty else {
                return (None, docs);
            };
            let def = &self.resolve.types[id];
            docs = docs.or_else(|| documented(&def.docs));
            match def.kind {
                TypeDefKind::Type(next) => ty = next,
                _ => return (Some(def), docs),
            }
        }
        (None, docs)
    }

    fn kind(&self) -> Option<&'r TypeDefKind> {
        Some(&self.resolved().0?.kind)
    }

    /// The doc comment of the named type this is (or of an alias on the way).
    pub fn docs(&self) -> Option<&'r str> {
        self.resolved().1
    }

    /// A record's field `name`: its doc comment, and its type.
    pub fn field(&self, name: &str) -> Option<(Option<&'r str>, Self)> {
        let TypeDefKind::Record(record) = self.kind()? else {
            return None;
        };
        let field = record.fields.iter().find(|f| f.name == name)?;
        Some((documented(&field.docs), self.at(field.ty)))
    }

    /// A variant's case `name`: its doc comment, and its payload's type.
    pub fn case(&self, name: &str) -> Option<(Option<&'r str>, Option<Self>)> {
        let TypeDefKind::Variant(variant) = self.kind()? else {
            return None;
        };
        let case = variant.cases.iter().find(|c| c.name == name)?;
        Some((documented(&case.docs), case.ty.map(|ty| self.at(ty))))
    }

    /// The elements' type of a list (of either kind).
    pub fn element(&self) -> Option<Self> {
        match self.kind()? {
            TypeDefKind::List(ty) | TypeDefKind::FixedLengthList(ty, _) => Some(self.at(*ty)),
            _ => None,
        }
    }

    /// A map's key and value types.
    pub fn map(&self) -> Option<(Self, Self)> {
        match self.kind()? {
            TypeDefKind::Map(key, value) => Some((self.at(*key), self.at(*value))),
            _ => None,
        }
    }

    /// The type `option<T>` holds.
    pub fn some(&self) -> Option<Self> {
        match self.kind()? {
            TypeDefKind::Option(ty) => Some(self.at(*ty)),
            _ => None,
        }
    }

    /// A result's `ok` and `err` types.
    pub fn outcome(&self) -> Option<(Option<Self>, Option<Self>)> {
        match self.kind()? {
            TypeDefKind::Result(result) => Some((result.ok.map(|t| self.at(t)), result.err.map(|t| self.at(t)))),
            _ => None,
        }
    }

    /// A tuple's `n`th type.
    pub fn item(&self, n: usize) -> Option<Self> {
        match self.kind()? {
            TypeDefKind::Tuple(tuple) => Some(self.at(*tuple.types.get(n)?)),
            _ => None,
        }
    }
}

/// A doc comment's text, if it has any.
pub fn documented(docs: &wit_parser::Docs) -> Option<&str> {
    let text = docs.contents.as_deref()?.trim();
    (!text.is_empty()).then_some(text)
}

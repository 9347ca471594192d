//! A plain component with doc comments on some of its functions: at world level
//! (`greet`, documented; `add`, not) and in two exported interfaces, `math` and `text`.
//! The doc comments reach the component in the WIT package wit-bindgen embeds.

wit_bindgen::generate!({
    path: "wit",
    world: "plain-docs",
});

use exports::example::plain_docs::{math, text};

struct PlainDocs;

impl Guest for PlainDocs {
    fn greet(name: String) -> String {
        format!("Hello, {name}!")
    }

    fn add(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
}

impl math::Guest for PlainDocs {
    fn multiply(a: i64, b: i64) -> i64 {
        a.wrapping_mul(b)
    }

    fn negate(a: i64) -> i64 {
        a.wrapping_neg()
    }
}

impl text::Guest for PlainDocs {
    fn reverse(text: String) -> String {
        text.chars().rev().collect()
    }

    fn length(text: String) -> u32 {
        text.chars().count() as u32
    }
}

export!(PlainDocs);

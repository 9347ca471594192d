//! A plain component with doc comments on some of its functions: at world level
//! (`greet`, documented; `add`, not; `repeat`, its parameters described with `@param`
//! tags), in two exported interfaces of its package, `math` and
//! `text` (with a record, its fields and an enum documented; `center`'s parameters under
//! a rustdoc `# Arguments` heading), and in `stats`, an interface
//! defined inline in the world. The toolchain does not put the doc comments in the
//! component (wit-bindgen 0.61, wasm-component-ld); the tests add the `package-docs` and
//! `warden:package-docs` sections to it.

wit_bindgen::generate!({
    path: "wit",
    world: "plain-docs",
});

use exports::example::plain_docs::{math, text};
use exports::stats;

struct PlainDocs;

impl Guest for PlainDocs {
    fn greet(name: String) -> String {
        format!("Hello, {name}!")
    }

    fn add(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }

    fn repeat(text: String, times: u32, separator: Option<String>) -> String {
        vec![text; times.min(1000) as usize].join(separator.as_deref().unwrap_or(""))
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

    fn center(text: String, how: text::Padding) -> String {
        let fill = how.fill.unwrap_or(' ').to_string();
        let missing = (how.width as usize).saturating_sub(text.chars().count());
        let (left, right) = match how.side {
            text::Side::Left => (missing - missing / 2, missing / 2),
            text::Side::Right => (missing / 2, missing - missing / 2),
        };
        fill.repeat(left) + &text + &fill.repeat(right)
    }

    fn pad(text: String, how: text::Padding) -> String {
        let fill = how.fill.unwrap_or(' ').to_string();
        let missing = (how.width as usize).saturating_sub(text.chars().count());
        match how.side {
            text::Side::Left => fill.repeat(missing) + &text,
            text::Side::Right => text + &fill.repeat(missing),
        }
    }
}

impl stats::Guest for PlainDocs {
    fn mean(values: Vec<f64>) -> f64 {
        values.iter().sum::<f64>() / values.len() as f64
    }

    fn count(values: Vec<f64>) -> u32 {
        values.len() as u32
    }
}

export!(PlainDocs);

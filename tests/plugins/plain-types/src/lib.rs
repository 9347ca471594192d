//! A plain component, written as any third-party author would: its own WIT package
//! (`wit/`), no `warden:plugin` contract. Its exported functions take and return every
//! WIT type, mostly echoing them, so that the host's JSON encoding can be checked with
//! exact values. The `counters` interface holds a resource, whose methods and the
//! functions taking or returning it cannot be tools; its `describe` can. It also exports
//! `wasi:cli/run`, which is not a tool.

wit_bindgen::generate!({
    path: "wit",
    world: "plain-types",
});

use exports::example::plain_types::counters::{self, CounterBorrow, GuestCounter};

struct PlainTypes;

impl Guest for PlainTypes {
    fn echo_bool(v: bool) -> bool {
        v
    }

    fn echo_u8(v: u8) -> u8 {
        v
    }

    fn echo_u16(v: u16) -> u16 {
        v
    }

    fn echo_u32(v: u32) -> u32 {
        v
    }

    fn echo_u64(v: u64) -> u64 {
        v
    }

    fn echo_s8(v: i8) -> i8 {
        v
    }

    fn echo_s16(v: i16) -> i16 {
        v
    }

    fn echo_s32(v: i32) -> i32 {
        v
    }

    fn echo_s64(v: i64) -> i64 {
        v
    }

    fn echo_f32(v: f32) -> f32 {
        v
    }

    fn echo_f64(v: f64) -> f64 {
        v
    }

    fn echo_char(c: char) -> char {
        c
    }

    fn echo_string(s: String) -> String {
        s
    }

    fn echo_bytes(b: Vec<u8>) -> Vec<u8> {
        b
    }

    fn reverse_bytes(mut b: Vec<u8>) -> Vec<u8> {
        b.reverse();
        b
    }

    fn echo_list(v: Vec<i32>) -> Vec<i32> {
        v
    }

    fn echo_points(v: Vec<Point>) -> Vec<Point> {
        v
    }

    fn echo_option(v: Option<u32>) -> Option<u32> {
        v
    }

    fn echo_nested_option(v: Option<Option<String>>) -> Option<Option<String>> {
        v
    }

    fn echo_person(p: Person) -> Person {
        p
    }

    fn echo_tuple(t: (String, u32, bool)) -> (String, u32, bool) {
        t
    }

    fn echo_shape(s: Shape) -> Shape {
        s
    }

    fn shape_for(n: u32) -> Shape {
        match n {
            0 => Shape::Circle(1.5),
            1 => Shape::Rectangle(Point { x: 3, y: -4 }),
            2 => Shape::CircleUnit,
            _ => Shape::Nothing,
        }
    }

    fn echo_color(c: Color) -> Color {
        c
    }

    fn echo_permissions(p: Permissions) -> Permissions {
        p
    }

    fn echo_results(v: Vec<Result<u32, String>>) -> Vec<Result<u32, String>> {
        v
    }

    fn signs(v: Vec<i32>) -> Vec<Result<(), ()>> {
        v.into_iter().map(|n| if n < 0 { Err(()) } else { Ok(()) }).collect()
    }

    fn checked_div(a: i32, b: i32) -> Result<i32, String> {
        a.checked_div(b).ok_or_else(|| format!("cannot divide {a} by {b}"))
    }

    fn check_age(age: i32) -> Result<u8, AgeError> {
        match u8::try_from(age) {
            Ok(age) if age <= 150 => Ok(age),
            Ok(_) => Err(AgeError {
                age,
                reason: "too old".to_string(),
            }),
            Err(_) => Err(AgeError {
                age,
                reason: "negative".to_string(),
            }),
        }
    }

    fn require_even(n: u32) -> Result<(), String> {
        if n.is_multiple_of(2) {
            Ok(())
        } else {
            Err(format!("{n} is odd"))
        }
    }

    fn greet(name: String, greeting: Option<String>) -> String {
        format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
    }

    fn answer() -> u32 {
        42
    }

    fn discard(_v: String) {}

    fn a_function_whose_name_is_much_too_long_to_be_served_as_an_mcp_tool_name() -> String {
        "long".to_string()
    }
}

struct Counter {
    value: std::cell::Cell<u32>,
}

impl GuestCounter for Counter {
    fn new(start: u32) -> Self {
        Counter {
            value: std::cell::Cell::new(start),
        }
    }

    fn get(&self) -> u32 {
        self.value.get()
    }

    fn increment(c: CounterBorrow<'_>) -> u32 {
        let counter: &Counter = c.get();
        counter.value.set(counter.value.get() + 1);
        counter.value.get()
    }
}

impl counters::Guest for PlainTypes {
    type Counter = Counter;

    fn make_counter(start: u32) -> counters::Counter {
        counters::Counter::new(Counter::new(start))
    }

    fn peek(c: CounterBorrow<'_>) -> u32 {
        c.get::<Counter>().get()
    }

    fn describe() -> String {
        "counters that cannot be served".to_string()
    }
}

impl exports::wasi::cli::run::Guest for PlainTypes {
    fn run() -> Result<(), ()> {
        Ok(())
    }
}

export!(PlainTypes);

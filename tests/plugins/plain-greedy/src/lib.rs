//! A plain component that tries to make the host copy more than its own
//! memory holds. Its exports are lowered by hand (no `export!`): the
//! canonical ABI lets every item of a `list<string>` point at the same
//! bytes, which no generated binding would do. `generate!` still embeds the
//! world, so the component's types are `wit/world.wit`.

wit_bindgen::generate!({ path: "wit", world: "plain-greedy" });

use std::cell::RefCell;

const MIB: usize = 1 << 20;

thread_local! {
    /// What the last answer points into, kept alive until the next call
    /// (each call runs in a fresh instance anyway).
    static KEEP: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    static KEEP_PAIRS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    static RET: RefCell<[u32; 2]> = const { RefCell::new([0; 2]) };
}

/// Keeps `bytes` alive and returns a pointer to (pointer, length) of `data`.
fn answer(data: *const u8, len: u32, keep: Vec<Vec<u8>>) -> *const u32 {
    KEEP.with(|k| *k.borrow_mut() = keep);
    RET.with(|r| {
        *r.borrow_mut() = [data as u32, len];
        r.as_ptr() as *const u32
    })
}

/// `aliased: func(count: u32) -> list<string>`: `count` items, each the
/// same megabyte of text.
#[unsafe(export_name = "aliased")]
pub extern "C" fn aliased(count: u32) -> *const u32 {
    let text = vec![b'a'; MIB];
    // (pointer, length) pairs, 4-byte aligned as the ABI requires.
    let items: Vec<u32> = (0..count).flat_map(|_| [text.as_ptr() as u32, MIB as u32]).collect();
    let pointer = items.as_ptr() as *const u8;
    KEEP_PAIRS.with(|k| *k.borrow_mut() = items);
    answer(pointer, count, vec![text])
}

/// `big-bytes: func(n: u32) -> list<u8>`.
#[unsafe(export_name = "big-bytes")]
pub extern "C" fn big_bytes(n: u32) -> *const u32 {
    let bytes = vec![7u8; n as usize];
    let pointer = bytes.as_ptr();
    answer(pointer, n, vec![bytes])
}

/// `ping: func() -> string`.
#[unsafe(export_name = "ping")]
pub extern "C" fn ping() -> *const u32 {
    let text = b"pong".to_vec();
    let pointer = text.as_ptr();
    answer(pointer, 4, vec![text])
}

/// `crash: func()`.
#[unsafe(export_name = "crash")]
pub extern "C" fn crash() {
    panic!("deliberate failure for the test");
}

/// `spin: func()`.
#[unsafe(export_name = "spin")]
pub extern "C" fn spin() {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

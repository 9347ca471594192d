//! What Warden offers a plugin through the `host` interface, in the latest
//! version's terms. Each version's bindings adapt it to their own `host`
//! (see `HostView`), so the store's data implements it once.

use std::marker::PhantomData;

use wasmtime::component::HasData;

use super::{Interaction, LogLevel};

/// The host side of the contract's `host` interface, as the newest version
/// has it; older versions offer a part of it.
pub trait Host: Send {
    fn log(&mut self, level: LogLevel, message: String);
    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>);
    fn cancelled(&mut self) -> bool;
    fn can_ask(&mut self, what: Interaction) -> bool;
}

/// A store's data seen as one version's `host`: each version implements its
/// bindgen `Host` trait for this wrapper (a blanket impl over `T` would clash
/// with bindgen's own impl for `&mut T`).
pub struct HostView<'a, T>(pub &'a mut T);

/// What `add_to_linker` projects the store's data to: a `HostView`.
pub struct AsHost<T>(PhantomData<T>);

impl<T: 'static> HasData for AsHost<T> {
    type Data<'a> = HostView<'a, T>;
}

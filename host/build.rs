//! Link-time layout of the `warden` binary, for a smaller resident set.
//!
//! The kernel maps a binary's code in 64 KiB windows around each page that
//! runs (fault-around), so code that runs at all — however little of it —
//! keeps whole windows resident. Scattered over Warden's 33 MB of `.text`,
//! the functions that starting, loading and serving run kept ≈ 18 MiB of it
//! resident. `link-order.txt` lists those functions (recorded by
//! `host/link-order.py`), and the linker places them first, side by side.
//!
//! Both flags are for LLD, the linker rustc uses on x86_64 Linux; elsewhere,
//! or with `WARDEN_PLAIN_LINK` set (a different linker), nothing is added.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=WARDEN_PLAIN_LINK");
    let target = std::env::var("TARGET").unwrap_or_default();
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    if target != "x86_64-unknown-linux-gnu" || !release || std::env::var_os("WARDEN_PLAIN_LINK").is_some() {
        return;
    }
    let order = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("link-order.txt");
    if order.is_file() {
        // Symbols the file names that this build does not have (another
        // dependency version, say) are skipped without a warning each.
        // `-Xlinker`: a comma in the path would split a `-Wl,` argument.
        println!("cargo:rustc-link-arg-bin=warden=-Xlinker");
        println!(
            "cargo:rustc-link-arg-bin=warden=--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=warden=-Wl,--no-warn-symbol-ordering");
    }
    // Relative relocations packed (DT_RELR): 1.8 MiB of `.rela.dyn` that the
    // dynamic loader reads at every start becomes a few KiB. The binary then
    // needs glibc 2.36 or later, so only when the glibc building it has it.
    if std::env::var("HOST").is_ok_and(|host| host == target) && glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bin=warden=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the glibc this build script runs on is at least `major.minor`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn glibc_at_least(major: u32, minor: u32) -> bool {
    unsafe extern "C" {
        fn gnu_get_libc_version() -> *const std::ffi::c_char;
    }
    // SAFETY: glibc returns a static NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) };
    let mut parts = version
        .to_str()
        .unwrap_or("0.0")
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    found >= (major, minor)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn glibc_at_least(_major: u32, _minor: u32) -> bool {
    false
}

//! A plain component that reads the operator's settings through
//! `wasi:config/store` (the `[config]` table of its manifest).

wit_bindgen::generate!({
    path: "wit",
    world: "plain-config",
    generate_all,
});

use wasi::config::store;

struct PlainConfig;

impl Guest for PlainConfig {
    fn get_setting(key: String) -> Option<String> {
        match store::get(&key) {
            Ok(value) => value,
            Err(error) => panic!("wasi:config/store get failed: {error:?}"),
        }
    }

    fn all_settings() -> Vec<(String, String)> {
        match store::get_all() {
            Ok(mut settings) => {
                settings.sort();
                settings
            }
            Err(error) => panic!("wasi:config/store get-all failed: {error:?}"),
        }
    }

    fn print_setting(key: String) -> Option<String> {
        let value = Self::get_setting(key.clone());
        let shown = value.as_deref().unwrap_or("(not set)");
        println!("{key} = {shown}");
        eprintln!("{key} = {shown}");
        value
    }
}

export!(PlainConfig);

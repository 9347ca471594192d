//! What a process usually has: environment, arguments, stdin, a clock, randomness.

use crate::{Args, Error, Outcome, failed};
use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

pub fn env(args: &Args) -> Outcome {
    let name = args.str("name")?;
    std::env::var(name).map_err(|_| Error::Failed(format!("{name} is not set")))
}

pub fn env_all() -> Outcome {
    let mut pairs: Vec<String> = std::env::vars_os()
        .map(|(name, value)| format!("{}={}", name.to_string_lossy(), value.to_string_lossy()))
        .collect();
    pairs.sort();
    Ok(pairs.join("\n"))
}

pub fn args() -> Outcome {
    Ok(std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" "))
}

pub fn stdin() -> Outcome {
    let mut bytes = Vec::new();
    let n = std::io::stdin().read_to_end(&mut bytes).map_err(failed)?;
    Ok(format!("read {n} bytes"))
}

pub fn clock() -> Outcome {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).map_err(failed)?;
    Ok(since.as_secs().to_string())
}

pub fn random() -> Outcome {
    let bytes = wasi::random::random::get_random_bytes(16);
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

//! Files, directories and links. Std covers files; links go through raw WASI 0.2,
//! because std's `symlink` for WASI is unstable and both need a preopened directory.

use crate::{Args, Outcome, failed};
use wasi::filesystem::preopens::get_directories;
use wasi::filesystem::types::{Descriptor, PathFlags};

pub fn read_file(args: &Args) -> Outcome {
    std::fs::read_to_string(args.str("path")?).map_err(failed)
}

pub fn write_file(args: &Args) -> Outcome {
    std::fs::write(args.str("path")?, args.str("content")?).map_err(failed)?;
    Ok("written".into())
}

pub fn list_dir(args: &Args) -> Outcome {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(args.str("path")?).map_err(failed)? {
        names.push(entry.map_err(failed)?.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names.join("\n"))
}

pub fn rename(args: &Args) -> Outcome {
    std::fs::rename(args.str("from")?, args.str("to")?).map_err(failed)?;
    Ok("renamed".into())
}

pub fn remove_dir(args: &Args) -> Outcome {
    std::fs::remove_dir_all(args.str("path")?).map_err(failed)?;
    Ok("removed".into())
}

/// The preopened directory holding `path`, and `path` relative to it. The longest
/// matching guest path wins, and it must match whole components (`/data` holds
/// `/data/x`, not `/database`).
fn preopen_for(path: &str) -> Result<(Descriptor, String), crate::Error> {
    let mut best: Option<(Descriptor, String, usize)> = None;
    for (dir, guest) in get_directories() {
        let prefix = guest.trim_end_matches('/');
        let Some(rest) = path.strip_prefix(prefix) else {
            continue;
        };
        if !rest.is_empty() && !rest.starts_with('/') {
            continue;
        }
        let rest = rest.trim_start_matches('/').to_string();
        if best.as_ref().is_none_or(|(_, _, len)| prefix.len() >= *len) {
            best = Some((dir, rest, prefix.len()));
        }
    }
    match best {
        Some((_, rest, _)) if rest.is_empty() => Err(failed(format!("{path} is a preopened directory itself"))),
        Some((dir, rest, _)) => Ok((dir, rest)),
        None => Err(failed(format!("no preopened directory contains {path}"))),
    }
}

pub fn symlink(args: &Args) -> Outcome {
    let (dir, link) = preopen_for(args.str("link")?)?;
    dir.symlink_at(args.str("target")?, &link)
        .map_err(|e| failed(format!("{e:?}")))?;
    Ok("linked".into())
}

pub fn hard_link(args: &Args) -> Outcome {
    let (from_dir, existing) = preopen_for(args.str("existing")?)?;
    let (to_dir, new) = preopen_for(args.str("new")?)?;
    from_dir
        .link_at(PathFlags::empty(), &existing, &to_dir, &new)
        .map_err(|e| failed(format!("{e:?}")))?;
    Ok("linked".into())
}

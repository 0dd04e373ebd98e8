//! The allocator's settings a program runs with.
//!
//! mimalloc 3 gives memory back to the system 1 s after it is freed (its
//! `purge_delay`). A start builds and drops most of what it holds within
//! that second (search's product facts and tantivy's writer arenas, then
//! the listing's build), so the freed memory stayed counted while the next
//! phase allocated anew: at 100,000 products the peak RSS was 1.37-1.45x
//! the settled, 1.19-1.23x with mimalloc 2's 10 ms, and idle RSS is about
//! 10 MB lower (`docs/performance.md`, "Start and memory"). Under load it
//! costs about three page faults a request (freed pages filled again).
//! mimalloc reads its options from the environment when the process loads,
//! and setting one from Rust takes `unsafe` (forbidden in this workspace),
//! so a program without the setting starts itself again, once, with it.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

/// The setting, as mimalloc reads it.
pub const PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";
/// Milliseconds: mimalloc 2's default.
pub const PURGE_DELAY_MS: &str = "10";

/// What the environment lacks of the allocator's settings: nothing when
/// it has them, whatever their value (an operator's own is kept).
pub fn missing(current: Option<OsString>) -> Option<(&'static str, &'static str)> {
    current.is_none().then_some((PURGE_DELAY, PURGE_DELAY_MS))
}

/// Replaces this process with itself started with the allocator's settings
/// when its environment lacks them (same pid, arguments and environment
/// otherwise); returns when it has them, or when that failed (said on
/// stderr: the program then runs on mimalloc's defaults).
pub fn restart_with_settings() {
    let Some((name, value)) = missing(std::env::var_os(PURGE_DELAY)) else {
        return;
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return eprintln!("could not find this program to set {name}: {e}"),
    };
    let mut args = std::env::args_os();
    let mut command = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    let e = command.args(args).env(name, value).exec();
    eprintln!("could not start again with {name}={value}: {e}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_setting_is_added_and_an_operators_own_is_kept() {
        assert_eq!(missing(None), Some((PURGE_DELAY, PURGE_DELAY_MS)));
        assert_eq!(missing(Some("1000".into())), None);
        assert_eq!(missing(Some("".into())), None);
    }
}

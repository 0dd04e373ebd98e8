//! `storefront catalog export [--size N] [--seed S]` and
//! `storefront catalog check FILE`.

use std::io::{BufReader, IsTerminal, Write};

use indicatif::{ProgressBar, ProgressStyle};

use super::load::{FeedLimits, Loader};
use crate::config::{DEFAULT_SIZE, MAX_SIZE};
use crate::generate;

const USAGE: &str =
    "usage: storefront catalog export [--size N] [--seed S]\n       storefront catalog check FILE";

/// Runs a `catalog` subcommand; its exit status.
pub fn run(args: &[String]) -> anyhow::Result<i32> {
    match args.first().map(String::as_str) {
        Some("export") => export(&args[1..]).map(|()| 0),
        Some("check") => match &args[1..] {
            [file] => check(file),
            _ => anyhow::bail!("{USAGE}"),
        },
        _ => anyhow::bail!("{USAGE}"),
    }
}

fn export(args: &[String]) -> anyhow::Result<()> {
    let (mut size, mut seed) = (DEFAULT_SIZE, 42u64);
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| anyhow::anyhow!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--size" => size = value.parse()?,
            "--seed" => seed = value.parse()?,
            _ => anyhow::bail!("unknown option {flag}\n{USAGE}"),
        }
    }
    anyhow::ensure!(
        (1..=MAX_SIZE).contains(&size),
        "--size must be between 1 and {MAX_SIZE}"
    );
    let parts = generate::generate(size, seed);
    let stdout = std::io::stdout().lock();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout);
    match super::write(
        &parts.categories,
        &parts.products,
        &parts.collections,
        &mut out,
    ) {
        // A reader that has seen enough (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        done => Ok(done?),
    }
}

/// Prints every problem of `file` as `line N: field: message`; 1 when
/// there is any, else 0 and what the feed holds.
fn check(file: &str) -> anyhow::Result<i32> {
    let opened = std::fs::File::open(file).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    let length = opened.metadata().map(|m| m.len()).unwrap_or(0);
    // Drawn only where someone watches: to a terminal's stderr.
    let bar = if std::io::stderr().is_terminal() {
        ProgressBar::new(length)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let stdout = std::io::stdout();
    let mut report = |e: super::load::FeedError| {
        bar.suspend(|| {
            let _ = writeln!(stdout.lock(), "{e}");
        });
    };
    let env = storefront_platform::env::EnvReader::from_process();
    let limits = FeedLimits {
        count_required: true,
        ..crate::config::feed_limits(&env)?
    };
    let mut loader = Loader::new(&mut report, limits);
    loader.read(BufReader::with_capacity(1 << 20, bar.wrap_read(opened)))?;
    let (errors, counts) = (loader.errors(), loader.counts());
    drop(loader);
    bar.finish_and_clear();
    if errors > 0 {
        eprintln!("{file}: {errors} problem(s)");
        return Ok(1);
    }
    println!("{file}: ok: {counts}");
    Ok(0)
}

//! `storefront catalog export [--size N] [--seed S] [--format acp --market ID]`
//! and `storefront catalog check FILE`.

use std::io::{BufReader, IsTerminal, Write};

use indicatif::{ProgressBar, ProgressStyle};

use super::load::{FeedLimits, Loader};
use crate::config::{DEFAULT_SIZE, MAX_SIZE};
use crate::generate;

const USAGE: &str = "usage: storefront catalog export [--size N] [--seed S] [--format feed|acp] [--market ID]\n       storefront catalog check FILE";

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
    let (mut format, mut market) = ("feed".to_string(), None);
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| anyhow::anyhow!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--size" => size = value.parse()?,
            "--seed" => seed = value.parse()?,
            "--format" => format.clone_from(value),
            "--market" => market = Some(value.clone()),
            _ => anyhow::bail!("unknown option {flag}\n{USAGE}"),
        }
    }
    anyhow::ensure!(
        (1..=MAX_SIZE).contains(&size),
        "--size must be between 1 and {MAX_SIZE}"
    );
    let target = match (format.as_str(), market) {
        ("feed", None) => None,
        ("acp", Some(market)) => Some(acp_target(&market)?),
        ("acp", None) => anyhow::bail!(
            "--format acp needs --market (a market id of MARKETS_FILE's, or the demo's)"
        ),
        _ => {
            anyhow::bail!("--format is feed (the default) or acp; --market goes with acp\n{USAGE}")
        }
    };
    let parts = generate::generate(size, seed);
    let stdout = std::io::stdout().lock();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout);
    let written = match target {
        Some(target) => {
            super::acp::write(&parts.categories, &parts.products, &target, &mut out).map(drop)
        }
        None => super::write(
            &parts.categories,
            &parts.products,
            &parts.collections,
            &mut out,
        ),
    };
    match written {
        // A reader that has seen enough (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        done => Ok(done?),
    }
}

/// Market `id` of `MARKETS_FILE` (the demo's without it) as a feed's
/// target; `ACP_PRODUCT_URL` the product pages.
fn acp_target(id: &str) -> anyhow::Result<super::acp::Target> {
    let env = storefront_platform::env::EnvReader::from_process();
    let file = env.raw("MARKETS_FILE");
    let (_, set) = storefront_domain::markets::load(file, false).map_err(|e| anyhow::anyhow!(e))?;
    let market = set
        .market(id)
        .map_err(|ids| anyhow::anyhow!("no market {id}: the markets are {ids}"))?;
    let (currency, locale) = market.feed_view();
    Ok(super::acp::Target {
        currency,
        locale,
        product_url: env.string("ACP_PRODUCT_URL", DEFAULT_PRODUCT_URL),
    })
}

/// Where a product's page is, when the shop does not say
/// (`ACP_PRODUCT_URL`).
pub const DEFAULT_PRODUCT_URL: &str = "http://127.0.0.1:8080/products/{productId}";

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

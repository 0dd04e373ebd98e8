//! `cargo run --release`: the whole mesh on the embedded defaults.
//! `storefront <program>`: one program of it (see [`storefront::programs`]).
//! `storefront probe <target>`: a health check (see [`storefront::probe`]).
//! `storefront openapi`: the OpenAPI document, as `openapi.json` holds it.
//! `storefront catalog export|check`: the catalog feed (`docs/feed.md`).
//! `storefront token [ACCOUNT] [AUDIENCE]`: a dev identity token (local).

/// mimalloc: a listing allocates and frees many small strings per hop, and
/// glibc's malloc spent a fifth of the CPU there (`bench/scale.sh`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    storefront::allocator::restart_with_settings();
    storefront_platform::process::block_on_tuned(run())?
}

async fn run() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let program = args.next().unwrap_or_else(|| "all".to_owned());
    if program == "openapi" {
        let env = storefront_platform::env::EnvReader::from_process();
        let config = storefront_gateway::GatewayConfig::from_env(&env)?;
        println!("{}", storefront_gateway::openapi_json(&config)?);
        return Ok(());
    }
    // `storefront catalog` alone is the catalog service.
    let rest: Vec<String> = args.collect();
    if program == "catalog" && !rest.is_empty() {
        let status = storefront_catalog::feed::cli::run(&rest)?;
        std::process::exit(status);
    }
    if program == "token" {
        return storefront::token::token(&rest).await;
    }
    let mut args = rest.into_iter();
    if program == "probe" {
        let target = args.next().unwrap_or_default();
        return storefront::probe::probe(&target).await;
    }
    storefront::programs::run(&program).await
}

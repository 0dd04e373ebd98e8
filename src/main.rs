//! `cargo run --release`: the whole mesh on the embedded defaults.
//! `storefront <program>`: one program of it (see [`storefront::programs`]).

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let program = std::env::args().nth(1).unwrap_or_else(|| "all".to_owned());
    storefront::programs::run(&program).await
}

# syntax=docker/dockerfile:1
# One image for every program: `storefront <program>` picks which one runs.
#
#   docker build -t storefront:local .
#   docker run --rm -p 8080:8080 storefront:local            # the whole mesh
#   docker run --rm storefront:local catalog                 # one program
#
# Dependencies are compiled in their own layer (cargo-chef), so a change to
# our code rebuilds only our crates. protoc is vendored: no build tools
# beyond the Rust image's C toolchain are needed.

ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-slim-bookworm AS chef
RUN cargo install cargo-chef --locked --version 0.1.71
WORKDIR /src

FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS builder
COPY --from=planner /src/recipe.json recipe.json
RUN cargo chef cook --release --locked --recipe-path recipe.json --bin storefront
COPY . .
RUN ./scripts/build-release && cp target/release/storefront /storefront

# distroless/cc: glibc and libgcc only; no shell, no package manager, and
# the nonroot user (uid 65532) by default.
FROM gcr.io/distroless/cc-debian12:nonroot AS runtime
COPY --from=builder /storefront /usr/local/bin/storefront
USER 65532:65532
ENV LISTEN_ADDR=0.0.0.0:8080
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/storefront"]
CMD ["all"]

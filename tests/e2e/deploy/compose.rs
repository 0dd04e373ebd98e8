//! docker-compose.yml and the Dockerfile, read for what they promise (no
//! Docker engine runs here): every program from the one image, wired to the
//! right ports and accounts, healthy only when it answers, with settings
//! each program's own start-up checks accept.

use serde_json::Value;
use storefront_platform::env::EnvReader;
use storefront_platform::topology::{self, Role};

use super::{config_accepts, documents, root};

fn compose() -> Value {
    let text = std::fs::read_to_string(root().join("docker-compose.yml")).unwrap();
    documents(&text).remove(0)
}

fn port_of(addr: &str) -> &str {
    addr.rsplit(':').next().unwrap()
}

#[test]
fn compose_runs_every_program_from_the_image_with_health_checks() {
    let file = compose();
    let services = file["services"].as_object().unwrap();
    let programs: Vec<&str> = topology::PROGRAMS.iter().map(|p| p.name).collect();
    for &program in &programs {
        let s = &services[program];
        assert_eq!(s["image"], "storefront:local", "{program}");
        assert_eq!(s["command"], serde_json::json!([program]));
        assert_eq!(s["read_only"], true);
        assert_eq!(s["user"], "65532:65532");
        assert_eq!(s["cap_drop"], serde_json::json!(["ALL"]));
        let env = &s["environment"];
        assert_eq!(env["APP_ENV"], "local");
        let listen = env["LISTEN_ADDR"].as_str().unwrap();
        let check: Vec<&str> = s["healthcheck"]["test"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            check[..3],
            ["CMD", "/usr/local/bin/storefront", "probe"],
            "{program}"
        );
        assert!(
            check[3].contains(&format!("127.0.0.1:{}", port_of(listen))),
            "{program} checks its own port"
        );
        for (dependency, condition) in s["depends_on"].as_object().into_iter().flatten() {
            assert!(
                services.contains_key(dependency),
                "{program} waits for {dependency}"
            );
            assert!(condition["condition"].is_string());
        }
        if program == "dev-issuer" {
            continue;
        }
        assert_eq!(env["REDIS_URL"], "redis://redis:6379/");
        assert_eq!(
            env["OTEL_EXPORTER_OTLP_ENDPOINT"],
            "http://otel-collector:4317"
        );
        assert!(
            env["IDENTITY_JWKS_URL"]
                .as_str()
                .unwrap()
                .starts_with("http://dev-issuer:8091/")
        );
        // Downstream URLs name a compose service and the port it listens on.
        for (var, value) in env.as_object().unwrap() {
            let Some(target) = var.strip_suffix("_URL").map(str::to_lowercase) else {
                continue;
            };
            if !programs.contains(&target.as_str()) {
                continue;
            }
            let target_listen = services[target.as_str()]["environment"]["LISTEN_ADDR"]
                .as_str()
                .unwrap();
            assert_eq!(
                value.as_str().unwrap(),
                format!("http://{target}:{}", port_of(target_listen)),
                "{program} {var}"
            );
        }
        let vars = env.as_object().unwrap().iter().map(|(k, v)| {
            (
                k.clone(),
                v.as_str().map_or_else(|| v.to_string(), str::to_owned),
            )
        });
        config_accepts(program, &EnvReader::from_pairs(vars)).unwrap();
    }
    // Only the gateway's public port reaches the host.
    for (name, s) in services {
        let published: Vec<&str> = s["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let expected: &[&str] = if name == "gateway" {
            &["8080:8080"]
        } else {
            &[]
        };
        assert_eq!(published, expected, "{name}");
    }
    assert!(services.contains_key("redis") && services.contains_key("otel-collector"));
    let collector = std::fs::read_to_string(root().join("deploy/otel-collector.yaml")).unwrap();
    assert!(
        documents(&collector)[0]["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
            == "0.0.0.0:4317"
    );
}

/// Every program of the topology is wired as it says: its port, the
/// callers its allow-list grants (dev accounts, the methods named), a URL
/// for exactly the programs it calls, and its own identity-token URL.
#[test]
fn compose_wires_the_topology() {
    let file = compose();
    let services = file["services"].as_object().unwrap();
    let issuer = format!("http://dev-issuer:{}", topology::DEV_ISSUER.port);
    for program in topology::PROGRAMS {
        let env = &services[program.name]["environment"];
        let name = program.name;
        assert_eq!(
            port_of(env["LISTEN_ADDR"].as_str().unwrap()),
            program.port.to_string(),
            "{name}"
        );
        if program.role == Role::Service {
            assert_eq!(
                env["ALLOWED_CALLERS"],
                program.dev_allowed_callers().as_str(),
                "{name}"
            );
        }
        let urls: Vec<&str> = env
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| {
                k.strip_suffix("_URL")
                    .is_some_and(|p| topology::program(&p.to_lowercase()).is_some())
            })
            .map(String::as_str)
            .collect();
        let calls: Vec<String> = program.downstreams().map(|d| d.url_var()).collect();
        assert_eq!(urls.len(), calls.len(), "{name}: {urls:?}");
        for callee in program.downstreams() {
            assert_eq!(
                env[&callee.url_var()],
                format!("http://{}:{}", callee.name, callee.port).as_str(),
                "{name}"
            );
        }
        for callee in program.downstreams() {
            assert!(
                services[name]["depends_on"][callee.name].is_object(),
                "{name} starts after {}",
                callee.name
            );
        }
        let token_url = env["IDENTITY_TOKEN_URL"].as_str();
        if program.calls.is_empty() {
            assert_eq!(token_url, None, "{name}");
        } else {
            assert_eq!(
                token_url,
                Some(program.dev_token_url(&issuer).as_str()),
                "{name}"
            );
        }
    }
}

/// The image builds what CI builds, runs as non-root and carries no build
/// tools.
#[test]
fn the_dockerfile_builds_what_ci_builds() {
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.contains("./scripts/test"),
        "CI runs the README's test command"
    );
    let ci = std::fs::read_to_string(root().join("scripts/test")).unwrap();
    let script = std::fs::read_to_string(root().join("scripts/build-release")).unwrap();
    assert!(script.contains("cargo build --release --locked --bin storefront"));
    assert!(
        dockerfile.contains("RUN ./scripts/build-release"),
        "the image uses the one build script"
    );
    assert!(
        ci.contains("scripts/build-release"),
        "CI runs the same build"
    );
    let runtime = dockerfile.split("\nFROM ").last().unwrap();
    assert!(
        runtime.starts_with("gcr.io/distroless/cc-debian12:nonroot"),
        "{runtime}"
    );
    assert!(runtime.contains("USER 65532:65532"));
    assert!(
        !runtime.contains("RUN "),
        "nothing is installed into the runtime image"
    );
    assert!(
        dockerfile.contains("cargo chef cook --release --locked"),
        "dependencies in their own layer"
    );
}

/// The build context keeps every workspace member: `cargo` refuses a
/// workspace whose member manifest is missing, so an ignored member breaks
/// the image build (Docker's last matching pattern wins).
#[test]
fn the_build_context_holds_every_workspace_member() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    let members: Vec<String> = manifest
        .lines()
        .find(|l| l.starts_with("members"))
        .unwrap()
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert!(members.len() >= 9, "{members:?}");
    let patterns: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let covers = |pattern: &str, path: &str| {
        let dir = pattern.trim_end_matches('/').trim_end_matches("/*");
        path == dir || path.starts_with(&format!("{dir}/"))
    };
    for member in &members {
        let last = patterns.iter().rev().find(|p| {
            let p = p.trim_start_matches('!');
            covers(p, member) || (p.ends_with("/*") && member.starts_with(p.trim_end_matches('*')))
        });
        assert!(
            last.is_none_or(|p| p.starts_with('!')),
            "workspace member {member} is ignored by .dockerignore ({last:?})"
        );
    }
}

//! The Helm chart: lint, render per environment, validate against the
//! Kubernetes API schemas, and hold production to its security properties.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;
use storefront_platform::env::EnvReader;
use storefront_platform::identity::DEV_ISSUER;
use storefront_platform::topology::{self, Role};

use super::{config_accepts, documents, root, tool};

const ENVIRONMENTS: &[&str] = &["production", "staging", "development", "local"];
/// The Kubernetes version the manifests are validated against.
const KUBERNETES: &str = "1.33";
pub(super) const RELEASE: &str = "shop";

/// The gRPC services of the topology.
fn services() -> impl Iterator<Item = &'static str> {
    topology::PROGRAMS
        .iter()
        .filter(|p| p.role == Role::Service)
        .map(|p| p.name)
}

fn deployed() -> impl Iterator<Item = &'static str> {
    services().chain(["gateway"])
}

fn chart() -> std::path::PathBuf {
    root().join("charts/storefront")
}

/// `helm template` for `environment` plus `extra` arguments.
pub(super) fn render(environment: &str, extra: &[&str]) -> Result<String, String> {
    let values = chart().join(format!("values-{environment}.yaml"));
    // Production refuses placeholders: the shop's own addresses, as an
    // operator's file sets them.
    let shop = (environment == "production").then(|| chart().join("ci/shop.yaml"));
    let out = Command::new(tool("helm"))
        .args(["template", RELEASE])
        .arg(chart())
        .arg("-f")
        .arg(values)
        .args(
            shop.iter()
                .flat_map(|s| [std::ffi::OsStr::new("-f"), s.as_os_str()]),
        )
        .args(extra)
        .output()
        .expect("helm runs");
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).expect("UTF-8"))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn manifests(environment: &str) -> Vec<Value> {
    documents(&render(environment, &[]).unwrap_or_else(|e| panic!("{environment}: {e}")))
}

pub(super) fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

pub(super) fn named<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind} {name}"))
}

pub(super) fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// `rendered` read as the cluster's API would read it (`what` names it).
pub(super) fn valid_for_kubernetes(rendered: &str, what: &str) {
    let mut validate = Command::new(tool("kubernetes-validate"))
        .args(["--strict", "--quiet", "-k", KUBERNETES, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubernetes-validate runs");
    validate
        .stdin
        .take()
        .unwrap()
        .write_all(rendered.as_bytes())
        .unwrap();
    let out = validate.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !said.contains("ERROR"),
        "{what} against Kubernetes {KUBERNETES}: {said}"
    );
}

#[test]
fn every_environment_lints_renders_and_validates() {
    for env in ENVIRONMENTS {
        let shop = (*env == "production").then(|| chart().join("ci/shop.yaml"));
        let lint = Command::new(tool("helm"))
            .args(["lint", "--strict"])
            .arg(chart())
            .arg("-f")
            .arg(chart().join(format!("values-{env}.yaml")))
            .args(
                shop.iter()
                    .flat_map(|s| [std::ffi::OsStr::new("-f"), s.as_os_str()]),
            )
            .output()
            .expect("helm runs");
        assert!(
            lint.status.success(),
            "helm lint {env}: {}",
            String::from_utf8_lossy(&lint.stdout)
        );
        let rendered = render(env, &[]).unwrap_or_else(|e| panic!("{env}: {e}"));
        valid_for_kubernetes(&rendered, env);
        assert!(documents(&rendered).len() > 40, "{env} rendered everything");
    }
}

#[test]
fn the_schema_refuses_dev_shortcuts_in_production_and_typos_everywhere() {
    for (set, why) in [
        ("devIssuer.enabled=true", "dev issuer"),
        ("customers.captcha=dev", "dev captcha"),
        ("content.configMap=", "demo content"),
        ("redis.deploy=true", "unshared in-cluster Redis"),
        ("ingress.tlsSecretName=", "plain HTTP"),
    ] {
        let refused = render("production", &["--set", set]);
        assert!(
            refused.is_err_and(|e| e.contains("schema")),
            "production with {why} must be refused"
        );
    }
    for set in [
        "programs.catalog.replica=2",
        "programs.catalog.callers={}",
        "environment=prod",
    ] {
        assert!(
            render("staging", &["--set", set]).is_err(),
            "{set} must be refused"
        );
    }
    assert!(render("development", &["--set", "devIssuer.enabled=true"]).is_ok());
}

/// What the schema cannot say is refused at render, naming what to change.
#[test]
fn renders_refuse_what_cannot_run() {
    let digest = format!("image.digest=sha256:{}", "a".repeat(64));
    for (env, sets, says) in [
        ("production", vec!["image.tag=latest"], "mutable"),
        (
            "staging",
            vec![
                "programs.cart.autoscaling.minReplicas=9",
                "programs.cart.autoscaling.maxReplicas=3",
            ],
            "minReplicas (9) is above maxReplicas (3)",
        ),
        (
            "staging",
            vec!["programs.gateway.slowStart=true"],
            "slowStart",
        ),
        ("production", vec!["image.digest=sha256:nope"], "schema"),
    ] {
        let args: Vec<&str> = sets.iter().flat_map(|s| ["--set", *s]).collect();
        let refused = render(env, &args).expect_err(&format!("{env} {sets:?} refused"));
        assert!(refused.contains(says), "{env} {sets:?}: {refused}");
    }
    let pinned = render(
        "production",
        &["--set", "image.tag=latest", "--set", &digest],
    )
    .unwrap();
    assert!(
        pinned.contains(&format!("storefront@sha256:{}", "a".repeat(64))),
        "a digest pins the image"
    );
}

/// The production manifests: what a cluster would run for real.
#[test]
fn production_is_locked_down() {
    let docs = manifests("production");
    internal_port_never_public(&docs);
    for deployment in of_kind(&docs, "Deployment") {
        pod_is_locked_down(deployment);
    }
    no_dev_settings(&docs);
    network_policies_follow_the_allow_lists(&docs);
    for program in deployed() {
        let name = format!("{RELEASE}-{program}");
        let account = named(&docs, "ServiceAccount", &name);
        assert_eq!(
            account["metadata"]["annotations"]["iam.gke.io/gcp-service-account"],
            format!("{program}@storefront-prod.iam.gserviceaccount.com")
        );
        assert_eq!(account["automountServiceAccountToken"], false);
        // Scaled by an autoscaler, or at least two replicas of its own.
        let scaled = of_kind(&docs, "HorizontalPodAutoscaler")
            .iter()
            .any(|h| h["spec"]["scaleTargetRef"]["name"] == name.as_str());
        let fixed = named(&docs, "Deployment", &name)["spec"]["replicas"].as_u64();
        assert!(
            scaled != fixed.is_some() && fixed.is_none_or(|r| r >= 2),
            "{name}: {fixed:?}"
        );
        assert_eq!(
            named(&docs, "PodDisruptionBudget", &name)["spec"]["maxUnavailable"],
            1
        );
    }
}

fn internal_port_never_public(docs: &[Value]) {
    for service in of_kind(docs, "Service") {
        let name = service["metadata"]["name"].as_str().unwrap();
        let kind = service["spec"]["type"].as_str().unwrap_or("ClusterIP");
        for port in service["spec"]["ports"].as_array().unwrap() {
            let internal = port["targetPort"] == "internal" || port["port"] == 8081;
            if internal {
                assert_eq!(
                    name,
                    format!("{RELEASE}-gateway-internal"),
                    "only this Service carries it"
                );
                assert_eq!(kind, "ClusterIP", "{name} stays inside the cluster");
            }
        }
    }
    let public = named(docs, "Service", &format!("{RELEASE}-gateway"));
    let ports: Vec<&str> = public["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["targetPort"].as_str().unwrap())
        .collect();
    assert_eq!(ports, ["http"]);
    for ingress in of_kind(docs, "Ingress") {
        assert!(
            !ingress["spec"]["tls"].as_array().unwrap().is_empty(),
            "TLS"
        );
        for rule in ingress["spec"]["rules"].as_array().unwrap() {
            for path in rule["http"]["paths"].as_array().unwrap() {
                let backend = &path["backend"]["service"];
                assert_eq!(backend["name"], format!("{RELEASE}-gateway"));
                assert_eq!(backend["port"]["name"], "http");
            }
        }
    }
}

fn pod_is_locked_down(deployment: &Value) {
    let name = deployment["metadata"]["name"].as_str().unwrap();
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true, "{name}");
    assert!(
        pod["securityContext"]["runAsUser"].as_u64().unwrap() > 0,
        "{name}"
    );
    assert!(
        pod["hostNetwork"].is_null() && pod["hostPID"].is_null(),
        "{name}"
    );
    let annotations = &deployment["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(
        annotations["prometheus.io/scrape"], "true",
        "{name} is scraped"
    );
    let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap();
    assert!(
        grace >= 25,
        "{name}: the grace period covers shutdown delay + drain"
    );
    for c in pod["containers"].as_array().unwrap() {
        let sc = &c["securityContext"];
        assert_eq!(sc["allowPrivilegeEscalation"], false, "{name}");
        assert_eq!(sc["readOnlyRootFilesystem"], true, "{name}");
        assert_eq!(strs(&sc["capabilities"]["drop"]), ["ALL"], "{name}");
        assert!(
            sc["privileged"].is_null() || sc["privileged"] == false,
            "{name}"
        );
        assert!(
            !c["readinessProbe"].is_null() && !c["livenessProbe"].is_null(),
            "{name} has probes"
        );
        assert!(
            c["resources"]["requests"].is_object()
                && c["resources"]["limits"]["memory"].is_string(),
            "{name}"
        );
        let metrics = c["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "metrics")
            .expect("metrics port");
        assert_eq!(
            annotations["prometheus.io/port"],
            metrics["containerPort"].to_string()
        );
        if name.ends_with("-gateway") {
            assert!(
                c["readinessProbe"]["httpGet"]["path"]
                    .as_str()
                    .unwrap()
                    .starts_with("/health/ready")
            );
            assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/health/live");
        } else {
            assert_eq!(
                c["readinessProbe"]["grpc"]["port"], 50051,
                "{name}: native gRPC probe"
            );
            assert_eq!(c["livenessProbe"]["grpc"]["port"], 50051, "{name}");
            // Alive while waiting on a downstream (search on the catalog):
            // the health service every program answers SERVING to.
            assert_eq!(c["livenessProbe"]["grpc"]["service"], "liveness", "{name}");
        }
        for probe in ["readinessProbe", "livenessProbe"] {
            assert!(
                c[probe]["timeoutSeconds"].as_u64().unwrap() >= 2,
                "{name} {probe}: more than the 1 s default"
            );
        }
        // A startup probe where start itself is slow (the catalog loading
        // its feed), not where a program only waits on another (search).
        let startup = &c["startupProbe"];
        if name.ends_with("-catalog") {
            assert_eq!(startup["grpc"]["service"], "liveness", "{name}");
            let budget = startup["periodSeconds"].as_u64().unwrap()
                * startup["failureThreshold"].as_u64().unwrap();
            assert!(budget >= 120, "{name}: {budget} s to load a feed");
        } else {
            assert!(startup.is_null(), "{name}: {startup}");
        }
    }
}

/// A program's environment as the pod gets it: ConfigMap plus Secrets
/// (with stand-in values: the real ones never pass through the chart).
/// What a Secret's key holds in these renders: a URL where one is read.
fn stand_in(var: &str) -> &'static str {
    match var {
        "REDIS_URL" => "rediss://redis.example:6380/",
        "REDIS_CLUSTER_NODES" => "redis-0.example:6379,redis-1.example:6379",
        _ => "stand-in",
    }
}

fn pod_env(docs: &[Value], program: &str) -> EnvReader {
    let name = format!("{RELEASE}-{program}");
    let data = named(docs, "ConfigMap", &name)["data"]
        .as_object()
        .unwrap()
        .clone();
    let mut env = EnvReader::from_pairs(
        data.iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned())),
    );
    let deployment = named(docs, "Deployment", &name);
    let pod = &deployment["spec"]["template"]["spec"];
    // A Secret's key is a file the kubelet writes (each file named for its
    // variable); the stand-in written where the pod would read it.
    let files: Vec<&str> = pod["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["name"] == "secrets")
        .flat_map(|v| v["projected"]["sources"].as_array().unwrap())
        .map(|s| {
            assert!(s["secret"]["name"].is_string(), "{name}: {s}");
            s["secret"]["items"][0]["path"].as_str().unwrap()
        })
        .collect();
    for var in pod["containers"][0]["env"].as_array().into_iter().flatten() {
        let var_name = var["name"].as_str().unwrap();
        let Some(base) = var_name.strip_suffix("_FILE") else {
            assert!(
                var["value"].is_null(),
                "{name}: {var_name} is set from a Secret, not inline"
            );
            assert!(var["valueFrom"]["secretKeyRef"]["name"].is_string());
            env.set(var_name, stand_in(var_name));
            continue;
        };
        assert!(files.contains(&base), "{name}: {base} is not mounted");
        let path = var["value"].as_str().unwrap();
        assert_eq!(path, format!("/var/run/secrets/storefront/{base}"));
        let file =
            std::env::temp_dir().join(format!("chart-{program}-{base}-{}", std::process::id()));
        std::fs::write(&file, stand_in(base)).unwrap();
        env.set(var_name, file.display().to_string());
    }
    if env.raw("REDIS_CA_FILE").is_some() {
        // The mounted ConfigMap's certificate, as the pod would read it.
        let ca = std::env::temp_dir().join(format!("chart-redis-ca-{}.crt", std::process::id()));
        std::fs::write(
            &ca,
            "-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        env.set("REDIS_CA_FILE", ca.display().to_string());
    }
    if env.raw("MARKETS_FILE").is_some() {
        // The mounted ConfigMap's markets, as the pod would read them.
        let demo = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/services/domain/src/markets/demo.json"
        );
        env.set("MARKETS_FILE", demo);
    }
    if env.raw("CONTENT_DIR").is_some() {
        env.set("CONTENT_DIR", std::env::temp_dir().display().to_string());
    }
    env
}

fn no_dev_settings(docs: &[Value]) {
    let dev: Vec<&str> = docs
        .iter()
        .filter_map(|d| d["metadata"]["name"].as_str())
        .filter(|n| n.contains("dev-issuer") || n.ends_with("-redis"))
        .collect();
    assert!(dev.is_empty(), "no dev issuer or throwaway Redis: {dev:?}");
    for config in of_kind(docs, "ConfigMap") {
        let data = config["data"].as_object().unwrap();
        assert_eq!(data["APP_ENV"], "production");
        for secret in [
            "REDIS_URL",
            "TOKEN_SIGNING_KEY",
            "TOKEN_PREVIOUS_SIGNING_KEY",
            "RECAPTCHA_SECRET",
        ] {
            assert!(!data.contains_key(secret), "{secret} only from a Secret");
        }
        assert_ne!(data["IDENTITY_ISSUER"], DEV_ISSUER);
        for (k, v) in data {
            let v = v.as_str().unwrap();
            assert!(
                !v.contains("127.0.0.1") && !v.contains("localhost") && !v.contains("dev-issuer"),
                "{k}={v}"
            );
        }
    }
    assert_eq!(
        named(docs, "ConfigMap", &format!("{RELEASE}-customers"))["data"]["CAPTCHA_VERIFIER"],
        "recaptcha"
    );
    assert!(
        named(docs, "ConfigMap", &format!("{RELEASE}-content"))["data"]["CONTENT_DIR"].is_string(),
        "no demo content"
    );
    // Each program's own start-up checks accept what the chart gives it.
    for program in deployed() {
        config_accepts(program, &pod_env(docs, program)).unwrap();
    }
}

/// Each service's NetworkPolicy admits exactly the programs its
/// ALLOWED_CALLERS names.
fn network_policies_follow_the_allow_lists(docs: &[Value]) {
    for program in services() {
        let name = format!("{RELEASE}-{program}");
        let callers: BTreeSet<String> = named(docs, "ConfigMap", &name)["data"]["ALLOWED_CALLERS"]
            .as_str()
            .unwrap()
            .split(',')
            .map(|a| a.split('@').next().unwrap().to_owned())
            .collect();
        let policy = named(docs, "NetworkPolicy", &name);
        assert_eq!(strs(&policy["spec"]["policyTypes"]), ["Ingress"]);
        let grpc_rule = policy["spec"]["ingress"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["ports"][0]["port"] == "grpc")
            .expect("a rule for the gRPC port");
        let admitted: BTreeSet<String> = grpc_rule["from"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                f["podSelector"]["matchLabels"]["app.kubernetes.io/component"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(admitted, callers, "{program}");
    }
    let gateway = named(docs, "NetworkPolicy", &format!("{RELEASE}-gateway"));
    for rule in gateway["spec"]["ingress"].as_array().unwrap() {
        let namespace =
            rule["from"][0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                .as_str()
                .unwrap();
        match rule["ports"][0]["port"].as_str().unwrap() {
            "internal" => assert_eq!(namespace, "fulfilment"),
            "http" => assert_eq!(namespace, "ingress-nginx"),
            "metrics" => assert_eq!(namespace, "monitoring"),
            other => panic!("unexpected port {other}"),
        }
    }
}

/// In every environment each pod is wired as the topology says: a
/// service's ALLOWED_CALLERS grants the accounts of exactly the programs
/// that call it (the chart's accounts, the methods the topology names),
/// and a caller gets a URL for exactly the programs it calls, and an
/// identity-token URL.
#[test]
fn every_environment_wires_the_topology() {
    for env in ENVIRONMENTS {
        let docs = manifests(env);
        let data = |program: &str| {
            named(&docs, "ConfigMap", &format!("{RELEASE}-{program}"))["data"]
                .as_object()
                .unwrap()
                .clone()
        };
        let catalog_callers = data("catalog")["ALLOWED_CALLERS"]
            .as_str()
            .unwrap()
            .to_owned();
        let domain = catalog_callers
            .split(',')
            .next()
            .and_then(|gateway| gateway.split('@').nth(1))
            .unwrap()
            .to_owned();
        for program in topology::PROGRAMS.iter().filter(|p| p.role != Role::Issuer) {
            let data = data(program.name);
            if program.role == Role::Service {
                let want = program.allowed_callers(|caller| format!("{}@{domain}", caller.name));
                assert_eq!(
                    data["ALLOWED_CALLERS"],
                    want.as_str(),
                    "{env} {}",
                    program.name
                );
            }
            let urls: BTreeSet<&str> = data
                .keys()
                .filter_map(|k| k.strip_suffix("_URL"))
                .filter(|k| topology::program(&k.to_lowercase()).is_some())
                .collect();
            let calls: BTreeSet<String> = program
                .downstreams()
                .map(|d| d.name.to_uppercase())
                .collect();
            assert_eq!(
                urls,
                calls.iter().map(String::as_str).collect(),
                "{env} {}",
                program.name
            );
            for callee in program.downstreams() {
                let url = data[&callee.url_var()].as_str().unwrap();
                assert!(
                    url.starts_with(&format!("http://{RELEASE}-{}-grpc:", callee.name)),
                    "{env} {}: {url}",
                    program.name
                );
            }
            assert_eq!(
                data.contains_key("IDENTITY_TOKEN_URL"),
                !program.calls.is_empty(),
                "{env} {}",
                program.name
            );
        }
    }
}

/// The non-production environments start too: their settings pass every
/// program's own checks.
#[test]
fn every_environment_configures_programs_they_accept() {
    for env in ENVIRONMENTS {
        let docs = manifests(env);
        for program in deployed() {
            config_accepts(program, &pod_env(&docs, program))
                .unwrap_or_else(|e| panic!("{env}: {e}"));
        }
        // Least privilege: every internal caller names the routes it may call.
        let gateway = pod_env(&docs, "gateway");
        let callers = gateway.raw("INTERNAL_CALLERS").unwrap_or_default();
        for caller in callers.split(',') {
            assert!(
                caller.contains('='),
                "{env}: {caller} may call every internal route"
            );
        }
        let dev_issuer = docs
            .iter()
            .any(|d| d["metadata"]["name"] == format!("{RELEASE}-dev-issuer"));
        assert_eq!(dev_issuer, matches!(*env, "development" | "local"), "{env}");
    }
}

/// `redis.cluster=true`: the Secret's key reaches every stateful program
/// as `REDIS_CLUSTER_NODES`, never as `REDIS_URL`, and every program
/// accepts it.
#[test]
fn a_redis_cluster_is_configured_by_its_nodes() {
    let rendered = render("production", &["--set", "redis.cluster=true"]).unwrap();
    let docs = documents(&rendered);
    let mut clustered = 0;
    for program in deployed() {
        let env = pod_env(&docs, program);
        assert!(env.raw("REDIS_URL_FILE").is_none(), "{program}");
        clustered += usize::from(env.raw("REDIS_CLUSTER_NODES_FILE").is_some());
        config_accepts(program, &env).unwrap_or_else(|e| panic!("{program}: {e}"));
    }
    assert_eq!(clustered, 5, "gateway, catalog, customers, cart, orders");
}

/// Every gRPC service is headless, so that its name resolves to every
/// ready pod for the callers' balancing; the gateway's is not.
#[test]
fn grpc_services_are_headless() {
    let docs = manifests("production");
    for program in deployed() {
        let name = match program {
            "gateway" => format!("{RELEASE}-gateway"),
            _ => format!("{RELEASE}-{program}-grpc"),
        };
        let service = named(&docs, "Service", &name);
        let headless = service["spec"]["clusterIP"] == "None";
        assert_eq!(headless, program != "gateway", "{program}");
    }
}

/// Issue 50 item 2: an upgrade from chart 0.1.0 changes no immutable field
/// of a Service. `previous-services.json` holds the Services 0.1.0 rendered
/// in its two shapes (before and after its callee Services went headless,
/// commits d31e1fc and 79d982b, production values): a Service of the same
/// name now keeps its `type` and whether it is headless. (The old callee
/// names are re-rendered as the cluster holds them, through `lookup`, which
/// `helm template` cannot show: none here.)
#[test]
fn an_upgrade_from_the_previous_chart_changes_no_immutable_field() {
    let previous: Value = serde_json::from_str(include_str!("previous-services.json")).unwrap();
    let docs = manifests("production");
    let now: Vec<&Value> = of_kind(&docs, "Service");
    for (shape, services) in previous.as_object().unwrap() {
        for old in services.as_array().unwrap() {
            let name = old["name"]
                .as_str()
                .unwrap()
                .replace("shop-", &format!("{RELEASE}-"));
            let Some(new) = now.iter().find(|s| s["metadata"]["name"] == name.as_str()) else {
                continue; // removed at upgrade: nothing to change in place
            };
            let headless = |clusterip: &Value| clusterip == "None";
            assert_eq!(
                (headless(&old["clusterIP"]), old["type"].as_str()),
                (
                    headless(&new["spec"]["clusterIP"]),
                    new["spec"]["type"].as_str()
                ),
                "{shape}: {name}"
            );
        }
    }
    for program in deployed().filter(|p| *p != "gateway") {
        let old_name = format!("{RELEASE}-{program}");
        assert!(
            now.iter()
                .all(|s| s["metadata"]["name"] != old_name.as_str()),
            "{old_name} is rendered"
        );
    }
}

/// `redis.caConfigMap`: every stateful program mounts the CA's ConfigMap
/// read-only and is told where (`REDIS_CA_FILE`), and accepts it.
#[test]
fn a_private_redis_ca_is_mounted_and_named() {
    let rendered = render("production", &["--set", "redis.caConfigMap=redis-ca"]).unwrap();
    let docs = documents(&rendered);
    let mut mounted = 0;
    for program in deployed() {
        let env = pod_env(&docs, program);
        let pod = &named(&docs, "Deployment", &format!("{RELEASE}-{program}"))["spec"]["template"]
            ["spec"];
        let volume = pod["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["configMap"]["name"] == "redis-ca");
        assert_eq!(
            volume.is_some(),
            env.raw("REDIS_CA_FILE").is_some(),
            "{program}"
        );
        if volume.is_some() {
            let mounts = pod["containers"][0]["volumeMounts"].as_array().unwrap();
            let mount = mounts.iter().find(|m| m["name"] == "redis-ca").unwrap();
            assert_eq!(mount["mountPath"], "/etc/storefront/redis-ca", "{program}");
            assert_eq!(mount["readOnly"], true);
            mounted += 1;
        }
        config_accepts(program, &env).unwrap_or_else(|e| panic!("{program}: {e}"));
    }
    assert_eq!(mounted, 5, "gateway, catalog, customers, cart, orders");
}

/// Issue 50 item 7: where the chart runs its own Redis (development,
/// local), its NetworkPolicy admits every program given `REDIS_URL`:
/// the catalog too, which otherwise exits at start where policies hold.
#[test]
fn the_in_cluster_redis_admits_every_program_that_uses_it() {
    for env in ["development", "local"] {
        let docs = manifests(env);
        let policy = named(&docs, "NetworkPolicy", &format!("{RELEASE}-redis"));
        let admitted: BTreeSet<String> = policy["spec"]["ingress"][0]["from"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["podSelector"]["matchLabels"]["app.kubernetes.io/component"].as_str())
            .map(str::to_string)
            .collect();
        for program in topology::PROGRAMS.iter().filter(|p| p.role != Role::Issuer) {
            let config = named(&docs, "ConfigMap", &format!("{RELEASE}-{}", program.name));
            if config["data"].get("REDIS_URL").is_some() {
                assert!(
                    admitted.contains(program.name),
                    "{env}: {} not admitted: {admitted:?}",
                    program.name
                );
            }
        }
        assert!(admitted.contains("catalog"), "{env}: {admitted:?}");
    }
}

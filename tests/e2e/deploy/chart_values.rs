//! What an operator sets in values and what the chart refuses: scheduling,
//! probes, per-program settings, checksums per program, projected
//! service-account identity, and the schema's and the render's refusals.

use serde_json::Value;

use super::chart::{RELEASE, named, of_kind, render, strs};
use super::documents;

fn deployment<'a>(docs: &'a [Value], program: &str) -> &'a Value {
    named(docs, "Deployment", &format!("{RELEASE}-{program}"))
}

fn pod(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]
}

fn config<'a>(docs: &'a [Value], program: &str) -> &'a Value {
    &named(docs, "ConfigMap", &format!("{RELEASE}-{program}"))["data"]
}

/// Rendered for a cluster that has the monitoring resources (the Prometheus
/// operator's PodMonitor, GKE's PodMonitoring).
fn rendered(environment: &str, sets: &[&str]) -> Vec<Value> {
    let mut args: Vec<&str> = sets.iter().flat_map(|s| ["--set", *s]).collect();
    args.extend([
        "--api-versions",
        "monitoring.coreos.com/v1/PodMonitor",
        "--api-versions",
        "monitoring.googleapis.com/v1/PodMonitoring",
    ]);
    documents(&render(environment, &args).unwrap_or_else(|e| panic!("{sets:?}: {e}")))
}

#[test]
fn scheduling_probes_and_settings_follow_values() {
    let docs = rendered(
        "production",
        &[
            "programs.catalog.env.CATALOG_FEED=https://files.shop.test/feed.ndjson",
            "programs.catalog.envFrom[0].secretRef.name=feed-credentials",
            "programs.search.scheduling.nodeSelector.pool=search",
            "scheduling.priorityClassName=storefront",
            "scheduling.tolerations[0].key=dedicated",
            "scheduling.tolerations[0].operator=Exists",
            "scheduling.podAnnotations.team=shop",
            "programs.cart.scheduling.podLabels.tier=checkout",
            "programs.cart.probes.liveness.timeoutSeconds=7",
        ],
    );
    assert_eq!(
        config(&docs, "catalog")["CATALOG_FEED"],
        "https://files.shop.test/feed.ndjson"
    );
    let catalog = &pod(deployment(&docs, "catalog"))["containers"][0];
    assert_eq!(
        catalog["envFrom"][1]["secretRef"]["name"],
        "feed-credentials"
    );
    for d in of_kind(&docs, "Deployment") {
        let name = d["metadata"]["name"].as_str().unwrap();
        let spec = pod(d);
        assert_eq!(spec["priorityClassName"], "storefront", "{name}");
        assert_eq!(spec["tolerations"][0]["key"], "dedicated", "{name}");
        let search = name.ends_with("-search");
        assert_eq!(spec["nodeSelector"]["pool"].is_string(), search, "{name}");
        let meta = &d["spec"]["template"]["metadata"];
        assert_eq!(meta["annotations"]["team"], "shop", "{name}");
        let cart = name.ends_with("-cart");
        assert_eq!(meta["labels"]["tier"].is_string(), cart, "{name}");
        let liveness = &spec["containers"][0]["livenessProbe"]["timeoutSeconds"];
        assert_eq!(liveness, if cart { 7 } else { 3 }, "{name}");
        // Production: replicas never share a node; zones preferred; a
        // rollout's new pods spread among themselves.
        let spread = spec["topologySpreadConstraints"].as_array().unwrap();
        let rule = |key: &str| {
            spread
                .iter()
                .find(|c| c["topologyKey"] == key)
                .unwrap_or_else(|| panic!("{name}: no spread by {key}"))
        };
        assert_eq!(
            rule("kubernetes.io/hostname")["whenUnsatisfiable"],
            "DoNotSchedule"
        );
        assert_eq!(
            rule("topology.kubernetes.io/zone")["whenUnsatisfiable"],
            "ScheduleAnyway"
        );
        assert!(
            spread
                .iter()
                .all(|c| strs(&c["matchLabelKeys"]) == ["pod-template-hash"])
        );
    }
    let no_spread = rendered(
        "staging",
        &["scheduling.spread.hostname=", "scheduling.spread.zone="],
    );
    assert!(pod(deployment(&no_spread, "cart"))["topologySpreadConstraints"].is_null());
}

/// A setting of one program restarts that program only.
#[test]
fn each_program_has_its_own_checksum() {
    let checksums = |sets: &[&str]| -> Vec<(String, String)> {
        of_kind(&rendered("staging", sets), "Deployment")
            .iter()
            .map(|d| {
                let a = &d["spec"]["template"]["metadata"]["annotations"];
                let name = d["metadata"]["name"].as_str().unwrap().to_string();
                assert!(a["checksum/secrets"].is_string(), "{name}");
                (name, a["checksum/config"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let before = checksums(&[]);
    let after = checksums(&["gatewayEnv.RATE_LIMIT_IP=10/60s"]);
    let changed: Vec<&str> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b.1 != a.1)
        .map(|(b, _)| b.0.as_str())
        .collect();
    assert_eq!(changed, [format!("{RELEASE}-gateway")]);
}

/// Projected service-account tokens (EKS, AKS, any cluster): one per
/// program called, its audience that program's; the allow-lists name
/// Kubernetes ServiceAccounts; no metadata server, no workload identity.
#[test]
fn projected_service_account_tokens_work_on_any_cluster() {
    let docs = rendered(
        "production",
        &[
            "identity.source=projected",
            "identity.issuer=https://oidc.eks.eu-west-1.amazonaws.com/id/ABC",
            "identity.jwksUrl=https://oidc.eks.eu-west-1.amazonaws.com/id/ABC/keys",
            "identity.projected.jwksCaConfigMap=kube-root-ca.crt",
            // Callers of the internal port are ServiceAccounts too.
            "identity.internalCallers[0]=system:serviceaccount:fulfilment:fulfilment=status|orders",
        ],
    );
    let gateway = config(&docs, "gateway");
    assert_eq!(
        gateway["INTERNAL_CALLERS"],
        "system:serviceaccount:fulfilment:fulfilment=status|orders"
    );
    assert_eq!(
        gateway["IDENTITY_TOKEN_DIR"],
        "/var/run/storefront/identity"
    );
    assert!(gateway["IDENTITY_TOKEN_URL"].is_null());
    assert_eq!(
        gateway["IDENTITY_JWKS_CA_FILE"],
        "/etc/storefront/identity-ca/ca.crt"
    );
    let volumes = pod(deployment(&docs, "gateway"))["volumes"]
        .as_array()
        .unwrap();
    let identity = volumes.iter().find(|v| v["name"] == "identity").unwrap();
    let audiences: Vec<&str> = identity["projected"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["serviceAccountToken"]["audience"].as_str().unwrap())
        .collect();
    assert_eq!(
        audiences,
        [
            "catalog",
            "customers",
            "cart",
            "orders",
            "search",
            "content",
            "payments"
        ]
    );
    let catalog = config(&docs, "catalog")["ALLOWED_CALLERS"]
        .as_str()
        .unwrap();
    assert!(
        catalog.contains(&format!("system:serviceaccount:default:{RELEASE}-gateway")),
        "{catalog}"
    );
    // Content calls nothing: no token volume; it still verifies under the CA.
    let content = pod(deployment(&docs, "content"));
    let names: Vec<&str> = content["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"identity") && names.contains(&"identity-ca"),
        "{names:?}"
    );
    for sa in of_kind(&docs, "ServiceAccount") {
        assert!(sa["metadata"]["annotations"].is_null(), "{sa}");
    }
}

#[test]
fn the_schema_and_the_render_refuse_what_cannot_run() {
    let long = "a".repeat(47);
    for (env, set, says) in [
        ("staging", "devIssuer.enabled=true", "schema"),
        // Projected tokens with Google's issuer left in place: every call
        // would fail verification.
        ("production", "identity.source=projected", "schema"),
        ("production", "disruptionBudget.maxUnavailable=0", "schema"),
        ("staging", "customers.captcha=dev", "schema"),
        ("staging", "redis.deploy=true", "schema"),
        (
            "production",
            "programs.cart.resources.limits.memory=512MB",
            "schema",
        ),
        (
            "production",
            "programs.cart.resources.requests.memory=lots",
            "schema",
        ),
        (
            "production",
            "securityContext.readOnlyRootFilesytem=true",
            "schema",
        ),
        ("production", "podSecurityContext.runAsUsr=1000", "schema"),
        (
            "production",
            "securityContext.capabilities.add={SYS_ADMIN}",
            "schema",
        ),
        ("production", "programs.gateway.slowStart=true", "schema"),
        // 250 cores, not 250m (issue 50, item 9).
        (
            "production",
            "programs.cart.resources.requests.cpu=250",
            "schema",
        ),
        ("production", "image.tag=stable", "mutable"),
        ("production", "image.tag=prod", "mutable"),
        ("production", "programs.catalog.env.feed=x", "schema"),
        (
            "production",
            "programs.cart.resources.requests.memory=1Gi",
            "the memory request (1Gi) is above the limit (128Mi)",
        ),
    ] {
        let refused = render(env, &["--set", set]).expect_err(&format!("{env} {set}"));
        assert!(refused.contains(says), "{env} {set}: {refused}");
    }
    // Quantities given as strings: a bare "256" is 256 bytes, "250" is
    // 250 cores.
    for set in [
        "programs.cart.resources.limits.memory=256",
        "programs.cart.resources.requests.cpu=250",
    ] {
        let refused = render("production", &["--set-string", set]).expect_err(set);
        assert!(refused.contains("schema"), "{set}: {refused}");
    }
    assert!(
        render(
            "production",
            &["--set-string", "programs.cart.resources.requests.cpu=250m"]
        )
        .is_ok()
    );
    mistakes_are_refused_by_name();
    let out = std::process::Command::new(super::tool("helm"))
        .args(["template", &long])
        .arg(super::root().join("charts/storefront"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("at most 46"), "{err}");
}

/// Issue 50 item 9's mistakes that rendered: each refused with a message
/// naming the value (the schema's own words for typos and sizes).
fn mistakes_are_refused_by_name() {
    for (set, says) in [
        (
            "programs.gateway.env.LISTEN_ADDR=x",
            "programs.gateway: the env name LISTEN_ADDR",
        ),
        (
            "programs.cart.env.RUST_LOG=debug",
            "programs.cart: the env name RUST_LOG",
        ),
        ("extras.env[0].name=REDIS_URL", "the env name REDIS_URL"),
        (
            "programs.cart.resources.limits.cpu=10m",
            "the CPU request (100m) is above the limit (10m)",
        ),
        (
            "scheduling.podLabels.app\\.kubernetes\\.io/component=x",
            "podLabels.app.kubernetes.io/component",
        ),
        (
            "scheduling.tolerations[0].efect=NoSchedule",
            "additional properties 'efect' not allowed",
        ),
        (
            "scheduling.affinity.nodeAfinity.x=1",
            "additional properties 'nodeAfinity' not allowed",
        ),
        (
            "telemetry.metricsPort=8080",
            "telemetry.metricsPort=8080 is a port the programs serve on",
        ),
        ("podMonitor.enabled=true", "this cluster has no PodMonitor"),
        (
            "ingress.host=api.example.com",
            "production values still name placeholders (api.example.com)",
        ),
    ] {
        let refused = render("production", &["--set", set]).expect_err(set);
        assert!(refused.contains(says), "{set}: {refused}");
    }
    let env: serde_json::Map<String, Value> = (0..201)
        .map(|i| (format!("K{i}"), Value::from("v")))
        .collect();
    let big = std::env::temp_dir().join(format!("big-env-{}.json", std::process::id()));
    std::fs::write(
        &big,
        serde_json::json!({"programs": {"cart": {"env": env}}}).to_string(),
    )
    .unwrap();
    let refused = render("production", &["-f", big.to_str().unwrap()]).expect_err("201 names");
    assert!(
        refused.contains("maxProperties: got 201, want 200"),
        "{refused}"
    );
    // What the refusals must not refuse: the CRD present, the same label
    // names elsewhere, an env name the chart does not set.
    let fine: [&[&str]; 3] = [
        &[
            "--set",
            "podMonitor.enabled=true",
            "--api-versions",
            "monitoring.coreos.com/v1/PodMonitor",
        ],
        &["--set", "scheduling.podLabels.team=shop"],
        &["--set", "programs.cart.env.HOLD_LIMIT_TOTAL=200"],
    ];
    for args in fine {
        assert!(render("production", args).is_ok(), "{args:?}");
    }
    let placeholders = std::process::Command::new(super::tool("helm"))
        .args(["template", "shop"])
        .arg(super::root().join("charts/storefront"))
        .arg("-f")
        .arg(super::root().join("charts/storefront/values-production.yaml"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&placeholders.stderr);
    assert!(
        said.contains("still name placeholders (shop.example.com"),
        "{said}"
    );
}

/// With egress denied by default, each program may reach DNS, what it
/// calls, and only the outside it uses; off by default.
#[test]
fn egress_allows_what_each_program_uses() {
    let docs = rendered("production", &["networkPolicy.egress.enabled=true"]);
    let egress = |program: &str| -> Vec<Value> {
        let policy = named(&docs, "NetworkPolicy", &format!("{RELEASE}-{program}"));
        assert_eq!(strs(&policy["spec"]["policyTypes"]), ["Ingress", "Egress"]);
        policy["spec"]["egress"].as_array().unwrap().clone()
    };
    let ports = |rules: &[Value]| -> Vec<u64> {
        let mut ports: Vec<u64> = rules
            .iter()
            .flat_map(|r| r["ports"].as_array().unwrap().clone())
            .map(|p| p["port"].as_u64().unwrap())
            .collect();
        ports.sort_unstable();
        ports.dedup();
        ports
    };
    let peers = |rules: &[Value]| -> Vec<String> {
        rules
            .iter()
            .filter(|r| r["ports"][0]["port"] == 50051)
            .flat_map(|r| r["to"].as_array().unwrap().clone())
            .map(|to| to["podSelector"]["matchLabels"]["app.kubernetes.io/component"].to_string())
            .collect()
    };
    // Cart: DNS, catalog, orders and payments, Redis, OTLP, metadata
    // server, HTTPS.
    let cart = egress("cart");
    assert_eq!(ports(&cart), [53, 80, 443, 988, 4317, 6379, 50051]);
    assert_eq!(
        peers(&cart),
        [r#""catalog""#, r#""orders""#, r#""payments""#]
    );
    // Content calls nothing and keeps nothing in Redis: DNS, OTLP, JWKS.
    assert_eq!(ports(&egress("content")), [53, 443, 4317]);
    // Search calls the catalog only, and has no Redis.
    let search = egress("search");
    assert_eq!(peers(&search), [r#""catalog""#]);
    assert!(!ports(&search).contains(&6379));
    // HTTPS leaves the cluster's own ranges out.
    let https = cart.iter().find(|r| r["ports"][0]["port"] == 443).unwrap();
    assert!(strs(&https["to"][0]["ipBlock"]["except"]).contains(&"10.0.0.0/8"));
    // The payment provider's addresses: the payments program's alone.
    let docs = rendered(
        "production",
        &[
            "networkPolicy.egress.enabled=true",
            "networkPolicy.egress.paymentProvider.cidrs={3.18.12.63/32}",
        ],
    );
    for program in ["gateway", "cart", "orders", "customers", "catalog"] {
        let policy = named(&docs, "NetworkPolicy", &format!("{RELEASE}-{program}"));
        let rules = policy["spec"]["egress"].as_array().unwrap();
        let https = rules.iter().find(|r| r["ports"][0]["port"] == 443).unwrap();
        let except = strs(&https["to"][0]["ipBlock"]["except"]);
        assert!(except.contains(&"3.18.12.63/32"), "{program}: {except:?}");
        assert!(
            !rules
                .iter()
                .any(|r| r["to"][0]["ipBlock"]["cidr"] == "3.18.12.63/32")
        );
    }
    let payments = named(&docs, "NetworkPolicy", &format!("{RELEASE}-payments"));
    let to_provider = payments["spec"]["egress"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["to"][0]["ipBlock"]["cidr"] == "3.18.12.63/32" && r["ports"][0]["port"] == 443);
    assert!(to_provider, "{payments}");
    // Off by default: ingress only.
    let policy = named(
        &rendered("production", &[]),
        "NetworkPolicy",
        &format!("{RELEASE}-cart"),
    )
    .clone();
    assert_eq!(strs(&policy["spec"]["policyTypes"]), ["Ingress"]);
}

/// PodMonitors (or managed Prometheus's PodMonitoring) on the metrics
/// port, and the Grafana dashboard as its sidecar's ConfigMap, only when
/// enabled; the dashboard asks only for metrics the programs publish.
#[test]
fn monitors_and_the_dashboard_render_when_enabled() {
    assert!(of_kind(&rendered("production", &[]), "PodMonitor").is_empty());
    let docs = rendered(
        "production",
        &[
            "podMonitor.enabled=true",
            "podMonitor.labels.release=kube-prometheus-stack",
            "dashboards.enabled=true",
        ],
    );
    let monitors = of_kind(&docs, "PodMonitor");
    assert_eq!(monitors.len(), 8, "one per program but the dev issuer");
    for m in &monitors {
        assert_eq!(m["apiVersion"], "monitoring.coreos.com/v1");
        assert_eq!(m["metadata"]["labels"]["release"], "kube-prometheus-stack");
        assert_eq!(m["spec"]["podMetricsEndpoints"][0]["port"], "metrics");
    }
    let managed = rendered("production", &["podMonitor.managed=true"]);
    let gmp = of_kind(&managed, "PodMonitoring");
    assert_eq!(gmp.len(), 8);
    assert_eq!(gmp[0]["spec"]["endpoints"][0]["port"], "metrics");
    let map = named(&docs, "ConfigMap", &format!("{RELEASE}-dashboard"));
    assert_eq!(map["metadata"]["labels"]["grafana_dashboard"], "1");
    let file =
        std::fs::read_to_string(super::root().join("charts/storefront/dashboards/storefront.json"))
            .unwrap();
    let shipped: Value =
        serde_json::from_str(map["data"]["storefront.json"].as_str().unwrap()).unwrap();
    assert_eq!(shipped, serde_json::from_str::<Value>(&file).unwrap());
    let published = [
        "http_requests_total",
        "http_request_duration_seconds_bucket",
        "grpc_server_requests_total",
        "grpc_server_request_duration_seconds_bucket",
        "downstream_calls_refused_total",
        "downstream_circuit_open",
        "catalog_version",
        "search_index_catalog_version",
        "rate_limit_rejections_total",
        "store_operation_duration_seconds_bucket",
    ];
    let mut asked = std::collections::BTreeSet::new();
    for panel in shipped["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"].as_str().unwrap();
            for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                let metric = word.ends_with("_total")
                    || word.ends_with("_bucket")
                    || word.ends_with("_version")
                    || word.ends_with("_open");
                if metric {
                    assert!(published.contains(&word), "{word} in {expr}");
                    asked.insert(word);
                }
            }
        }
    }
    assert_eq!(
        asked.len(),
        published.len(),
        "every published metric shown: {asked:?}"
    );
}

/// Issue 50 item 4: drains finish. The node spread honours taints (a
/// cordoned node does not count, so an evicted replica schedules), and
/// the disruption budget is a setting (a number or a percentage, or off).
#[test]
fn drains_finish_and_the_disruption_budget_is_a_setting() {
    let docs = rendered("production", &[]);
    let spec = pod(deployment(&docs, "catalog"));
    let constraints = spec["topologySpreadConstraints"].as_array().unwrap();
    assert!(!constraints.is_empty());
    for c in constraints {
        assert_eq!(c["nodeTaintsPolicy"], "Honor", "{c}");
    }
    let budgets = of_kind(&docs, "PodDisruptionBudget");
    assert!(!budgets.is_empty());
    assert!(budgets.iter().all(|b| b["spec"]["maxUnavailable"] == 1));
    let quarter = rendered("production", &["disruptionBudget.maxUnavailable=25%"]);
    assert!(
        of_kind(&quarter, "PodDisruptionBudget")
            .iter()
            .all(|b| b["spec"]["maxUnavailable"] == "25%")
    );
    let none = rendered("production", &["disruptionBudget.enabled=false"]);
    assert!(of_kind(&none, "PodDisruptionBudget").is_empty());
}

/// Order webhooks: the orders program alone gets the URLs and the signing
/// secret (from its Secret, hashed into its checksum); production and
/// staging refuse a URL that is not https.
#[test]
fn order_webhooks_reach_the_orders_program_alone() {
    let url = "orderWebhooks.urls={https://erp.shop.test/hooks}";
    let docs = rendered("production", &[url]);
    assert_eq!(
        config(&docs, "orders")["ORDER_WEBHOOK_URLS"],
        "https://erp.shop.test/hooks"
    );
    let orders = pod(deployment(&docs, "orders"));
    let env = orders["containers"][0]["env"].to_string();
    let volumes = orders["volumes"].to_string();
    assert!(
        env.contains("ORDER_WEBHOOK_SECRET_FILE") && volumes.contains("storefront-order-webhooks"),
        "{env} {volumes}"
    );
    for program in ["gateway", "cart", "payments"] {
        assert!(
            config(&docs, program).get("ORDER_WEBHOOK_URLS").is_none(),
            "{program}"
        );
        let env = pod(deployment(&docs, program))["containers"][0]["env"].to_string();
        assert!(!env.contains("ORDER_WEBHOOK_SECRET"), "{program}: {env}");
    }
    let off = rendered("production", &[]);
    assert!(config(&off, "orders").get("ORDER_WEBHOOK_URLS").is_none());
    for environment in ["production", "staging"] {
        let plain = ["--set", "orderWebhooks.urls={http://erp.shop.test/hooks}"];
        let refused = render(environment, &plain).unwrap_err();
        assert!(refused.contains("https only"), "{environment}: {refused}");
    }
    assert!(
        render(
            "development",
            &["--set", "orderWebhooks.urls={http://erp.svc/hooks}"]
        )
        .is_ok()
    );
}

/// Egress values are derived where they can be and refused where they
/// would render a policy that blocks the programs (issue 50, item 8).
#[test]
fn egress_values_are_derived_and_checked() {
    let egress_of = |docs: &[Value], program: &str| -> Vec<Value> {
        let policy = named(docs, "NetworkPolicy", &format!("{RELEASE}-{program}"));
        policy["spec"]["egress"].as_array().unwrap().clone()
    };
    let on = "networkPolicy.egress.enabled=true";
    // The collector's namespace and port come from its endpoint.
    let endpoint = "telemetry.otlpEndpoint=http://otel-collector.tracing.svc.cluster.local:4318";
    let rules = egress_of(&rendered("production", &[on, endpoint]), "cart");
    let otlp = rules
        .iter()
        .find(|r| {
            r["to"][0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                == "tracing"
        })
        .unwrap_or_else(|| panic!("no rule to the tracing namespace: {rules:?}"));
    assert_eq!(otlp["ports"][0]["port"], 4318);
    // An endpoint outside the cluster: the configured namespace and port.
    let outside = "telemetry.otlpEndpoint=https://otlp.shop.test";
    let rules = egress_of(&rendered("production", &[on, outside]), "cart");
    assert!(rules.iter().any(|r| r["ports"][0]["port"] == 4317));
    // Every Redis port, and both API server ports.
    let ports = "networkPolicy.egress.redis.ports={7000,7001}";
    let api = "networkPolicy.egress.apiServer.cidrs={10.0.0.1/32}";
    let rules = egress_of(&rendered("production", &[on, ports, api]), "cart");
    let numbers = |r: &Value| -> Vec<u64> {
        r["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["port"].as_u64().unwrap())
            .collect()
    };
    assert!(
        rules.iter().any(|r| numbers(r) == [7000, 7001]),
        "{rules:?}"
    );
    let to_api = rules
        .iter()
        .find(|r| r["to"][0]["ipBlock"]["cidr"] == "10.0.0.1/32")
        .unwrap();
    assert_eq!(numbers(to_api), [443, 6443]);
    // The cluster's own JWKS with egress on and no API server addresses:
    // refused, naming the value to set.
    let projected = [
        "--set",
        on,
        "--set",
        "identity.source=projected",
        "--set",
        "identity.issuer=https://kubernetes.default.svc",
        "--set",
        "identity.jwksUrl=https://kubernetes.default.svc/openid/v1/jwks",
        "--set",
        "identity.projected.jwksCaConfigMap=kube-root-ca.crt",
    ];
    let refused = render("production", &projected).unwrap_err();
    assert!(
        refused.contains("networkPolicy.egress.apiServer.cidrs"),
        "{refused}"
    );
}

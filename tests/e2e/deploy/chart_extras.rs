//! Issue 50 item 10: what the chart does not make itself joins through
//! `extras` (global, then each program's own): env, envFrom, volumes and
//! their mounts (a Secret as files), sidecars, init containers and
//! Deployment annotations; rendered where they belong and valid for the
//! cluster, an env name the chart sets refused. Also the sizes for a
//! million products, autoscaler behavior and scrape relabelings.

use serde_json::Value;

use super::chart::{RELEASE, named, render, valid_for_kubernetes};
use super::documents;

const EXTRAS: &str = r#"{
  "extras": {
    "deploymentAnnotations": {"reloader.stakater.com/auto": "true"},
    "env": [{"name": "SHOP_REGION", "value": "eu"}],
    "volumes": [{"name": "keys", "secret": {"secretName": "shop-keys"}}],
    "volumeMounts": [{"name": "keys", "mountPath": "/etc/shop/keys", "readOnly": true}]
  },
  "programs": {"gateway": {"extras": {
    "containers": [{"name": "proxy", "image": "envoyproxy/envoy:v1.31.0"}],
    "initContainers": [{"name": "wait", "image": "busybox:1.36", "command": ["sh", "-c", "true"]}],
    "deploymentAnnotations": {"team": "edge"}
  }}}
}"#;

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .map(|l| l.iter().filter_map(|x| x["name"].as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn extras_join_every_program_then_each_its_own() {
    let file = std::env::temp_dir().join(format!("extras-{}.json", std::process::id()));
    std::fs::write(&file, EXTRAS).unwrap();
    let text = render("production", &["-f", file.to_str().unwrap()]).expect("renders");
    valid_for_kubernetes(&text, "production with extras");
    let docs = documents(&text);
    let gateway = named(&docs, "Deployment", &format!("{RELEASE}-gateway"));
    let cart = named(&docs, "Deployment", &format!("{RELEASE}-cart"));
    assert_eq!(gateway["metadata"]["annotations"]["team"], "edge");
    assert_eq!(
        gateway["metadata"]["annotations"]["reloader.stakater.com/auto"],
        "true"
    );
    assert!(
        cart["metadata"]["annotations"].get("team").is_none(),
        "the gateway's own only"
    );
    let pod = |d: &Value| d["spec"]["template"]["spec"].clone();
    assert_eq!(names(&pod(gateway)["containers"]), ["gateway", "proxy"]);
    assert_eq!(names(&pod(gateway)["initContainers"]), ["wait"]);
    assert_eq!(names(&pod(cart)["containers"]), ["cart"]);
    for d in [gateway, cart] {
        let main = &pod(d)["containers"][0];
        assert!(names(&main["env"]).contains(&"SHOP_REGION"), "{main}");
        assert!(names(&pod(d)["volumes"]).contains(&"keys"));
        let mounts: Vec<&str> = main["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["mountPath"].as_str())
            .collect();
        assert!(mounts.contains(&"/etc/shop/keys"), "{mounts:?}");
    }
    // The Secrets' env stays beside the operator's (production's Redis URL,
    // a file's path), their volume beside the operator's.
    assert!(names(&pod(cart)["containers"][0]["env"]).contains(&"REDIS_URL_FILE"));
    assert!(names(&pod(cart)["volumes"]).contains(&"secrets"));
    let refused = render(
        "production",
        &[
            "--set",
            "extras.env[0].name=RUST_LOG",
            "--set",
            "extras.env[0].value=x",
        ],
    )
    .expect_err("a name the chart sets");
    assert!(refused.contains("the env name RUST_LOG"), "{refused}");
    let typo =
        render("production", &["--set", "extras.sidecars[0].name=x"]).expect_err("no such hook");
    assert!(
        typo.contains("additional properties 'sidecars' not allowed"),
        "{typo}"
    );
}

/// Issue 50 item 10's rest: `values-large.yaml` sizes the catalog and
/// search for 1,000,000 products (from measured RSS), an autoscaler takes
/// `behavior`, a PodMonitor its relabelings.
#[test]
fn large_catalogs_autoscaler_behavior_and_relabelings_render() {
    let large = super::root().join("charts/storefront/values-large.yaml");
    let text = render("production", &["-f", large.to_str().unwrap()]).expect("renders");
    valid_for_kubernetes(&text, "production with values-large.yaml");
    let docs = documents(&text);
    for (program, limit) in [("catalog", "3Gi"), ("search", "3584Mi")] {
        let d = named(&docs, "Deployment", &format!("{RELEASE}-{program}"));
        let resources = &d["spec"]["template"]["spec"]["containers"][0]["resources"];
        assert_eq!(resources["limits"]["memory"], limit, "{program}");
        assert_eq!(resources["requests"]["memory"], "2Gi", "{program}");
    }
    let sets = [
        "--set",
        "programs.gateway.autoscaling.behavior.scaleDown.stabilizationWindowSeconds=600",
        "--set",
        "podMonitor.enabled=true",
        "--set",
        "podMonitor.relabelings[0].action=labeldrop",
        "--set",
        "podMonitor.relabelings[0].regex=pod_template_hash",
        "--api-versions",
        "monitoring.coreos.com/v1/PodMonitor",
    ];
    let docs = documents(&render("production", &sets).expect("renders"));
    let hpa = named(
        &docs,
        "HorizontalPodAutoscaler",
        &format!("{RELEASE}-gateway"),
    );
    assert_eq!(
        hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        600
    );
    let monitor = named(&docs, "PodMonitor", &format!("{RELEASE}-gateway"));
    let endpoint = &monitor["spec"]["podMetricsEndpoints"][0];
    assert_eq!(
        endpoint["relabelings"][0]["action"], "labeldrop",
        "{endpoint}"
    );
    assert_eq!(endpoint["port"], "metrics");
    let typo = render(
        "production",
        &[
            "--set",
            "programs.gateway.autoscaling.behavior.scaleDwn.x=1",
        ],
    )
    .expect_err("a typo");
    assert!(
        typo.contains("additional properties 'scaleDwn' not allowed"),
        "{typo}"
    );
}

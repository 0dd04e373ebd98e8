//! Issue 50 item 5: who may reach each port is a list of sources per port
//! (namespaces by name, Kubernetes' own selectors, addresses), so a cloud
//! load balancer that sends from its own addresses (GKE's NEGs, an AWS load
//! balancer in IP mode) and internal callers in several namespaces are
//! admitted; the presets for GKE, EKS and ingress-nginx render valid
//! policies; sources a peer cannot hold, and chart 0.1.0's keys, are
//! refused by name.

use serde_json::{Value, json};

use super::chart::{RELEASE, named, of_kind, render, valid_for_kubernetes};
use super::documents;

/// The `from` peers of `program`'s NetworkPolicy rule for `port`, if any.
fn peers(docs: &[Value], program: &str, port: &str) -> Option<Value> {
    let policy = named(docs, "NetworkPolicy", &format!("{RELEASE}-{program}"));
    policy["spec"]["ingress"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ports"][0]["port"] == port)
        .map(|r| r["from"].clone())
}

fn with_preset(name: &str) -> Vec<Value> {
    let preset = format!("charts/storefront/presets/network-{name}.yaml");
    let preset = super::root().join(preset);
    let args = [
        "-f",
        preset.to_str().unwrap(),
        "--api-versions",
        "monitoring.googleapis.com/v1/PodMonitoring",
    ];
    let text = render("production", &args).unwrap_or_else(|e| panic!("{name}: {e}"));
    valid_for_kubernetes(&text, name);
    documents(&text)
}

fn namespace(name: &str) -> Value {
    json!({"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": name}}})
}

#[test]
fn presets_admit_each_clouds_load_balancer_and_scraper() {
    let gke = with_preset("gke");
    let google = [
        json!({"ipBlock": {"cidr": "130.211.0.0/22"}}),
        json!({"ipBlock": {"cidr": "35.191.0.0/16"}}),
    ];
    assert_eq!(peers(&gke, "gateway", "http").unwrap(), json!(google));
    for policy in of_kind(&gke, "NetworkPolicy") {
        let program = policy["metadata"]["name"].as_str().unwrap();
        let program = program.strip_prefix(&format!("{RELEASE}-")).unwrap();
        if program == "redis" {
            continue;
        }
        let scraper = peers(&gke, program, "metrics").expect(program);
        assert_eq!(scraper, json!([namespace("gmp-system")]), "{program}");
    }
    assert!(!of_kind(&gke, "PodMonitoring").is_empty());

    let eks = with_preset("eks");
    let vpc = json!([{"ipBlock": {"cidr": "192.168.0.0/16"}}]);
    assert_eq!(peers(&eks, "gateway", "http").unwrap(), vpc);

    // The controller's pods only: one peer holding both selectors (two
    // peers would admit the whole namespace).
    let nginx = with_preset("ingress-nginx");
    let mut controller = namespace("ingress-nginx");
    controller["podSelector"] = json!({"matchLabels": {
        "app.kubernetes.io/name": "ingress-nginx",
        "app.kubernetes.io/component": "controller",
    }});
    assert_eq!(
        peers(&nginx, "gateway", "http").unwrap(),
        json!([controller])
    );
}

#[test]
fn every_port_takes_a_list_and_an_empty_one_admits_nobody() {
    let sources = r#"{"networkPolicy": {"sources": {
        "public": [{"namespace": "ingress-nginx"}],
        "internal": [
            {"namespace": "fulfilment"},
            {"namespaceSelector": {"matchLabels": {"team": "merchandising"}}},
            {"podSelector": {"matchLabels": {"app": "ops-console"}}},
            {"cidr": "10.20.0.0/16", "except": ["10.20.5.0/24"]}
        ],
        "metrics": []
    }}}"#;
    let file = std::env::temp_dir().join(format!("sources-{}.json", std::process::id()));
    std::fs::write(&file, sources).unwrap();
    let text = render("production", &["-f", file.to_str().unwrap()]).expect("renders");
    valid_for_kubernetes(&text, "production with source lists");
    let docs = documents(&text);
    let internal = peers(&docs, "gateway", "internal").unwrap();
    assert_eq!(
        internal,
        json!([
            namespace("fulfilment"),
            {"namespaceSelector": {"matchLabels": {"team": "merchandising"}}},
            {"podSelector": {"matchLabels": {"app": "ops-console"}}},
            {"ipBlock": {"cidr": "10.20.0.0/16", "except": ["10.20.5.0/24"]}},
        ])
    );
    // An empty `from` would admit everyone: an empty list renders no rule.
    for policy in of_kind(&docs, "NetworkPolicy") {
        let rules = policy["spec"]["ingress"].as_array().unwrap();
        assert!(rules.iter().all(|r| r["ports"][0]["port"] != "metrics"));
        assert!(rules.iter().all(|r| r["from"].is_array()), "{policy}");
    }
}

#[test]
fn sources_a_peer_cannot_hold_are_refused_by_name() {
    for (set, says) in [
        (
            r#"networkPolicy.sources.public=[{"cidr":"10.0.0.0/8","namespace":"edge"}]"#,
            "networkPolicy.sources.public[0]: cidr names addresses",
        ),
        (
            r#"networkPolicy.sources.internal=[{"namespace":"a"},{"namespace":"b","namespaceSelector":{"matchLabels":{"x":"y"}}}]"#,
            "networkPolicy.sources.internal[1]: namespace and namespaceSelector",
        ),
        (
            r#"networkPolicy.sources.metrics=[{"namespace":"m","except":["10.0.0.0/8"]}]"#,
            "networkPolicy.sources.metrics[0]: except narrows a cidr",
        ),
        (
            r#"networkPolicy.sources.public=[{"namesapce":"edge"}]"#,
            "additional properties 'namesapce' not allowed",
        ),
        (
            r#"networkPolicy.sources.public=[{"cidr":"ten/8"}]"#,
            "/networkPolicy/sources/public/0/cidr",
        ),
        (
            r#"networkPolicy.ingressNamespace="edge""#,
            "write networkPolicy.sources.public: [{namespace: edge}]",
        ),
    ] {
        let refused = render("staging", &["--set-json", set]).unwrap_err();
        assert!(refused.contains(says), "{set}: {refused}");
    }
}

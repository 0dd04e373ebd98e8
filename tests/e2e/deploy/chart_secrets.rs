//! Issue 50, item 3: Secrets reach the programs as files (re-read on
//! change, so a rotation needs no restart whatever tool made it), never a
//! `subPath` that would freeze them; `secretsAsFiles=false` keeps them as
//! env. What rolls the pods when they change is a hash the operator can
//! feed from outside Helm (`rollout.secretsChecksum`) or, by default, of
//! resourceVersions read at upgrade, never of the values; an env name the
//! chart sets as a file is refused in either spelling.

use serde_json::Value;

use super::chart::{RELEASE, of_kind, render, valid_for_kubernetes};
use super::documents;

fn pod(d: &Value) -> &Value {
    &d["spec"]["template"]["spec"]
}

fn checksum(d: &Value) -> &str {
    d["spec"]["template"]["metadata"]["annotations"]["checksum/secrets"]
        .as_str()
        .unwrap()
}

#[test]
fn secrets_are_files_the_programs_follow() {
    let text = render("production", &[]).unwrap();
    valid_for_kubernetes(&text, "production, secrets as files");
    let docs = documents(&text);
    let mut mounted = 0;
    for d in of_kind(&docs, "Deployment") {
        let name = d["metadata"]["name"].as_str().unwrap();
        let main = &pod(d)["containers"][0];
        let env = main["env"].as_array().cloned().unwrap_or_default();
        assert!(
            env.iter().all(|v| v["valueFrom"].is_null()),
            "{name}: a Secret as env"
        );
        let Some(volume) = pod(d)["volumes"]
            .as_array()
            .and_then(|v| v.iter().find(|v| v["name"] == "secrets"))
        else {
            assert!(env.is_empty(), "{name}");
            continue;
        };
        mounted += 1;
        assert_eq!(volume["projected"]["defaultMode"], 0o440, "{name}");
        let mount = main["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "secrets")
            .unwrap();
        // A subPath mount is never updated by the kubelet.
        assert!(mount["subPath"].is_null(), "{name}");
        assert_eq!(mount["readOnly"], true);
        for var in &env {
            let file = var["name"].as_str().unwrap().strip_suffix("_FILE").unwrap();
            assert!(
                volume.to_string().contains(&format!("\"path\":\"{file}\"")),
                "{name}: {file}"
            );
        }
    }
    // gateway, catalog, cart, orders (Redis), customers (Redis, keys,
    // reCAPTCHA), payments (Stripe).
    assert_eq!(mounted, 6);

    let env = documents(&render("production", &["--set", "secretsAsFiles=false"]).unwrap());
    for d in of_kind(&env, "Deployment") {
        let volumes = pod(d)["volumes"].to_string();
        assert!(!volumes.contains("\"secrets\""), "{volumes}");
    }
    let customers = of_kind(&env, "Deployment")
        .into_iter()
        .find(|d| d["metadata"]["name"] == format!("{RELEASE}-customers"))
        .unwrap();
    assert!(
        pod(customers)["containers"][0]["env"]
            .to_string()
            .contains("secretKeyRef")
    );
}

#[test]
fn a_checksum_fed_from_outside_rolls_every_pod() {
    let sums = |value: &str| -> Vec<String> {
        let set = format!("rollout.secretsChecksum={value}");
        let docs = documents(&render("production", &["--set", &set]).unwrap());
        of_kind(&docs, "Deployment")
            .into_iter()
            .map(|d| checksum(d).to_owned())
            .collect()
    };
    let (one, two) = (sums("rv-1041"), sums("rv-1042"));
    assert!(one.iter().all(|s| s == &one[0]) && one[0].len() == 64);
    assert!(
        one.iter().zip(&two).all(|(a, b)| a != b),
        "a new value rolls every pod"
    );
    // Without it, read with lookup at upgrade: nothing under `helm template`
    // (no cluster), the same for every program.
    let docs = documents(&render("production", &[]).unwrap());
    let plain: Vec<&str> = of_kind(&docs, "Deployment")
        .into_iter()
        .map(checksum)
        .collect();
    assert!(plain.iter().all(|s| !one.contains(&s.to_string())));
}

#[test]
fn an_env_name_the_chart_sets_as_a_file_is_refused_either_way() {
    for name in ["TOKEN_SIGNING_KEY", "TOKEN_SIGNING_KEY_FILE"] {
        let set = format!("programs.customers.env.{name}=x");
        let refused = render("production", &["--set", &set]).unwrap_err();
        assert!(
            refused.contains(&format!("the env name {name}")),
            "{refused}"
        );
    }
}

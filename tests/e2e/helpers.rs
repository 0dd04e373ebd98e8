//! The harness every end-to-end test uses: `spawn_mesh()` starts the whole
//! mesh on port 0 and returns an HTTP client bound to it. `TEST_LOG=1` shows
//! the mesh's logs.

use reqwest::{Method, RequestBuilder, StatusCode, header::HeaderMap};
use serde_json::Value;
use storefront::{Mesh, MeshOptions};
use storefront_platform::env::EnvReader;
use storefront_platform::testing::{RedisCluster, RedisServer};
use storefront_platform::topology::Program;
use tokio::net::TcpListener;

use crate::logs;

pub const VERSION: &str = "v1.0";

pub struct TestMesh {
    pub mesh: Mesh,
    pub api: Api,
    /// The redis-server of a Redis-backed mesh, stopped with it.
    pub _redis: Option<RedisServer>,
    /// The Redis Cluster of a cluster-backed mesh, stopped with it.
    pub _cluster: Option<RedisCluster>,
}

/// An HTTP client of one gateway, however that gateway runs.
pub struct Api {
    pub base: String,
    pub http: reqwest::Client,
}

impl TestMesh {
    /// `message` as a gRPC request of the program `account` to the
    /// `audience` service, with the identity token the mesh's dev issuer
    /// mints for it.
    pub fn grpc_as<T>(&self, account: &str, audience: &str, message: T) -> tonic::Request<T> {
        let token = self.mesh.issuer.mint(account, audience).unwrap();
        let mut request = tonic::Request::new(message);
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        request
    }
}

impl std::ops::Deref for TestMesh {
    type Target = Api;
    fn deref(&self) -> &Api {
        &self.api
    }
}

/// Where a mesh keeps its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Redis,
    /// One redis-server keeping an append-only file (it can restart).
    PersistentRedis,
    /// A Redis Cluster of three primaries and three replicas.
    Cluster,
    /// One redis-server over TLS (`rediss://`), its certificate signed by
    /// a CA of the test's own (`REDIS_CA_FILE`).
    Tls,
}

/// A response with its body parsed as JSON (Null when empty).
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the error body's shape and returns the body.
    pub fn error(&self, status: u16, code: &str) -> &Value {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.body);
        assert_eq!(self.header("content-type"), Some("application/json"));
        assert_eq!(self.body["status"], status);
        assert!(self.body["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(self.body["type"].is_string());
        assert_eq!(self.body["code"], code, "body: {}", self.body);
        &self.body
    }

    /// The first field error as (field, code).
    /// The fields every entry of an error body's `errors` names.
    pub fn error_fields(&self) -> Vec<&str> {
        self.body["errors"]
            .as_array()
            .map(|errors| errors.iter().filter_map(|e| e["field"].as_str()).collect())
            .unwrap_or_default()
    }

    pub fn field_error(&self) -> (&str, &str) {
        let e = &self.body["errors"][0];
        (
            e["field"].as_str().unwrap_or_default(),
            e["code"].as_str().unwrap_or_default(),
        )
    }
}

pub async fn spawn_mesh() -> TestMesh {
    spawn_mesh_with(&[]).await
}

/// A mesh whose environment has `vars` on top of the defaults.
pub async fn spawn_mesh_with(vars: &[(&str, &str)]) -> TestMesh {
    spawn_mesh_on(Backend::Memory, vars).await
}

/// A mesh on `backend`; a Redis mesh gets a redis-server of its own.
pub async fn spawn_mesh_on(backend: Backend, vars: &[(&str, &str)]) -> TestMesh {
    logs::install();
    let mut env = EnvReader::from_pairs(vars.iter().copied());
    let (mut redis, mut cluster) = (None, None);
    match backend {
        Backend::Memory => {}
        Backend::Redis => {
            let server =
                RedisServer::start().expect("redis-server on PATH (apt-get install redis-server)");
            env.set("REDIS_URL", server.url.clone());
            redis = Some(server);
        }
        Backend::PersistentRedis => {
            let server = RedisServer::start_persistent().expect("redis-server on PATH");
            env.set("REDIS_URL", server.url.clone());
            redis = Some(server);
        }
        Backend::Tls => {
            let server = RedisServer::start_tls().expect("redis-server with TLS, and openssl");
            env.set("REDIS_URL", server.url.clone());
            let ca = server.tls.as_ref().expect("certificates").join("ca.crt");
            env.set("REDIS_CA_FILE", ca.display().to_string());
            redis = Some(server);
        }
        Backend::Cluster => {
            let nodes = RedisCluster::start().expect("a Redis Cluster on loopback");
            // As an operator writes it: host:port, comma-separated.
            let addrs: Vec<String> = nodes
                .ports
                .iter()
                .map(|p| format!("127.0.0.1:{p}"))
                .collect();
            env.set("REDIS_CLUSTER_NODES", addrs.join(","));
            cluster = Some(nodes);
        }
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let mesh = Mesh::start(env, Some(listener)).await.expect("mesh starts");
    let base = format!("http://{}", mesh.gateway_addr);
    let http = reqwest::Client::builder().build().expect("client");
    let test = TestMesh {
        mesh,
        api: Api { base, http },
        _redis: redis,
        _cluster: cluster,
    };
    test.wait_ready().await;
    test
}

/// A mesh in which `program` is replaced by the stand-in at `url` (a
/// silent, slow or broken server), with `vars`. Waited for until its
/// gateway answers, not until it is ready: a broken stand-in keeps it
/// unready.
pub async fn spawn_mesh_standing_in(
    program: &'static Program,
    url: &str,
    vars: &[(&str, &str)],
) -> TestMesh {
    logs::install();
    let options = MeshOptions {
        env: EnvReader::from_pairs(vars.iter().copied()),
        gateway: Some(TcpListener::bind("127.0.0.1:0").await.expect("bind")),
        stand_ins: vec![(program, url.to_owned())],
    };
    let mesh = Mesh::start_with(options).await.expect("mesh starts");
    let test = TestMesh {
        api: Api {
            base: format!("http://{}", mesh.gateway_addr),
            http: reqwest::Client::new(),
        },
        mesh,
        _redis: None,
        _cluster: None,
    };
    if !test.answers_200("/health/live").await {
        panic!("the gateway never answered");
    }
    test
}

/// How long a mesh may take to start. A readiness bound, not a measure:
/// the suite runs beside other work (CI builds the release binary on the
/// other core meanwhile), and a start that took 5 s once failed a run.
const START_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

impl Api {
    /// A request with `X-Api-Version: v1.0`.
    pub fn get(&self, path: &str) -> RequestBuilder {
        self.request(Method::GET, path)
            .header("X-Api-Version", VERSION)
    }

    /// A request with no headers at all.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base))
    }

    pub async fn send(&self, request: RequestBuilder) -> Reply {
        let response = request.send().await.expect("request sent");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.expect("body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("JSON body")
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    /// GET with the version header.
    pub async fn fetch(&self, path: &str) -> Reply {
        self.send(self.get(path)).await
    }

    /// GET that must succeed; returns the body.
    pub async fn ok(&self, path: &str) -> Value {
        let reply = self.fetch(path).await;
        assert_eq!(reply.status, 200, "GET {path}: {}", reply.body);
        reply.body
    }

    pub async fn wait_ready(&self) {
        if !self.answers_200("/health/ready").await {
            panic!("mesh never became ready");
        }
    }

    /// Whether `path` answers 200 within [`START_WITHIN`], asked every 50 ms.
    async fn answers_200(&self, path: &str) -> bool {
        let until = tokio::time::Instant::now() + START_WITHIN;
        while tokio::time::Instant::now() < until {
            let reply = self.request(Method::GET, path).send().await;
            if reply.is_ok_and(|r| r.status() == 200) {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        false
    }

    /// Every product id, walking the pages of `/products` in `limit` steps.
    pub async fn walk(&self, query: &str, limit: u32) -> Vec<Value> {
        let mut all = Vec::new();
        let mut offset = 0;
        loop {
            let page = self
                .ok(&format!("/products?limit={limit}&offset={offset}&{query}"))
                .await;
            let results = page["results"].as_array().expect("results").clone();
            assert_eq!(page["count"].as_u64(), Some(results.len() as u64));
            all.extend(results);
            offset += limit as u64;
            if offset >= page["total"].as_u64().expect("total") {
                return all;
            }
        }
    }
}

impl Api {
    /// A JSON request with the version header and, if given, a session token.
    pub fn json(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: &Value,
    ) -> RequestBuilder {
        let mut request = self
            .request(method, path)
            .header("X-Api-Version", VERSION)
            .json(body);
        if let Some(token) = token {
            request = request.header("X-BFF-Token", token);
        }
        request
    }

    /// A body-less request with the version header and a session token.
    pub fn authed(&self, method: Method, path: &str, token: &str) -> RequestBuilder {
        self.request(method, path)
            .header("X-Api-Version", VERSION)
            .header("X-BFF-Token", token)
    }

    /// Signs up `email` with `password`; returns the answer (202, the same
    /// whether or not the address was taken).
    pub async fn sign_up(&self, email: &str, password: &str) -> Value {
        let body = serde_json::json!({
            "emailAddress": email, "password": password, "firstName": "Test", "lastName": "Shopper",
            "gRecaptchaResponse": "dev-ok",
        });
        let reply = self
            .send(self.json(Method::POST, "/customers", None, &body))
            .await;
        assert_eq!(reply.status, 202, "sign-up: {}", reply.body);
        reply.body
    }

    pub async fn log_in(&self, email: &str, password: &str) -> Reply {
        let body = serde_json::json!({"emailAddress": email, "password": password, "gRecaptchaResponse": "dev-ok"});
        self.send(self.json(Method::POST, "/auth/login", None, &body))
            .await
    }

    /// Signs up a fresh customer and logs in; returns the login result.
    pub async fn new_session(&self) -> Value {
        let email = format!("shopper-{}@example.com", uuid::Uuid::new_v4().simple());
        self.sign_up(&email, "correct horse 42").await;
        let reply = self.log_in(&email, "correct horse 42").await;
        assert_eq!(reply.status, 200, "login: {}", reply.body);
        reply.body
    }
}

/// Runs an async test body once per backend.
#[macro_export]
macro_rules! both_backends {
    ($name:ident, $body:path) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn memory() {
                $body($crate::helpers::spawn_mesh_on($crate::helpers::Backend::Memory, &[]).await)
                    .await;
            }

            #[tokio::test]
            async fn redis() {
                $body($crate::helpers::spawn_mesh_on($crate::helpers::Backend::Redis, &[]).await)
                    .await;
            }
        }
    };
}

/// Another replica of a service on the mesh's Redis, as a second pod would
/// run beside the mesh's own: `serve` starts it with the settings a
/// replica gets (the dev issuer's keys, the Redis URL). Its URL, and what
/// stops it.
pub async fn replica<F, Fut>(
    t: &TestMesh,
    serve: F,
) -> (String, tokio_util::sync::CancellationToken)
where
    F: FnOnce(&EnvReader, storefront_platform::service::Serving) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send + 'static,
{
    use storefront_platform::identity::dev_issuer::JWKS_PATH;
    let redis = t._redis.as_ref().expect("a mesh on Redis").url.clone();
    let env = EnvReader::from_pairs([
        (
            "IDENTITY_JWKS_URL",
            format!("{}{JWKS_PATH}", t.mesh.issuer_url),
        ),
        ("REDIS_URL", redis.clone()),
    ]);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let stop = tokio_util::sync::CancellationToken::new();
    let serving = storefront_platform::service::Serving {
        listener,
        store: storefront_platform::store::Store::redis(&redis, "sf:")
            .await
            .expect("the mesh's Redis"),
        shutdown: stop.clone(),
    };
    tokio::spawn(serve(&env, serving));
    (url, stop)
}

/// Runs the repository's Python script `script` (a path from the
/// repository's root) with `args` and `env`, on the test's PATH (the
/// virtual environment `scripts/test` makes); its standard output, or a
/// panic showing both of its outputs. Blocking: call it off the runtime.
pub fn python(script: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let path = format!("{}/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(&path)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("python3 with the packages scripts/test installs");
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{script}: {printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    printed
}

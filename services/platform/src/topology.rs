//! The programs of the mesh, declared once: each one's name (its identity
//! token audience), its port when run alone on a laptop or in compose, its
//! service account in local and development environments, what it calls
//! (and which methods), and whether it keeps shared state. Every program's
//! configuration takes its defaults from here (listen address, the callers
//! it allows, where its downstreams are), the all-in-one mesh wires itself
//! from it, and tests hold the process harness, docker-compose.yml and the
//! Helm chart to it.

use crate::env::{ConfigError, EnvReader};

/// What a program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The development identity issuer (JWKS and tokens over HTTP).
    Issuer,
    /// A gRPC domain service.
    Service,
    /// The REST edge.
    Gateway,
}

/// The methods of a callee a caller may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Methods {
    All,
    /// gRPC method names, e.g. `GetProduct`: the methods the caller's code
    /// uses, so its account is granted nothing else.
    Only(&'static [&'static str]),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub callee: &'static str,
    pub methods: Methods,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Program {
    pub name: &'static str,
    pub role: Role,
    /// Its port on loopback when it runs alone, and in docker-compose.
    pub port: u16,
    /// Its service account in local and development environments.
    pub dev_account: &'static str,
    pub calls: &'static [Call],
    /// Whether it keeps state in the shared store (`REDIS_URL`).
    pub stateful: bool,
}

/// The domain every dev account is in.
pub const DEV_ACCOUNT_DOMAIN: &str = "storefront.iam.gserviceaccount.com";

const fn service(name: &'static str, port: u16, dev_account: &'static str) -> Program {
    Program {
        name,
        role: Role::Service,
        port,
        dev_account,
        calls: &[],
        stateful: false,
    }
}

const fn all(callee: &'static str) -> Call {
    Call {
        callee,
        methods: Methods::All,
    }
}

pub const DEV_ISSUER: Program = Program {
    name: "dev-issuer",
    role: Role::Issuer,
    port: 8091,
    dev_account: "dev-issuer@storefront.iam.gserviceaccount.com",
    calls: &[],
    stateful: false,
};

pub const CATALOG: Program = service(
    "catalog",
    50051,
    "catalog@storefront.iam.gserviceaccount.com",
);

pub const CUSTOMERS: Program = Program {
    stateful: true,
    ..service(
        "customers",
        50052,
        "customers@storefront.iam.gserviceaccount.com",
    )
};

/// The only holder of payment provider secrets.
pub const PAYMENTS: Program = service(
    "payments",
    50057,
    "payments@storefront.iam.gserviceaccount.com",
);

pub const CART: Program = Program {
    calls: &[
        Call {
            callee: "catalog",
            methods: Methods::Only(&[
                "AdjustStock",
                "AdjustStockBatch",
                "GetProduct",
                "GetProducts",
                "ListCategories",
            ]),
        },
        Call {
            callee: "orders",
            methods: Methods::Only(&["CreateOrder", "CreateOrderBatch"]),
        },
        Call {
            callee: "payments",
            methods: Methods::Only(&[
                "CreatePayment",
                "ConfirmPayment",
                "GetPayment",
                "VoidPayment",
                "VerifyWebhook",
                "VerifyWebhookBatch",
            ]),
        },
    ],
    stateful: true,
    ..service("cart", 50053, "cart@storefront.iam.gserviceaccount.com")
};

pub const ORDERS: Program = Program {
    calls: &[
        Call {
            callee: "catalog",
            methods: Methods::Only(&["AdjustStock"]),
        },
        Call {
            callee: "payments",
            methods: Methods::Only(&[
                "GetPayment",
                "CapturePayment",
                "VoidPayment",
                "RefundPayment",
            ]),
        },
    ],
    stateful: true,
    ..service("orders", 50054, "orders@storefront.iam.gserviceaccount.com")
};

pub const SEARCH: Program = Program {
    calls: &[Call {
        callee: "catalog",
        methods: Methods::Only(&[
            "ListChanges",
            "ListCategories",
            "ExportProducts",
            "RequestReindex",
        ]),
    }],
    ..service("search", 50055, "search@storefront.iam.gserviceaccount.com")
};

pub const CONTENT: Program = service(
    "content",
    50056,
    "content@storefront.iam.gserviceaccount.com",
);

pub const GATEWAY: Program = Program {
    name: "gateway",
    role: Role::Gateway,
    port: 8080,
    dev_account: "gateway@storefront.iam.gserviceaccount.com",
    calls: &[
        all("catalog"),
        all("customers"),
        all("cart"),
        all("orders"),
        all("search"),
        all("content"),
        all("payments"),
    ],
    stateful: true,
};

/// The gateway's internal (fulfilment) port when it runs alone.
pub const GATEWAY_INTERNAL_PORT: u16 = 8081;

/// Every program, callees before their callers (the order they start in).
pub const PROGRAMS: &[Program] = &[
    DEV_ISSUER, CATALOG, CUSTOMERS, PAYMENTS, ORDERS, CART, SEARCH, CONTENT, GATEWAY,
];

/// The program named `name`.
pub fn program(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
}

impl Program {
    /// Where it listens when run alone: loopback, its port.
    pub fn local_addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Its URL when run alone.
    pub fn local_url(&self) -> String {
        format!("http://{}", self.local_addr())
    }

    /// The variable its callers find it by: `CATALOG_URL`.
    pub fn url_var(&self) -> String {
        format!("{}_URL", self.name.to_uppercase().replace('-', "_"))
    }

    /// The programs it calls, in the order declared.
    pub fn downstreams(&self) -> impl Iterator<Item = &'static Program> + '_ {
        self.calls.iter().filter_map(|c| program(c.callee))
    }

    /// The gRPC methods it may call on `callee`, sorted (`None`: every
    /// one, or `callee` is not one of its calls: see
    /// [`Program::downstreams`]).
    pub fn methods_on(&self, callee: &str) -> Option<Vec<String>> {
        let call = self.calls.iter().find(|c| c.callee == callee)?;
        match call.methods {
            Methods::All => None,
            Methods::Only(names) => {
                let mut names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
                names.sort();
                Some(names)
            }
        }
    }

    /// The programs that call it, with the methods each may call.
    pub fn callers(&self) -> impl Iterator<Item = (&'static Program, Methods)> + '_ {
        PROGRAMS.iter().filter_map(move |caller| {
            let call = caller.calls.iter().find(|c| c.callee == self.name)?;
            Some((caller, call.methods))
        })
    }

    /// Its `ALLOWED_CALLERS`: each caller's account (as `account` names
    /// it in an environment), `=Method|Method` where it may call only
    /// those. The gateway comes first.
    pub fn allowed_callers(&self, account: impl Fn(&Program) -> String) -> String {
        let mut callers: Vec<(&Program, Methods)> = self.callers().collect();
        callers.sort_by_key(|(p, _)| p.role != Role::Gateway);
        callers
            .iter()
            .map(|(caller, methods)| match methods {
                Methods::All => account(caller),
                Methods::Only(names) => format!("{}={}", account(caller), names.join("|")),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Its `ALLOWED_CALLERS` in local and development environments.
    pub fn dev_allowed_callers(&self) -> String {
        self.allowed_callers(|p| p.dev_account.to_owned())
    }

    /// Where it gets identity tokens for its dev account from the dev
    /// issuer served at `issuer` (a base URL).
    pub fn dev_token_url(&self, issuer: &str) -> String {
        crate::identity::dev_paths::account_url(issuer, self.dev_account)
    }
}

/// Where a caller finds a program it calls, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerConfig {
    pub name: &'static str,
    /// `<NAME>_URL`, by default its local URL.
    pub url: String,
    /// `<NAME>_AUDIENCE`: the audience of the identity tokens sent to it,
    /// by default its name.
    pub audience: String,
}

/// The gRPC name of a generated client method: `get_product` ->
/// `GetProduct`.
pub fn grpc_name(method: &str) -> String {
    method
        .split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

impl Program {
    /// How `env` says to reach this program.
    pub fn peer_config(&self, env: &EnvReader) -> Result<PeerConfig, ConfigError> {
        let upper = self.name.to_uppercase().replace('-', "_");
        Ok(PeerConfig {
            name: self.name,
            url: env.url(&self.url_var(), &self.local_url())?,
            audience: env.string(&format!("{upper}_AUDIENCE"), self.name),
        })
    }
}

/// The dev issuer's JWKS when it runs alone.
pub fn dev_jwks_url() -> String {
    format!(
        "{}{}",
        DEV_ISSUER.local_url(),
        crate::identity::dev_paths::JWKS_PATH
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn client_methods_have_their_grpc_names() {
        assert_eq!(super::grpc_name("get_product"), "GetProduct");
        assert_eq!(super::grpc_name("list_categories"), "ListCategories");
        assert_eq!(super::grpc_name("export_products"), "ExportProducts");
    }

    use super::*;

    #[test]
    fn every_call_names_a_program_and_callees_start_first() {
        for (i, p) in PROGRAMS.iter().enumerate() {
            assert_eq!(
                p.dev_account,
                format!("{}@{DEV_ACCOUNT_DOMAIN}", p.name),
                "{}",
                p.name
            );
            for call in p.calls {
                let callee = PROGRAMS.iter().position(|q| q.name == call.callee);
                assert!(
                    callee.is_some_and(|c| c < i),
                    "{} calls {}",
                    p.name,
                    call.callee
                );
            }
        }
        let ports: std::collections::BTreeSet<u16> = PROGRAMS.iter().map(|p| p.port).collect();
        assert_eq!(ports.len(), PROGRAMS.len(), "one port each");
    }

    #[test]
    fn allow_lists_come_from_the_calls() {
        assert_eq!(
            CATALOG.dev_allowed_callers(),
            "gateway@storefront.iam.gserviceaccount.com,\
             orders@storefront.iam.gserviceaccount.com=AdjustStock,\
             cart@storefront.iam.gserviceaccount.com=AdjustStock|AdjustStockBatch|GetProduct|GetProducts|ListCategories,\
             search@storefront.iam.gserviceaccount.com=ListChanges|ListCategories|ExportProducts|RequestReindex"
        );
        assert_eq!(
            ORDERS.dev_allowed_callers(),
            "gateway@storefront.iam.gserviceaccount.com,cart@storefront.iam.gserviceaccount.com=CreateOrder|CreateOrderBatch"
        );
        assert_eq!(CUSTOMERS.dev_allowed_callers(), GATEWAY.dev_account);
        assert_eq!(GATEWAY.dev_allowed_callers(), "");
        let cart: Vec<&str> = CART.downstreams().map(|p| p.name).collect();
        assert_eq!(cart, ["catalog", "orders", "payments"]);
        assert_eq!(DEV_ISSUER.url_var(), "DEV_ISSUER_URL");
    }
}

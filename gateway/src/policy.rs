//! What the edge does around a route besides its handler, declared once
//! and resolved once per request: the version layer finds the route's
//! policy (it alone knows the unversioned path) and puts it in the
//! request's extensions, where the rate-limit, deadline and caching layers
//! read it; the OpenAPI document reads the same table.

use std::time::Duration;

use axum::http::{Extensions, HeaderValue};

use crate::budget::Scope;

/// The edge's policy for a family of routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoutePolicy {
    /// Probes and the contract itself: no API version, no rate-limit
    /// budget spent. Every other route is a versioned, metered resource.
    pub operational: bool,
    /// A budget spent besides the client's IP and session ones.
    pub budget: Option<Scope>,
    /// The downstream deadline (`ROUTE_TIMEOUTS` folded in); none: the
    /// default.
    pub deadline: Option<Duration>,
    pub caching: Caching,
    /// Whether its mutating methods honour `Idempotency-Key`
    /// (`middleware::idempotency`): every resource's do; probes and the
    /// token endpoints do not (a replayed login or refresh would hand out
    /// tokens already used or ended).
    pub idempotent: bool,
}

impl RoutePolicy {
    /// The policy the edge resolved for this request; a request it never
    /// saw is a versioned, metered, private resource.
    pub fn of_request(extensions: &Extensions) -> RoutePolicy {
        extensions.get::<RoutePolicy>().copied().unwrap_or(RESOURCE)
    }
}

/// Who may keep a route's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caching {
    /// Anyone, shops' CDNs included: a public GET's answer carries
    /// `Cache-Control: public` with its group's freshness (`CACHE_*`), a
    /// strong `ETag`, and 304 answers a matching `If-None-Match`.
    Public(CacheGroup),
    /// No one: the answer belongs to a customer (`private, no-store`).
    Private,
    /// As the handler says (probes, the document).
    Unstated,
}

/// Resource groups with their own freshness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheGroup {
    Catalog,
    Search,
    Content,
}

/// Freshness of one resource group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePolicy {
    pub max_age: u32,
    pub stale_while_revalidate: u32,
}

impl CachePolicy {
    pub fn header(self) -> HeaderValue {
        let value = format!(
            "public, max-age={}, stale-while-revalidate={}",
            self.max_age, self.stale_while_revalidate
        );
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("no-store"))
    }
}

/// Freshness per resource group (`CACHE_*`).
#[derive(Debug, Clone, Copy)]
pub struct CachePolicies {
    /// Products, categories, collections, promotions.
    pub catalog: CachePolicy,
    /// Search and suggestions.
    pub search: CachePolicy,
    /// CMS documents.
    pub content: CachePolicy,
}

impl CachePolicies {
    pub fn of(&self, group: CacheGroup) -> CachePolicy {
        match group {
            CacheGroup::Catalog => self.catalog,
            CacheGroup::Search => self.search,
            CacheGroup::Content => self.content,
        }
    }
}

/// A versioned, metered resource with the default deadline, tied to a
/// customer unless listed as public.
const RESOURCE: RoutePolicy = RoutePolicy {
    operational: false,
    budget: None,
    deadline: None,
    caching: Caching::Private,
    idempotent: true,
};

const OPERATIONAL: RoutePolicy = RoutePolicy {
    operational: true,
    caching: Caching::Unstated,
    idempotent: false,
    ..RESOURCE
};

/// The Agentic Commerce Protocol facade: the protocol's own `API-Version`
/// and its agents' budgets (`acp::guard`), not the storefront's; its
/// writes keep their `Idempotency-Key` answers, per agent.
const AGENT: RoutePolicy = RoutePolicy {
    operational: true,
    idempotent: true,
    ..RESOURCE
};

/// Sessions: tokens are never replayed.
const TOKENS: RoutePolicy = RoutePolicy {
    idempotent: false,
    ..RESOURCE
};

const fn public(group: CacheGroup) -> RoutePolicy {
    RoutePolicy {
        caching: Caching::Public(group),
        ..RESOURCE
    }
}

/// How a path is matched.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Paths {
    /// This path only.
    Exact(String),
    /// Every path that starts with this.
    Prefix(String),
}

impl Paths {
    /// How closely this matches `path` (longer wins; a path's exact entry
    /// beats a prefix as long as it), if at all.
    fn fit(&self, path: &str) -> Option<usize> {
        match self {
            Paths::Exact(p) => (path == p).then(|| 2 * p.len() + 1),
            Paths::Prefix(p) => path.starts_with(p.as_str()).then(|| 2 * p.len()),
        }
    }

    fn text(&self) -> &str {
        let (Paths::Exact(p) | Paths::Prefix(p)) = self;
        p
    }
}

/// Every route not listed here has the `RESOURCE` policy.
fn built_in() -> Vec<(Paths, RoutePolicy)> {
    let exact = |p: &str| Paths::Exact(p.to_string());
    let prefix = |p: &str| Paths::Prefix(p.to_string());
    vec![
        (prefix("/health/"), OPERATIONAL),
        (exact("/openapi.json"), OPERATIONAL),
        // The reference and what leads to it: pages, not resources.
        (exact("/"), OPERATIONAL),
        (exact("/docs"), OPERATIONAL),
        (prefix("/docs/"), OPERATIONAL),
        // Pictures an <img> loads: no version header to send.
        (prefix("/media/demo/"), OPERATIONAL),
        // A provider's deliveries carry no API version: their signature is
        // their authentication, checked before anything is applied. The
        // test provider's 3-D Secure page is a page, not a resource.
        (prefix("/webhooks/"), OPERATIONAL),
        (prefix("/payments/test/"), OPERATIONAL),
        (prefix("/acp/"), AGENT),
        (exact("/.well-known/acp.json"), OPERATIONAL),
        // The MCP server: agents' keys and budgets (`acp::guard`); each
        // tool call is then its REST request, through every layer.
        (prefix("/mcp"), OPERATIONAL),
        // `/search` and `/search/suggestions`: the costliest public reads.
        (
            prefix("/search"),
            RoutePolicy {
                budget: Some(Scope::Search),
                deadline: Some(Duration::from_millis(2000)),
                ..public(CacheGroup::Search)
            },
        ),
        // Browsing: the same for every shopper.
        (prefix("/products"), public(CacheGroup::Catalog)),
        (prefix("/categories"), public(CacheGroup::Catalog)),
        (prefix("/collections"), public(CacheGroup::Catalog)),
        (prefix("/promotions"), public(CacheGroup::Catalog)),
        (exact("/markets"), public(CacheGroup::Catalog)),
        (prefix("/content/"), public(CacheGroup::Content)),
        (prefix("/auth/"), TOKENS),
        // A password check is slow on purpose (argon2id).
        (
            exact("/auth/login"),
            RoutePolicy {
                budget: Some(Scope::Login),
                deadline: Some(Duration::from_millis(3000)),
                ..TOKENS
            },
        ),
        // A guest session is state kept for every caller who asks.
        (
            exact("/auth/guest"),
            RoutePolicy {
                budget: Some(Scope::Guest),
                ..TOKENS
            },
        ),
        // Each checkout opened holds stock: per network and per session.
        (
            exact("/checkout"),
            RoutePolicy {
                budget: Some(Scope::Checkout),
                ..RESOURCE
            },
        ),
        // Sign-up hashes a password too, and must not become a free hasher.
        (
            exact("/customers"),
            RoutePolicy {
                budget: Some(Scope::SignUp),
                ..RESOURCE
            },
        ),
    ]
}

/// The edge's policies: one table, one matching rule (the closest entry
/// wins), deadlines from `ROUTE_TIMEOUTS` folded in at start.
#[derive(Debug, Clone)]
pub struct Policies {
    table: Vec<(Paths, RoutePolicy)>,
}

impl Default for Policies {
    fn default() -> Self {
        Self { table: built_in() }
    }
}

impl Policies {
    /// The built-in table with `deadlines` (`ROUTE_TIMEOUTS`: path prefix,
    /// deadline) folded in: a prefix sets the deadline of every entry under
    /// it (a longer prefix over a shorter one), and one naming no entry
    /// becomes an entry of its own, with the policy its path had.
    pub fn new(deadlines: &[(String, Duration)]) -> Self {
        let mut policies = Self::default();
        let mut by_length: Vec<&(String, Duration)> = deadlines.iter().collect();
        by_length.sort_by_key(|(prefix, _)| prefix.len());
        for (prefix, deadline) in by_length {
            if !policies.table.iter().any(|(p, _)| p.text() == prefix) {
                let inherited = policies.of(prefix);
                policies
                    .table
                    .push((Paths::Prefix(prefix.clone()), inherited));
            }
            for (paths, policy) in &mut policies.table {
                if paths.text().starts_with(prefix.as_str()) {
                    policy.deadline = Some(*deadline);
                }
            }
        }
        policies
    }

    /// The policy of the route serving `path` (unversioned: the version
    /// layer strips a path version first).
    pub fn of(&self, path: &str) -> RoutePolicy {
        self.table
            .iter()
            .filter_map(|(paths, policy)| Some((paths.fit(path)?, *policy)))
            .max_by_key(|(fit, _)| *fit)
            .map_or(RESOURCE, |(_, policy)| policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_get_their_budgets_and_deadlines() {
        let policies = Policies::default();
        let of = |path| policies.of(path);
        for path in ["/search", "/search/suggestions"] {
            assert_eq!(of(path).budget, Some(Scope::Search), "{path}");
            assert_eq!(of(path).deadline, Some(Duration::from_millis(2000)));
        }
        assert_eq!(of("/auth/login").budget, Some(Scope::Login));
        assert_eq!(
            of("/auth/login").deadline,
            Some(Duration::from_millis(3000))
        );
        assert_eq!(of("/customers").budget, Some(Scope::SignUp));
        assert_eq!(of("/auth/guest").budget, Some(Scope::Guest));
        assert_eq!(of("/checkout").budget, Some(Scope::Checkout));
        assert_eq!(of("/checkout/s-1/confirm").budget, None);
        // Writes honour Idempotency-Key; token endpoints and probes do not.
        for path in ["/carts", "/carts/1/line-items", "/checkout", "/customers"] {
            assert!(of(path).idempotent, "{path}");
        }
        for path in ["/auth/login", "/auth/token", "/auth/guest", "/health/ready"] {
            assert!(!of(path).idempotent, "{path}");
        }
        assert_eq!(of("/customers/me").budget, None);
        for path in ["/carts/1", "/orders/v2"] {
            assert_eq!(of(path), RESOURCE, "{path}");
        }
        for path in ["/auth/token", "/auth/login/x"] {
            assert_eq!(of(path), TOKENS, "{path}");
        }
        assert_eq!(of("/products/p-1/media"), public(CacheGroup::Catalog));
        assert_eq!(
            of("/content/footer").caching,
            Caching::Public(CacheGroup::Content)
        );
        for path in ["/health/live", "/health/ready", "/openapi.json"] {
            assert!(of(path).operational, "{path}");
        }
        assert!(!of("/openapi.jsonx").operational);
    }

    #[test]
    fn route_timeouts_fold_into_the_table() {
        let ms = Duration::from_millis;
        let policies = Policies::new(&[
            ("/products/p-1".to_string(), ms(100)),
            ("/search".to_string(), ms(900)),
            ("/carts".to_string(), ms(1500)),
            ("/".to_string(), ms(5000)),
        ]);
        // An entry named: its deadline changes, nothing else.
        let search = policies.of("/search/suggestions");
        assert_eq!(search.deadline, Some(ms(900)));
        assert_eq!(search.budget, Some(Scope::Search));
        // A new prefix keeps the policy its paths had.
        let carts = policies.of("/carts/1/line-items");
        assert_eq!(
            (carts.caching, carts.deadline),
            (Caching::Private, Some(ms(1500)))
        );
        let one = policies.of("/products/p-1/variants");
        assert_eq!(one.caching, Caching::Public(CacheGroup::Catalog));
        assert_eq!(one.deadline, Some(ms(100)));
        // The shortest prefix reaches every entry no longer one names.
        assert_eq!(policies.of("/products/p-2").deadline, Some(ms(5000)));
        assert_eq!(policies.of("/auth/login").deadline, Some(ms(5000)));
        assert!(policies.of("/health/ready").operational);
    }
}

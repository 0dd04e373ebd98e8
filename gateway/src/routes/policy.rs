//! What the edge does around a route besides its handler, declared once:
//! the version, rate-limit, deadline and caching layers and the OpenAPI
//! document read a route's policy from here rather than match paths of
//! their own.

use std::time::Duration;

use crate::ratelimit::Scope;

/// The edge's policy for a family of routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoutePolicy {
    /// Probes and the contract itself: no API version, no rate-limit
    /// budget spent. Every other route is a versioned, metered resource.
    pub operational: bool,
    /// A budget spent besides the client's IP and session ones.
    pub budget: Option<Scope>,
    /// The deadline, unless `ROUTE_TIMEOUTS` sets it; none: the default.
    pub deadline: Option<Duration>,
    pub caching: Caching,
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

/// A versioned, metered resource with the default deadline, tied to a
/// customer unless listed as public.
const RESOURCE: RoutePolicy = RoutePolicy {
    operational: false,
    budget: None,
    deadline: None,
    caching: Caching::Private,
};

const OPERATIONAL: RoutePolicy = RoutePolicy {
    operational: true,
    caching: Caching::Unstated,
    ..RESOURCE
};

const fn public(group: CacheGroup) -> RoutePolicy {
    RoutePolicy {
        caching: Caching::Public(group),
        ..RESOURCE
    }
}

/// How a path is matched.
enum Paths {
    /// This path only.
    Exact(&'static str),
    /// Every path that starts with this.
    Prefix(&'static str),
}

/// Every route not listed here has the `RESOURCE` policy.
const POLICIES: &[(Paths, RoutePolicy)] = &[
    (Paths::Prefix("/health/"), OPERATIONAL),
    (Paths::Exact("/openapi.json"), OPERATIONAL),
    // `/search` and `/search/suggestions`: the costliest public reads.
    (
        Paths::Prefix("/search"),
        RoutePolicy {
            budget: Some(Scope::Search),
            deadline: Some(Duration::from_millis(2000)),
            ..public(CacheGroup::Search)
        },
    ),
    // Browsing: the same for every shopper.
    (Paths::Prefix("/products"), public(CacheGroup::Catalog)),
    (Paths::Prefix("/categories"), public(CacheGroup::Catalog)),
    (Paths::Prefix("/collections"), public(CacheGroup::Catalog)),
    (Paths::Prefix("/promotions"), public(CacheGroup::Catalog)),
    (Paths::Prefix("/content/"), public(CacheGroup::Content)),
    // A password check is slow on purpose (argon2id).
    (
        Paths::Exact("/auth/login"),
        RoutePolicy {
            budget: Some(Scope::Login),
            deadline: Some(Duration::from_millis(3000)),
            ..RESOURCE
        },
    ),
    // Sign-up hashes a password too, and must not become a free hasher.
    (
        Paths::Exact("/customers"),
        RoutePolicy {
            budget: Some(Scope::SignUp),
            ..RESOURCE
        },
    ),
];

/// The policy of the route serving `path` (an unversioned path: `/v1`
/// prefixes are removed before routing).
pub fn of(path: &str) -> RoutePolicy {
    POLICIES
        .iter()
        .find(|(paths, _)| match paths {
            Paths::Exact(p) => path == *p,
            Paths::Prefix(p) => path.starts_with(p),
        })
        .map_or(RESOURCE, |(_, policy)| *policy)
}

/// The deadlines the policies set, as `ROUTE_TIMEOUTS` writes them
/// (`/search=2000,/auth/login=3000`): that variable's default.
pub fn default_deadlines() -> String {
    POLICIES
        .iter()
        .filter_map(|(paths, policy)| {
            let (Paths::Exact(p) | Paths::Prefix(p)) = paths;
            Some(format!("{p}={}", policy.deadline?.as_millis()))
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_get_their_budgets_and_deadlines() {
        for path in ["/search", "/search/suggestions"] {
            assert_eq!(of(path).budget, Some(Scope::Search), "{path}");
        }
        assert_eq!(of("/auth/login").budget, Some(Scope::Login));
        assert_eq!(of("/customers").budget, Some(Scope::SignUp));
        assert_eq!(of("/customers/me").budget, None);
        for path in ["/auth/token", "/auth/login/x", "/carts/1", "/orders/v2"] {
            assert_eq!(of(path), RESOURCE, "{path}");
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
        assert_eq!(default_deadlines(), "/search=2000,/auth/login=3000");
    }
}

//! The rate budgets a request may count against (`Scope`): named by the
//! route policies (`policy`), kept and spent by the rate limiter
//! (`ratelimit`).

/// The scopes limits apply in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Ip,
    Session,
    Search,
    Login,
    LoginEmail,
    /// Failed password checks per account over every network: the ceiling
    /// past which only the account's usual networks may try.
    LoginAccount,
    /// Sign-ups per client IP: each one hashes a password.
    SignUp,
    /// Guest sessions started per client IP: each one is state.
    Guest,
    /// Password changes tried per session: each one checks a password.
    PasswordChange,
    /// Checkouts opened per client network: each one holds stock.
    Checkout,
    /// Checkouts opened per shopper's session.
    CheckoutSession,
    /// A calling service account, on the internal port.
    Service,
    /// One maintenance route (reindex, reload) per calling account: the
    /// least interval between two runs.
    Maintenance,
    /// An agent of the Agentic Commerce Protocol facade (`/acp/`).
    Agent,
}

impl Scope {
    pub const ALL: [Scope; 14] = [
        Scope::Ip,
        Scope::Session,
        Scope::Search,
        Scope::Login,
        Scope::LoginEmail,
        Scope::LoginAccount,
        Scope::SignUp,
        Scope::Guest,
        Scope::PasswordChange,
        Scope::Checkout,
        Scope::CheckoutSession,
        Scope::Service,
        Scope::Maintenance,
        Scope::Agent,
    ];

    pub fn from_name(name: &str) -> Option<Scope> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// A route budget counted per client network (an IPv4 /24, an IPv6
    /// /64) rather than per address.
    pub fn per_network(self) -> bool {
        matches!(self, Scope::Checkout)
    }

    /// The budget a route's budget adds per shopper's session.
    pub fn per_session(self) -> Option<Scope> {
        match self {
            Scope::Checkout => Some(Scope::CheckoutSession),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scope::Ip => "ip",
            Scope::Session => "session",
            Scope::Search => "search",
            Scope::Login => "login",
            Scope::LoginEmail => "login-email",
            Scope::LoginAccount => "login-account",
            Scope::SignUp => "signup",
            Scope::Guest => "guest",
            Scope::PasswordChange => "password-change",
            Scope::Checkout => "checkout",
            Scope::CheckoutSession => "checkout-session",
            Scope::Service => "service",
            Scope::Maintenance => "maintenance",
            Scope::Agent => "agent",
        }
    }
}

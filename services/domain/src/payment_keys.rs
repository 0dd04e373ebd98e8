//! Idempotency keys a payment provider is called with, derived from what
//! the call is for: the same session (or order) and operation give the same
//! key, so a retried call, from any replica (the cart's, the orders'),
//! never charges or refunds twice.

/// The most a provider takes (Stripe: 255 characters).
pub const MAX_KEY_CHARS: usize = 255;

/// The key of `operation` (`create`, `confirm`, `capture`, `void`,
/// `refund-2`) on `subject` (a checkout session or an order id).
pub fn key(subject: &str, operation: &str) -> String {
    let key = format!("sf-{subject}-{operation}");
    key.chars().take(MAX_KEY_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_per_subject_and_operation() {
        assert_eq!(key("s-1", "create"), key("s-1", "create"));
        assert_ne!(key("s-1", "create"), key("s-1", "capture"));
        assert_ne!(key("s-1", "create"), key("s-2", "create"));
        assert_eq!(key(&"x".repeat(400), "void").chars().count(), MAX_KEY_CHARS);
    }
}

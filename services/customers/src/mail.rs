//! Mail to customers leaves through an outbox: a request queues a notice
//! and returns, and a worker hands it to the [`Mailer`], so neither the
//! answer nor its timing depends on the mail (sign-up answers a new and an
//! existing address alike, and only the mail tells them apart). The
//! mailer is a trait: the built-in one logs the notice (its kind and the
//! customer id, never the address); a shop plugs in its own sender.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::mpsc;

/// What a customer is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// A new account was made with this address.
    Welcome,
    /// Someone tried to sign up with the address of this existing account.
    SignUpAttempt,
}

impl Notice {
    pub fn name(self) -> &'static str {
        match self {
            Notice::Welcome => "welcome",
            Notice::SignUpAttempt => "sign-up-attempt",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Mail {
    pub notice: Notice,
    pub customer_id: String,
    pub to: String,
}

pub type Sending<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// Delivers one mail.
pub trait Mailer: Send + Sync + 'static {
    fn send<'a>(&'a self, mail: &'a Mail) -> Sending<'a>;
}

/// Logs each notice instead of sending it: the default.
pub struct LogMailer;

impl Mailer for LogMailer {
    fn send<'a>(&'a self, mail: &'a Mail) -> Sending<'a> {
        Box::pin(async move {
            tracing::info!(
                notice = mail.notice.name(),
                customer_id = %mail.customer_id,
                "mail notice (logged, not sent)"
            );
            Ok(())
        })
    }
}

/// Notices waiting for the mailer; bounded, so a flood of sign-ups cannot
/// grow memory (a notice that finds it full is dropped with a warning).
#[derive(Clone)]
pub struct Outbox {
    queue: mpsc::Sender<Mail>,
}

const CAPACITY: usize = 10_000;

impl Outbox {
    /// Starts the worker that hands queued mail to `mailer`.
    pub fn start(mailer: Arc<dyn Mailer>) -> Self {
        let (queue, mut waiting) = mpsc::channel::<Mail>(CAPACITY);
        tokio::spawn(async move {
            while let Some(mail) = waiting.recv().await {
                if let Err(e) = mailer.send(&mail).await {
                    tracing::warn!(notice = mail.notice.name(), customer_id = %mail.customer_id, error = %e, "mail not sent");
                }
            }
        });
        Self { queue }
    }

    pub fn post(&self, mail: Mail) {
        if let Err(e) = self.queue.try_send(mail) {
            tracing::warn!(error = %e, "mail outbox full; notice dropped");
        }
    }
}

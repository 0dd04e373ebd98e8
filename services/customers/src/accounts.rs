//! Sign-up and sessions: login, refresh with rotation and reuse detection,
//! logout.

use std::sync::Arc;
use std::time::Duration;
use storefront_proto::error::codes;

use serde::{Deserialize, Serialize};
use storefront_domain::customer_token::{revoked_session_key, revoked_token_key};
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::store::Store;
use storefront_proto::customers::v1::{
    ChangePasswordRequest, CustomerSummary, LoginRequest, LogoutRequest, Session, SignUpRequest,
};

use crate::mail::{Mail, Notice, Outbox};

use crate::captcha::{self, Captcha};
use crate::model::{CustomerDoc, PreferencesDoc, customer_key, email_key, now_ms};
use crate::password::{self, Hasher};
use crate::tokens::{Signer, refresh_key, refresh_token};
use crate::validate::Violations;
use storefront_proto::names::MAX_EMAIL_CHARS;

/// One refresh token: its session and whether it was already exchanged.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RefreshDoc {
    sid: String,
    customer_id: String,
    used: bool,
    /// A guest's session: refreshed as one, with no account behind it.
    #[serde(default)]
    guest: bool,
}

pub struct Accounts {
    pub store: Store,
    pub hasher: Hasher,
    pub signer: Arc<Signer>,
    pub captcha: Captcha,
    pub refresh_ttl: Duration,
    pub max_sessions: usize,
    pub outbox: Outbox,
    /// A new account prefers the shop's default currency.
    pub default_currency: String,
}

/// What [`Accounts::create`] did with an address.
#[derive(Debug)]
pub enum Created {
    New(CustomerSummary),
    /// The address already has this account (its id).
    Existing(String),
}

fn invalid_credentials() -> ServiceError {
    ServiceError::new(
        ErrorKind::Unauthenticated,
        "INVALID_CREDENTIALS",
        "email address or password is incorrect",
    )
}

fn invalid_refresh(code: &'static str) -> ServiceError {
    ServiceError::new(
        ErrorKind::Unauthenticated,
        code,
        "the refresh token is invalid, expired or revoked",
    )
}

impl Accounts {
    /// Signs up an address without saying whether it had an account: a
    /// new one is created, an existing one's owner is told by mail, and
    /// both answers are the same and cost the same (the password is hashed
    /// either way, the mail leaves through the outbox).
    pub async fn sign_up(&self, req: SignUpRequest) -> Result<(), ServiceError> {
        let mut v = Violations::default();
        let email = v.email(&req.email_address);
        if let Some(problem) = password::policy(&req.password, &email) {
            v.push(problem);
        }
        let first_name = v.text("firstName", &req.first_name, 100);
        let last_name = v.text("lastName", &req.last_name, 100);
        if req.captcha_response.trim().is_empty() {
            v.add(captcha::FIELD, codes::REQUIRED, "solve the captcha");
        }
        v.finish()?;
        self.captcha.verify(&req.captcha_response).await?;
        let to = email.clone();
        let (notice, customer_id) = match self
            .create(email, req.password, first_name, last_name)
            .await?
        {
            Created::New(summary) => (Notice::Welcome, summary.id),
            Created::Existing(id) => (Notice::SignUpAttempt, id),
        };
        self.outbox.post(Mail {
            notice,
            customer_id,
            to,
        });
        Ok(())
    }

    /// Creates a validated account (sign-up after its captcha, or seeding),
    /// unless the address has one.
    pub async fn create(
        &self,
        email: String,
        password: String,
        first_name: String,
        last_name: String,
    ) -> Result<Created, ServiceError> {
        let now = now_ms();
        let doc = CustomerDoc {
            id: uuid::Uuid::new_v4().to_string(),
            password_hash: self.hasher.hash(password).await?,
            email,
            first_name,
            last_name,
            phone: String::new(),
            date_of_birth: String::new(),
            created_ms: now,
            modified_ms: now,
            addresses: Vec::new(),
            preferences: PreferencesDoc {
                preferred_currency: self.default_currency.clone(),
                ..PreferencesDoc::default()
            },
        };
        let bytes = storefront_platform::store::encode(&doc)?;
        let created = self
            .store
            .insert_indexed(
                &customer_key(&doc.id),
                &bytes,
                &email_key(&doc.email),
                doc.id.as_bytes(),
            )
            .await?;
        if !created {
            let owner = self.store.get(&email_key(&doc.email)).await?;
            let owner = owner.map(|o| String::from_utf8_lossy(&o.value).into_owned());
            return Ok(Created::Existing(owner.unwrap_or_default()));
        }
        tracing::info!(customer_id = %doc.id, "customer signed up");
        Ok(Created::New(doc.summary()))
    }

    async fn find_by_email(&self, email: &str) -> Result<Option<CustomerDoc>, ServiceError> {
        let Some(id) = self.store.get(&email_key(email)).await? else {
            return Ok(None);
        };
        let id = String::from_utf8_lossy(&id.value).into_owned();
        Ok(self
            .store
            .get_json::<CustomerDoc>(&customer_key(&id))
            .await?
            .map(|c| c.value))
    }

    pub async fn login(&self, req: LoginRequest) -> Result<Session, ServiceError> {
        let mut v = Violations::default();
        if req.email_address.trim().is_empty() {
            v.add("emailAddress", codes::REQUIRED, "emailAddress is required");
        } else if req.email_address.trim().chars().count() > MAX_EMAIL_CHARS {
            v.add(
                "emailAddress",
                codes::TOO_LONG,
                format!("emailAddress must be at most {MAX_EMAIL_CHARS} characters"),
            );
        }
        if req.password.is_empty() {
            v.add("password", codes::REQUIRED, "password is required");
        }
        if req.captcha_response.trim().is_empty() {
            v.add(captcha::FIELD, codes::REQUIRED, "solve the captcha");
        }
        v.finish()?;
        self.captcha.verify(&req.captcha_response).await?;
        let customer = self
            .find_by_email(&req.email_address.trim().to_lowercase())
            .await?;
        let hash = customer.as_ref().map(|c| c.password_hash.clone());
        // Unknown emails verify against a dummy hash: same answer, same cost.
        if !self.hasher.verify(req.password, hash).await? {
            return Err(invalid_credentials());
        }
        let customer = customer.ok_or_else(invalid_credentials)?;
        let sid = uuid::Uuid::new_v4().to_string();
        self.admit_session(&customer.id, &sid, &req.user_agent)
            .await?;
        self.session(&customer.id, Some(customer.summary()), &sid)
            .await
    }

    /// A fresh access token and refresh token in session `sid` of
    /// `subject`: a customer's (`customer`), or a guest's (None).
    pub(crate) async fn session(
        &self,
        subject: &str,
        customer: Option<CustomerSummary>,
        sid: &str,
    ) -> Result<Session, ServiceError> {
        let guest = customer.is_none();
        let access = self.signer.access_token(subject, sid, guest)?;
        let refresh = refresh_token()?;
        let doc = RefreshDoc {
            sid: sid.to_string(),
            customer_id: subject.to_string(),
            used: false,
            guest,
        };
        self.store
            .insert_json(&refresh_key(&refresh), &doc, Some(self.refresh_ttl))
            .await?;
        Ok(Session {
            access_token: access,
            token_type: "Bearer".into(),
            expires_in: self.signer.access_ttl.as_secs() as i64,
            refresh_token: refresh,
            customer,
        })
    }

    pub(crate) async fn revoke_session(&self, sid: &str) -> Result<(), ServiceError> {
        self.store
            .insert(&revoked_session_key(sid), b"1", Some(self.refresh_ttl))
            .await?;
        Ok(())
    }

    /// Exchanges a refresh token for a new pair. A token is good once: the
    /// exchange is a compare-and-set, and whoever presents a used token (a
    /// replay, or the loser of a race) revokes the whole session.
    pub async fn refresh(&self, token: &str) -> Result<Session, ServiceError> {
        if token.is_empty() {
            return Err(invalid_refresh("INVALID_REFRESH_TOKEN"));
        }
        let key = refresh_key(token);
        let found = self
            .store
            .get_json::<RefreshDoc>(&key)
            .await?
            .ok_or_else(|| invalid_refresh("INVALID_REFRESH_TOKEN"))?;
        let doc = found.value;
        if self
            .store
            .exists_any(&[&revoked_session_key(&doc.sid)])
            .await?
        {
            return Err(invalid_refresh("SESSION_REVOKED"));
        }
        let used = RefreshDoc {
            used: true,
            ..doc.clone()
        };
        let won = !doc.used
            && self
                .store
                .replace_json(&key, found.version, &used, Some(self.refresh_ttl))
                .await?
                .is_some();
        if !won {
            tracing::warn!(session_id = %doc.sid, "refresh token reused, revoking its session");
            self.revoke_session(&doc.sid).await?;
            self.forget_sessions(&doc.customer_id, &[&doc.sid]).await?;
            return Err(invalid_refresh("REFRESH_TOKEN_REUSED"));
        }
        if doc.guest {
            return self.session(&doc.customer_id, None, &doc.sid).await;
        }
        let customer = self
            .store
            .get_json::<CustomerDoc>(&customer_key(&doc.customer_id))
            .await?
            .ok_or_else(|| invalid_refresh("INVALID_REFRESH_TOKEN"))?;
        self.touch_session(&doc.customer_id, &doc.sid).await;
        let summary = customer.value.summary();
        self.session(&summary.id, Some(summary.clone()), &doc.sid)
            .await
    }

    /// Sets a new password once the current one is checked, and ends
    /// every session of the customer but `req.current_session_id`.
    pub async fn change_password(&self, req: ChangePasswordRequest) -> Result<(), ServiceError> {
        let key = customer_key(&req.customer_id);
        let found = self
            .store
            .get_json::<CustomerDoc>(&key)
            .await?
            .ok_or_else(|| ServiceError::not_found("customer", &req.customer_id))?;
        let mut v = Violations::default();
        if req.current_password.is_empty() {
            v.add(
                "currentPassword",
                codes::REQUIRED,
                "currentPassword is required",
            );
        }
        if let Some(mut problem) = password::policy(&req.new_password, &found.value.email) {
            problem.field = "newPassword".into();
            v.push(problem);
        }
        v.finish()?;
        let verified = found.value.password_hash.clone();
        if !self
            .hasher
            .verify(req.current_password, Some(verified.clone()))
            .await?
        {
            let mut v = Violations::default();
            v.add(
                "currentPassword",
                codes::INVALID_VALUE,
                "the current password is not correct",
            );
            v.finish()?;
        }
        let hash = self.hasher.hash(req.new_password).await?;
        let updated = self
            .store
            .update_json(&key, 64, None, |doc: &mut CustomerDoc| {
                // Changed since it was checked: the check no longer holds.
                if doc.password_hash != verified {
                    return Err(ServiceError::new(
                        ErrorKind::Conflict,
                        codes::CONCURRENT_MODIFICATION,
                        "the password changed meanwhile; retry",
                    ));
                }
                doc.password_hash = hash.clone();
                doc.modified_ms = now_ms();
                Ok(())
            })
            .await?;
        if !matches!(updated, storefront_platform::store::Updated::Done { .. }) {
            return Err(ServiceError::new(
                ErrorKind::Conflict,
                codes::CONCURRENT_MODIFICATION,
                "the account is being changed; retry",
            ));
        }
        let ended = self
            .end_other_sessions(&req.customer_id, &req.current_session_id)
            .await?;
        tracing::info!(customer_id = %req.customer_id, ended, "password changed");
        Ok(())
    }

    /// Revokes the access token (until it would expire) and its session,
    /// and the session of the refresh token when one is given (a customer
    /// whose access token expired can still end the session).
    pub async fn logout(&self, req: LogoutRequest) -> Result<(), ServiceError> {
        let refreshed = if req.refresh_token.is_empty() {
            None
        } else {
            let found = self
                .store
                .get_json::<RefreshDoc>(&refresh_key(&req.refresh_token))
                .await?;
            Some(
                found
                    .ok_or_else(|| invalid_refresh("INVALID_REFRESH_TOKEN"))?
                    .value,
            )
        };
        if !req.token_id.is_empty() {
            let now = jsonwebtoken::get_current_timestamp() as i64;
            let left = Duration::from_secs(req.expires_at.saturating_sub(now).max(1) as u64);
            self.store
                .insert(&revoked_token_key(&req.token_id), b"1", Some(left))
                .await?;
            self.revoke_session(&req.session_id).await?;
            self.forget_sessions(&req.customer_id, &[&req.session_id])
                .await?;
        }
        if let Some(doc) = refreshed {
            self.revoke_session(&doc.sid).await?;
            self.forget_sessions(&doc.customer_id, &[&doc.sid]).await?;
        }
        tracing::info!(customer_id = %req.customer_id, "customer logged out");
        Ok(())
    }
}

//! Profile, address book and preferences: read-modify-write of the customer
//! document, made race-free by the store's compare-and-set.

use std::sync::Arc;

use storefront_domain::currencies::Currencies;
use storefront_domain::query;
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::store::{Store, Updated, Versioned};
use storefront_proto::common::v1::ListQuery;
use storefront_proto::customers::v1::{
    Address, AddressInput, Customer, ListAddressesResponse, Preferences, UpdateCustomerRequest,
};
use storefront_proto::error::codes;

use crate::model::{AddressDoc, AddressField, AddressSchema, CustomerDoc, customer_key, now_ms};
use crate::validate::{Violations, today};

/// Attempts of an update that carries no client version before giving up.
const MAX_ATTEMPTS: usize = 32;

pub struct Profiles {
    pub store: Store,
    pub max_addresses: usize,
    /// The shop's currencies (`MARKETS_FILE`, and any its markets add
    /// while it runs): what a preference may name.
    pub currencies: Arc<std::sync::RwLock<Arc<Currencies>>>,
}

fn concurrent() -> ServiceError {
    ServiceError::new(
        ErrorKind::Conflict,
        codes::CONCURRENT_MODIFICATION,
        "the customer was changed by another request; reload and retry",
    )
}

fn address_not_found(id: &str) -> ServiceError {
    ServiceError::not_found("address", id)
}

impl Profiles {
    async fn load(&self, customer_id: &str) -> Result<Versioned<CustomerDoc>, ServiceError> {
        self.store
            .get_json::<CustomerDoc>(&customer_key(customer_id))
            .await?
            .ok_or_else(|| ServiceError::not_found("customer", customer_id))
    }

    /// Applies `change` to the latest document until its write lands.
    async fn update<R>(
        &self,
        customer_id: &str,
        mut change: impl FnMut(&mut CustomerDoc) -> Result<R, ServiceError>,
    ) -> Result<(R, CustomerDoc, u64), ServiceError> {
        let key = customer_key(customer_id);
        let updated = self
            .store
            .update_json(&key, MAX_ATTEMPTS, None, |doc: &mut CustomerDoc| {
                let result = change(doc)?;
                doc.modified_ms = now_ms();
                Ok::<_, ServiceError>(result)
            })
            .await?;
        match updated {
            Updated::Done {
                result,
                value,
                version,
            } => Ok((result, value, version)),
            Updated::Missing => Err(ServiceError::not_found("customer", customer_id)),
            Updated::Contended => Err(concurrent()),
        }
    }

    pub async fn get(&self, customer_id: &str) -> Result<Customer, ServiceError> {
        let found = self.load(customer_id).await?;
        Ok(found.value.to_proto(found.version))
    }

    /// Replaces the profile if the client's `version` is still current.
    pub async fn update_profile(
        &self,
        req: UpdateCustomerRequest,
    ) -> Result<Customer, ServiceError> {
        let mut v = Violations::default();
        let first_name = v.text("firstName", &req.first_name, 100);
        let last_name = v.text("lastName", &req.last_name, 100);
        let phone = v.phone(&req.phone);
        let date_of_birth = v.date_of_birth(&req.date_of_birth, &today());
        if req.version < 1 {
            v.add("version", codes::REQUIRED, "send the version you read");
        }
        v.finish()?;
        let Versioned {
            version,
            value: mut doc,
        } = self.load(&req.customer_id).await?;
        if version != req.version as u64 {
            return Err(concurrent());
        }
        doc.first_name = first_name;
        doc.last_name = last_name;
        doc.phone = phone;
        doc.date_of_birth = date_of_birth;
        doc.modified_ms = now_ms();
        let next = self
            .store
            .replace_json(&customer_key(&req.customer_id), version, &doc, None)
            .await?
            .ok_or_else(concurrent)?;
        Ok(doc.to_proto(next))
    }

    pub async fn list_addresses(
        &self,
        customer_id: &str,
        query: &ListQuery,
    ) -> Result<ListAddressesResponse, ServiceError> {
        let doc = self.load(customer_id).await?.value;
        let page = query::run::<AddressSchema>(
            &doc.addresses,
            query,
            &(),
            &[(AddressField::CreatedAt, false)],
        )?;
        let addresses = page.items.iter().map(|a| a.to_proto()).collect();
        Ok(ListAddressesResponse {
            page: Some(page.info),
            addresses,
        })
    }

    pub async fn get_address(
        &self,
        customer_id: &str,
        address_id: &str,
    ) -> Result<Address, ServiceError> {
        let doc = self.load(customer_id).await?.value;
        doc.addresses
            .iter()
            .find(|a| a.id == address_id)
            .map(AddressDoc::to_proto)
            .ok_or_else(|| address_not_found(address_id))
    }

    pub fn validated(input: Option<AddressInput>) -> Result<AddressInput, ServiceError> {
        let mut v = Violations::default();
        let input = v.address(&input.unwrap_or_default());
        v.finish()?;
        Ok(input)
    }

    /// Adds an address; marking it default moves the default in the same write.
    pub async fn create_address(
        &self,
        customer_id: &str,
        input: Option<AddressInput>,
    ) -> Result<Address, ServiceError> {
        let input = Self::validated(input)?;
        let (address, _, _) = self
            .update(customer_id, |doc| {
                if doc.addresses.len() >= self.max_addresses {
                    return Err(ServiceError::new(
                        ErrorKind::Conflict,
                        "LIMIT_REACHED",
                        format!(
                            "at most {} addresses per customer; delete one first",
                            self.max_addresses
                        ),
                    ));
                }
                let address = AddressDoc::new(input.clone(), now_ms());
                let id = address.id.clone();
                doc.addresses.push(address);
                doc.keep_one_default(&id);
                Ok(id)
            })
            .await?;
        self.get_address(customer_id, &address).await
    }

    pub async fn replace_address(
        &self,
        customer_id: &str,
        address_id: &str,
        input: Option<AddressInput>,
    ) -> Result<Address, ServiceError> {
        let input = Self::validated(input)?;
        let (proto, _, _) = self
            .update(customer_id, |doc| {
                let address = doc
                    .addresses
                    .iter_mut()
                    .find(|a| a.id == address_id)
                    .ok_or_else(|| address_not_found(address_id))?;
                address.set(input.clone(), now_ms());
                doc.keep_one_default(address_id);
                Ok(doc
                    .addresses
                    .iter()
                    .find(|a| a.id == address_id)
                    .map(AddressDoc::to_proto))
            })
            .await?;
        proto.ok_or_else(|| address_not_found(address_id))
    }

    pub async fn delete_address(
        &self,
        customer_id: &str,
        address_id: &str,
    ) -> Result<(), ServiceError> {
        self.update(customer_id, |doc| {
            let before = doc.addresses.len();
            doc.addresses.retain(|a| a.id != address_id);
            if doc.addresses.len() == before {
                return Err(address_not_found(address_id));
            }
            Ok(())
        })
        .await?;
        Ok(())
    }

    pub async fn preferences(&self, customer_id: &str) -> Result<Preferences, ServiceError> {
        Ok(self.load(customer_id).await?.value.preferences.to_proto())
    }

    pub async fn update_preferences(
        &self,
        customer_id: &str,
        preferences: Option<Preferences>,
    ) -> Result<Preferences, ServiceError> {
        let p = preferences.unwrap_or_default();
        let mut v = Violations::default();
        let currencies = self
            .currencies
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        v.preferences(&p, &currencies);
        v.finish()?;
        let (_, doc, _) = self
            .update(customer_id, |doc| {
                doc.preferences.preferred_locale = p.preferred_locale.clone();
                doc.preferences.preferred_currency = p.preferred_currency.clone();
                doc.preferences.marketing_emails = p.marketing_emails;
                Ok(())
            })
            .await?;
        Ok(doc.preferences.to_proto())
    }
}

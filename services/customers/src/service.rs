//! The `storefront.customers.v1.CustomerService` gRPC implementation: each
//! method unpacks its request and hands it to accounts or profiles.

use std::sync::Arc;

use storefront_proto::customers::v1::customer_service_server::CustomerService;
use storefront_proto::customers::v1::*;
use tonic::{Request, Response, Status};

use crate::accounts::Accounts;
use crate::profile::Profiles;

#[derive(Clone)]
pub struct CustomersApi {
    pub accounts: Arc<Accounts>,
    pub profiles: Arc<Profiles>,
}

type Reply<T> = Result<Response<T>, Status>;

fn ok<T>(value: T) -> Reply<T> {
    Ok(Response::new(value))
}

#[tonic::async_trait]
impl CustomerService for CustomersApi {
    async fn sign_up(&self, request: Request<SignUpRequest>) -> Reply<SignUpResponse> {
        self.accounts.sign_up(request.into_inner()).await?;
        ok(SignUpResponse {})
    }

    async fn login(&self, request: Request<LoginRequest>) -> Reply<Session> {
        ok(self.accounts.login(request.into_inner()).await?)
    }

    async fn start_guest(&self, _: Request<StartGuestRequest>) -> Reply<Session> {
        ok(self.accounts.start_guest().await?)
    }

    async fn check_address(&self, request: Request<AddressInput>) -> Reply<AddressInput> {
        ok(Profiles::validated(Some(request.into_inner()))?)
    }

    async fn refresh(&self, request: Request<RefreshRequest>) -> Reply<Session> {
        ok(self
            .accounts
            .refresh(&request.into_inner().refresh_token)
            .await?)
    }

    async fn logout(&self, request: Request<LogoutRequest>) -> Reply<LogoutResponse> {
        self.accounts.logout(request.into_inner()).await?;
        ok(LogoutResponse {})
    }

    async fn list_sessions(
        &self,
        request: Request<ListSessionsRequest>,
    ) -> Reply<ListSessionsResponse> {
        let req = request.into_inner();
        let sessions = self
            .accounts
            .list_sessions(&req.customer_id, &req.current_session_id)
            .await?;
        ok(ListSessionsResponse { sessions })
    }

    async fn end_session(&self, request: Request<EndSessionRequest>) -> Reply<EndSessionResponse> {
        let req = request.into_inner();
        self.accounts
            .end_session(&req.customer_id, &req.session_id)
            .await?;
        ok(EndSessionResponse {})
    }

    async fn change_password(
        &self,
        request: Request<ChangePasswordRequest>,
    ) -> Reply<ChangePasswordResponse> {
        self.accounts.change_password(request.into_inner()).await?;
        ok(ChangePasswordResponse {})
    }

    async fn get_signing_keys(&self, _: Request<GetSigningKeysRequest>) -> Reply<SigningKeys> {
        ok(self.accounts.signer.signing_keys())
    }

    async fn get_customer(&self, request: Request<GetCustomerRequest>) -> Reply<Customer> {
        ok(self.profiles.get(&request.into_inner().customer_id).await?)
    }

    async fn update_customer(&self, request: Request<UpdateCustomerRequest>) -> Reply<Customer> {
        ok(self.profiles.update_profile(request.into_inner()).await?)
    }

    async fn list_addresses(
        &self,
        request: Request<ListAddressesRequest>,
    ) -> Reply<ListAddressesResponse> {
        let req = request.into_inner();
        ok(self
            .profiles
            .list_addresses(&req.customer_id, &req.query.unwrap_or_default())
            .await?)
    }

    async fn create_address(&self, request: Request<CreateAddressRequest>) -> Reply<Address> {
        let req = request.into_inner();
        ok(self
            .profiles
            .create_address(&req.customer_id, req.address)
            .await?)
    }

    async fn get_address(&self, request: Request<GetAddressRequest>) -> Reply<Address> {
        let req = request.into_inner();
        ok(self
            .profiles
            .get_address(&req.customer_id, &req.address_id)
            .await?)
    }

    async fn replace_address(&self, request: Request<ReplaceAddressRequest>) -> Reply<Address> {
        let req = request.into_inner();
        ok(self
            .profiles
            .replace_address(&req.customer_id, &req.address_id, req.address)
            .await?)
    }

    async fn delete_address(
        &self,
        request: Request<DeleteAddressRequest>,
    ) -> Reply<DeleteAddressResponse> {
        let req = request.into_inner();
        self.profiles
            .delete_address(&req.customer_id, &req.address_id)
            .await?;
        ok(DeleteAddressResponse {})
    }

    async fn get_preferences(&self, request: Request<GetPreferencesRequest>) -> Reply<Preferences> {
        ok(self
            .profiles
            .preferences(&request.into_inner().customer_id)
            .await?)
    }

    async fn update_preferences(
        &self,
        request: Request<UpdatePreferencesRequest>,
    ) -> Reply<Preferences> {
        let req = request.into_inner();
        ok(self
            .profiles
            .update_preferences(&req.customer_id, req.preferences)
            .await?)
    }
}

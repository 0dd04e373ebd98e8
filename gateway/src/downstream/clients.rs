//! One typed client per downstream: every method the gateway calls, with
//! its retry policy declared beside it. A handler's call is one line,
//! `ds.catalog().get_product(&ctx, message).await?`; the request context,
//! breaker, deadline and retries are the same for all of them, and for
//! the services' own calls (`storefront_platform::client::call`).

use storefront_proto::cart::v1 as cart;
use storefront_proto::cart::v1::cart_service_client::CartServiceClient;
use storefront_proto::catalog::v1 as catalog;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::content::v1 as content;
use storefront_proto::content::v1::content_service_client::ContentServiceClient;
use storefront_proto::customers::v1 as customers;
use storefront_proto::customers::v1::customer_service_client::CustomerServiceClient;
use storefront_proto::encoded;
use storefront_proto::orders::v1 as orders;
use storefront_proto::orders::v1::order_service_client::OrderServiceClient;
use storefront_proto::payments::v1 as payments;
use storefront_proto::payments::v1::payment_service_client::PaymentServiceClient;
use storefront_proto::search::v1 as search;
use storefront_proto::search::v1::search_service_client::SearchServiceClient;

use storefront_platform::client::call::{CallError, CallScope, Policy};
use storefront_platform::client::raw;
use storefront_platform::typed_client;

use storefront_proto::cart::v1::cart_service_server;
use storefront_proto::catalog::v1::catalog_service_server;
use storefront_proto::content::v1::content_service_server;
use storefront_proto::customers::v1::customer_service_server;
use storefront_proto::orders::v1::order_service_server;
use storefront_proto::payments::v1::payment_service_server;
use storefront_proto::search::v1::search_service_server;

use super::Downstream;
use crate::config::DownstreamSettings;

/// The gateway's downstreams, declared once: for each, its typed client
/// and the accessor that hands one out, and together the [`Downstreams`]
/// that hold their callers (each asked about its generated gRPC
/// `SERVICE_NAME` for health), built from the configuration of the
/// program of the topology with the field's name.
macro_rules! clients {
    ($(
        $(#[$doc:meta])*
        $client:ident = $field:ident via $grpc:ident of $server:ident { $($methods:tt)* }
    )*) => {
        $(
            typed_client! {
                $(#[$doc])*
                pub $client via $grpc { $($methods)* }
            }

            impl Downstreams {
                pub fn $field(&self) -> $client<'_> {
                    $client(&self.$field.caller)
                }
            }
        )*

        /// One caller per downstream service.
        #[derive(Clone)]
        pub struct Downstreams {
            $(pub $field: Downstream,)*
        }

        impl Downstreams {
            pub fn new(config: &DownstreamSettings) -> anyhow::Result<Self> {
                let make = Downstream::maker(config);
                Ok(Self {
                    $($field: make($server::SERVICE_NAME, stringify!($field))?,)*
                })
            }

            /// Every downstream, in declaration order.
            pub fn all(&self) -> Vec<&Downstream> {
                vec![$(&self.$field),*]
            }

            /// The downstreams' program names, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];
        }
    };
}

clients! {
    /// Products, categories and collections.
    Catalog = catalog via CatalogServiceClient of catalog_service_server {
        Read list_products(catalog::ListProductsRequest) -> encoded::ListProductsResponse;
        Read get_summary_dictionary(catalog::GetSummaryDictionaryRequest) -> catalog::SummaryDictionary;
        Read get_product(catalog::GetProductRequest) -> catalog::Product;
        Read list_categories(catalog::ListCategoriesRequest) -> catalog::ListCategoriesResponse;
        Read get_category(catalog::GetCategoryRequest) -> catalog::Category;
        Read get_category_tree(catalog::GetCategoryTreeRequest) -> catalog::CategoryTree;
        Read list_collections(catalog::ListCollectionsRequest) -> catalog::ListCollectionsResponse;
        Read get_collection(catalog::GetCollectionRequest) -> catalog::Collection;
        Write put_product(catalog::PutProductRequest) -> catalog::ChangeReply;
        Write delete_product(catalog::DeleteProductRequest) -> catalog::ChangeReply;
        Write set_stock(catalog::SetStockRequest) -> catalog::ChangeReply;
    }

    /// Accounts, sessions, profiles, addresses and preferences.
    Customers = customers via CustomerServiceClient of customer_service_server {
        Write sign_up(customers::SignUpRequest) -> customers::SignUpResponse;
        Write login(customers::LoginRequest) -> customers::Session;
        Write start_guest(customers::StartGuestRequest) -> customers::Session;
        Read check_address(customers::AddressInput) -> customers::AddressInput;
        Write refresh(customers::RefreshRequest) -> customers::Session;
        Write logout(customers::LogoutRequest) -> customers::LogoutResponse;
        Read get_signing_keys(customers::GetSigningKeysRequest) -> customers::SigningKeys;
        Read get_customer(customers::GetCustomerRequest) -> customers::Customer;
        Write update_customer(customers::UpdateCustomerRequest) -> customers::Customer;
        Read list_addresses(customers::ListAddressesRequest) -> customers::ListAddressesResponse;
        Write create_address(customers::CreateAddressRequest) -> customers::Address;
        Read get_address(customers::GetAddressRequest) -> customers::Address;
        Write replace_address(customers::ReplaceAddressRequest) -> customers::Address;
        Write delete_address(customers::DeleteAddressRequest) -> customers::DeleteAddressResponse;
        Read get_preferences(customers::GetPreferencesRequest) -> customers::Preferences;
        Write update_preferences(customers::UpdatePreferencesRequest) -> customers::Preferences;
        Read list_sessions(customers::ListSessionsRequest) -> customers::ListSessionsResponse;
        Write end_session(customers::EndSessionRequest) -> customers::EndSessionResponse;
        Write change_password(customers::ChangePasswordRequest) -> customers::ChangePasswordResponse;
    }

    /// Carts, promotions, markets and checkout sessions.
    Cart = cart via CartServiceClient of cart_service_server {
        Write create_cart(cart::CreateCartRequest) -> cart::Cart;
        Read get_cart(cart::GetCartRequest) -> cart::Cart;
        Write delete_cart(cart::DeleteCartRequest) -> cart::DeleteCartResponse;
        Write set_promotions(cart::SetPromotionsRequest) -> cart::SetPromotionsResponse;
        Read get_markets(cart::GetMarketsRequest) -> cart::MarketsDocument;
        Write set_markets(cart::SetMarketsRequest) -> cart::MarketsDocument;
        Write update_cart(cart::UpdateCartRequest) -> cart::Cart;
        Write add_line_item(cart::AddLineItemRequest) -> cart::Cart;
        Write update_line_item(cart::UpdateLineItemRequest) -> cart::Cart;
        Write remove_line_item(cart::RemoveLineItemRequest) -> cart::Cart;
        Read list_promotions(cart::ListPromotionsRequest) -> cart::ListPromotionsResponse;
        Write create_checkout(cart::CreateCheckoutRequest) -> cart::CheckoutSession;
        Read get_checkout(cart::GetCheckoutRequest) -> cart::CheckoutSession;
        Write confirm_checkout(cart::ConfirmCheckoutRequest) -> cart::ConfirmCheckoutReply;
        Write update_checkout(cart::UpdateCheckoutRequest) -> cart::CheckoutSession;
        Write extend_checkout(cart::ExtendCheckoutRequest) -> cart::CheckoutSession;
        Write release_checkout(cart::ReleaseCheckoutRequest) -> cart::CheckoutSession;
        Write pay_checkout(cart::PayCheckoutRequest) -> cart::PayCheckoutReply;
        Write payment_changed(cart::PaymentChangedRequest) -> cart::PaymentChangedReply;
        Write payment_webhook(payments::VerifyWebhookRequest) -> cart::PaymentWebhookReply;
        Write merge_carts(cart::MergeCartsRequest) -> cart::MergeReport;
    }

    /// Orders and their lifecycle.
    Orders = orders via OrderServiceClient of order_service_server {
        Read get_order(orders::GetOrderRequest) -> orders::Order;
        Read list_orders(orders::ListOrdersRequest) -> orders::ListOrdersResponse;
        Write cancel_order(orders::CancelOrderRequest) -> orders::Order;
        Write advance_order(orders::AdvanceOrderRequest) -> orders::Order;
        Read list_order_updates(orders::ListOrderUpdatesRequest) -> orders::ListOrderUpdatesResponse;
        Read list_order_events(orders::ListOrderEventsRequest) -> orders::ListOrderEventsResponse;
        Read list_webhook_deliveries(orders::ListWebhookDeliveriesRequest) -> orders::ListWebhookDeliveriesResponse;
    }

    /// Full-text search and suggestions.
    Search = search via SearchServiceClient of search_service_server {
        Read search(search::SearchRequest) -> encoded::SearchResponse;
        Read suggest(search::SuggestRequest) -> encoded::SuggestResponse;
        Write reindex(search::ReindexRequest) -> search::ReindexResponse;
    }

    /// Footer, pages and banners.
    Content = content via ContentServiceClient of content_service_server {
        Read get_footer(content::LocalizedRequest) -> content::Document;
        Read get_page(content::GetPageRequest) -> content::Document;
        Read list_banners(content::LocalizedRequest) -> content::BannerList;
        Write reload(content::ReloadRequest) -> content::ReloadResponse;
    }

    /// Provider webhooks verified, and the test provider's 3-D Secure page.
    Payments = payments via PaymentServiceClient of payment_service_server {
        Read verify_webhook(payments::VerifyWebhookRequest) -> payments::WebhookEvent;
        Write complete_action(payments::CompleteActionRequest) -> payments::Payment;
    }
}

/// Methods whose replies the gateway writes out without reading them
/// (`transcode`): the same calls as the typed client's (a test holds the
/// names to its list, which the allow-lists follow), with the reply kept
/// as the bytes it arrived in.
macro_rules! undecoded {
    ($client:ident of $service:literal {
        $( $policy:ident $method:ident = $name:literal ($request:ty); )*
    }) => {
        impl $client<'_> {
            /// The gRPC names of the undecoded methods.
            #[cfg(test)]
            pub const UNDECODED: &'static [&'static str] = &[$($name),*];

            $(
                pub async fn $method(
                    self,
                    scope: &impl CallScope,
                    message: $request,
                ) -> Result<bytes::Bytes, CallError> {
                    let caller = self.0;
                    let method = ($service, $name, concat!("/", $service, "/", $name));
                    caller
                        .call(scope, Policy::$policy, message, |request| {
                            raw::unary(caller.peer.channel.clone(), request, method)
                        })
                        .await
                }
            )*
        }
    };
}

undecoded!(Cart of "storefront.cart.v1.CartService" {
    Write create_cart_bytes = "CreateCart" (cart::CreateCartRequest);
    Read get_cart_bytes = "GetCart" (cart::GetCartRequest);
    Write update_cart_bytes = "UpdateCart" (cart::UpdateCartRequest);
    Write add_line_item_bytes = "AddLineItem" (cart::AddLineItemRequest);
    Write update_line_item_bytes = "UpdateLineItem" (cart::UpdateLineItemRequest);
    Write remove_line_item_bytes = "RemoveLineItem" (cart::RemoveLineItemRequest);
});

#[cfg(test)]
mod tests {
    use storefront_platform::topology::GATEWAY;

    use super::{Cart, Downstreams};

    /// The downstreams declared here are the gateway's calls in the
    /// topology (which grants its account and renders the chart's
    /// allow-lists), in the same order.
    #[test]
    fn the_downstreams_are_the_topology_s() {
        let topology: Vec<&str> = GATEWAY.downstreams().map(|p| p.name).collect();
        assert_eq!(Downstreams::NAMES, topology.as_slice());
    }

    /// A method called undecoded is one of its typed client's, with the
    /// reply that client declares (the transcoder reads that message).
    #[test]
    fn undecoded_methods_are_the_typed_client_s() {
        let typed = Cart::methods();
        for name in Cart::UNDECODED {
            assert!(
                typed.iter().any(|m| m == name),
                "{name} is not in {typed:?}"
            );
        }
    }
}

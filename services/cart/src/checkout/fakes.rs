//! In-crate fakes of the cart service's peers, for the checkout's unit
//! tests: a catalog that prices one product and keeps its stock, applying
//! each stock operation once by its id as the real one does, and an orders
//! service that keeps each order once by its id. Either can be taken down;
//! the orders service can be made to refuse. Payments are the payments
//! service's own code with its test provider, called in process.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use storefront_platform::client::call::CallError;
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::store::Store;
use storefront_proto::cart::v1::{AddLineItemRequest, Cart};
use storefront_proto::catalog::v1::{
    AdjustStockReply, AdjustStockRequest, Availability, GetProductRequest, GetProductsRequest,
    GetProductsResponse, Product, ProductStatus, StockAction, StockLine, StockShortage, Variant,
};
use storefront_proto::catalog::v1::{Category, ListCategoriesRequest, ListCategoriesResponse};
use storefront_proto::common::v1::{Money, ResourceMeta};
use storefront_proto::orders::v1::{CreateOrderRequest, Order};
use storefront_proto::payments::v1::payment_service_server::PaymentService;
use storefront_proto::payments::v1::{
    ConfirmPaymentRequest, CreatePaymentRequest, GetPaymentRequest, MovePaymentRequest, Payment,
    VerifyWebhookBatchReply, VerifyWebhookBatchRequest, VerifyWebhookRequest, WebhookEvent,
};
use tonic::Status;

use super::Checkout;
use crate::carts::Carts;
use crate::clients::{Answer, CatalogPeer, OrdersPeer, PaymentsPeer};
use crate::config::CartLimits;
use crate::promotions::Catalogue;

pub const PRODUCT: &str = "p-1";
pub const SKU: &str = "SKU-1";
/// The product's category, `kids-toys`.
pub const CATEGORY: &str = "c-toys";

fn down(peer: &str) -> CallError {
    CallError::Status(Status::unavailable(format!("{peer} is down")))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One product, variant 1, priced in AUD, with `available` units.
pub struct FakeCatalog {
    pub cents: Mutex<i64>,
    pub available: Mutex<u32>,
    /// Each stock operation applied, by id, with its lines' units.
    pub applied: Mutex<HashMap<String, (StockAction, u32)>>,
    pub down: AtomicBool,
    /// Stock operations fail; prices are still given.
    pub stock_down: AtomicBool,
    /// Each `GetProducts` call's `prices_only`, in order.
    pub prices_only: Mutex<Vec<bool>>,
}

impl FakeCatalog {
    fn product(&self) -> Product {
        let price = Money {
            currency_code: "AUD".into(),
            cent_amount: *lock(&self.cents),
            fraction_digits: 2,
        };
        let quantity = *lock(&self.available);
        Product {
            meta: Some(ResourceMeta {
                id: PRODUCT.into(),
                ..Default::default()
            }),
            status: ProductStatus::Active as i32,
            category_ids: vec![CATEGORY.into()],
            variants: vec![Variant {
                id: 1,
                sku: SKU.into(),
                prices: vec![price],
                availability: Some(Availability {
                    in_stock: quantity > 0,
                    quantity,
                    held: 0,
                }),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// How many times an operation of `action` was applied.
    pub fn count(&self, action: StockAction) -> usize {
        lock(&self.applied)
            .values()
            .filter(|(a, _)| *a == action)
            .count()
    }

    fn adjust(&self, message: AdjustStockRequest) -> Result<AdjustStockReply, CallError> {
        if self.down.load(Ordering::SeqCst) || self.stock_down.load(Ordering::SeqCst) {
            return Err(down("catalog"));
        }
        let action = StockAction::try_from(message.action).unwrap_or_default();
        let mut applied = lock(&self.applied);
        if applied.contains_key(&message.operation_id) {
            return Ok(AdjustStockReply::default());
        }
        // A release or a sale settles what its hold held: nothing if the
        // hold never happened.
        let units: u32 = match action {
            StockAction::Hold => message.lines.iter().map(|l: &StockLine| l.quantity).sum(),
            _ => applied.get(&message.hold_id).map_or(0, |(_, units)| *units),
        };
        let mut available = lock(&self.available);
        match action {
            StockAction::Hold if units > *available => {
                let shortages = vec![StockShortage {
                    sku: SKU.into(),
                    requested: units,
                    available: *available,
                }];
                return Ok(AdjustStockReply {
                    shortages,
                    ..Default::default()
                });
            }
            StockAction::Hold => *available -= units,
            StockAction::Release => *available += units,
            _ => {}
        }
        applied.insert(message.operation_id, (action, units));
        Ok(AdjustStockReply::default())
    }
}

impl CatalogPeer for FakeCatalog {
    fn get_product(&self, _message: GetProductRequest) -> Answer<'_, Product> {
        let answer = if self.down.load(Ordering::SeqCst) {
            Err(down("catalog"))
        } else {
            Ok(self.product())
        };
        Box::pin(async move { answer })
    }

    fn get_products(&self, message: GetProductsRequest) -> Answer<'_, GetProductsResponse> {
        if let Ok(mut asked) = self.prices_only.lock() {
            asked.push(message.prices_only);
        }
        let answer = if self.down.load(Ordering::SeqCst) {
            Err(down("catalog"))
        } else {
            Ok(GetProductsResponse {
                products: vec![self.product()],
            })
        };
        Box::pin(async move { answer })
    }

    fn adjust_stock(&self, message: AdjustStockRequest) -> Answer<'_, AdjustStockReply> {
        let answer = self.adjust(message);
        Box::pin(async move { answer })
    }

    /// One category, `kids-toys`, the product's.
    fn list_categories(
        &self,
        _message: ListCategoriesRequest,
    ) -> Answer<'_, ListCategoriesResponse> {
        let answer = if self.down.load(Ordering::SeqCst) {
            Err(down("catalog"))
        } else {
            Ok(ListCategoriesResponse {
                categories: vec![Category {
                    meta: Some(ResourceMeta {
                        id: CATEGORY.into(),
                        ..Default::default()
                    }),
                    key: "kids-toys".into(),
                    ..Default::default()
                }],
                ..Default::default()
            })
        };
        Box::pin(async move { answer })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrdersMode {
    Up,
    Down,
    /// Refuses every order as the orders service refuses a bad one.
    Refusing,
}

pub struct FakeOrders {
    pub orders: Mutex<HashMap<String, CreateOrderRequest>>,
    pub mode: Mutex<OrdersMode>,
    pub calls: AtomicUsize,
}

impl FakeOrders {
    pub fn set(&self, mode: OrdersMode) {
        *lock(&self.mode) = mode;
    }

    pub fn made(&self) -> usize {
        lock(&self.orders).len()
    }
}

impl OrdersPeer for FakeOrders {
    fn create_order(&self, message: CreateOrderRequest) -> Answer<'_, Order> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let answer = match *lock(&self.mode) {
            OrdersMode::Down => Err(down("orders")),
            OrdersMode::Refusing => {
                let refused = ServiceError::new(
                    ErrorKind::BadRequest,
                    "INVALID_ORDER",
                    "an order needs an id, a customer and lines",
                );
                Err(CallError::Status(refused.into()))
            }
            OrdersMode::Up => {
                let id = message.order_id.clone();
                lock(&self.orders).entry(id).or_insert(message);
                Ok(Order::default())
            }
        };
        Box::pin(async move { answer })
    }
}

/// The payments service's gRPC implementation over its test provider,
/// called without the network; it can be taken down.
pub struct InProcessPayments {
    pub api: storefront_payments::service::PaymentsApi,
    pub down: AtomicBool,
}

impl InProcessPayments {
    fn new() -> Self {
        let test = Arc::new(storefront_payments::test_provider::TestProvider::new(
            "whsec_unit",
        ));
        Self {
            api: storefront_payments::service::PaymentsApi {
                provider: test.clone(),
                test: Some(test),
            },
            down: AtomicBool::new(false),
        }
    }

    fn answer<'a, T: Send + 'a>(
        &'a self,
        call: impl std::future::Future<Output = Result<tonic::Response<T>, Status>> + Send + 'a,
    ) -> Answer<'a, T> {
        Box::pin(async move {
            if self.down.load(Ordering::SeqCst) {
                return Err(down("payments"));
            }
            call.await
                .map(tonic::Response::into_inner)
                .map_err(CallError::Status)
        })
    }
}

impl PaymentsPeer for InProcessPayments {
    fn create_payment(&self, message: CreatePaymentRequest) -> Answer<'_, Payment> {
        self.answer(self.api.create_payment(tonic::Request::new(message)))
    }

    fn confirm_payment(&self, message: ConfirmPaymentRequest) -> Answer<'_, Payment> {
        self.answer(self.api.confirm_payment(tonic::Request::new(message)))
    }

    fn get_payment(&self, message: GetPaymentRequest) -> Answer<'_, Payment> {
        self.answer(self.api.get_payment(tonic::Request::new(message)))
    }

    fn void_payment(&self, message: MovePaymentRequest) -> Answer<'_, Payment> {
        self.answer(self.api.void_payment(tonic::Request::new(message)))
    }

    fn verify_webhook(&self, message: VerifyWebhookRequest) -> Answer<'_, WebhookEvent> {
        self.answer(self.api.verify_webhook(tonic::Request::new(message)))
    }

    fn verify_webhook_batch(
        &self,
        message: VerifyWebhookBatchRequest,
    ) -> Answer<'_, VerifyWebhookBatchReply> {
        self.answer(self.api.verify_webhook_batch(tonic::Request::new(message)))
    }
}

/// The checkout with its carts on the in-memory store and its peers faked.
pub struct Mesh {
    pub checkout: Arc<Checkout>,
    pub catalog: Arc<FakeCatalog>,
    pub orders: Arc<FakeOrders>,
    pub payments: Arc<InProcessPayments>,
}

pub fn mesh(available: u32) -> Mesh {
    let store = Store::memory();
    let catalog = Arc::new(FakeCatalog {
        cents: Mutex::new(1_000),
        available: Mutex::new(available),
        applied: Mutex::default(),
        down: AtomicBool::new(false),
        stock_down: AtomicBool::new(false),
        prices_only: Mutex::default(),
    });
    let orders = Arc::new(FakeOrders {
        orders: Mutex::default(),
        mode: Mutex::new(OrdersMode::Up),
        calls: AtomicUsize::new(0),
    });
    let carts = Arc::new(Carts {
        store: store.clone(),
        catalog: catalog.clone(),
        recent_products: storefront_platform::recent::Recent::new(Duration::ZERO, 1),
        promotions: Arc::new(RwLock::new(Catalogue::new(Vec::new()))),
        limits: CartLimits::default(),
        markets: crate::market_set::Markets::demo(),
        category_keys: Arc::new(crate::category_keys::CategoryKeys::new(catalog.clone())),
    });
    let ttl = Duration::from_secs(900);
    let markets = carts.markets.clone();
    let payments = Arc::new(InProcessPayments::new());
    let checkout = Arc::new(Checkout {
        holds: crate::holds::Holds {
            store: store.clone(),
            catalog: catalog.clone(),
            ledgers: crate::hold_ledgers::Ledgers::new(store.clone(), Default::default(), ttl),
        },
        store,
        carts,
        orders: orders.clone(),
        payments: payments.clone(),
        markets,
        ttl,
        guest_ttl: Duration::from_secs(600),
        confirms: Default::default(),
    });
    Mesh {
        checkout,
        catalog,
        orders,
        payments,
    }
}

impl Mesh {
    /// A cart of customer `c-1` with `quantity` of the product.
    pub async fn cart(&self, quantity: u32) -> Cart {
        let carts = &self.checkout.carts;
        let cart = carts.create("c-1", "AUD").await.expect("a cart");
        let cart_id = cart.meta.map(|m| m.id).unwrap_or_default();
        let line = AddLineItemRequest {
            customer_id: "c-1".into(),
            cart_id: cart_id.clone(),
            product_id: PRODUCT.into(),
            variant_id: 1,
            quantity,
        };
        carts.add_line(line).await.expect("a line");
        carts.get("c-1", &cart_id).await.expect("the cart")
    }
}

impl Mesh {
    /// Pays session `id` of `c-1` with the test card that authorizes.
    pub async fn pay(&self, id: &str) -> storefront_proto::cart::v1::PayCheckoutReply {
        let paid = self.checkout.pay("c-1", id, "pm_card_visa").await;
        paid.expect("paid")
    }

    /// Extends session `id` of `c-1` a moment after its last step (a step
    /// in the same millisecond would change nothing).
    pub async fn extend_later(&self, id: &str) {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        self.checkout.extend("c-1", id).await.expect("extended");
    }

    /// `quantity` more of the product in `cart` (a new version of it).
    pub async fn cart_add(&self, cart: &Cart, quantity: u32) {
        let line = AddLineItemRequest {
            customer_id: "c-1".into(),
            cart_id: cart.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default(),
            product_id: PRODUCT.into(),
            variant_id: 1,
            quantity,
        };
        self.checkout.carts.add_line(line).await.expect("a line");
    }
}

//! The widget's purchase flow (SPEC section 6.3) as JavaScript values: `Order`, `OrderPage`,
//! `SessionState`, `SignInCode`, and the arguments of the `Service` methods that take them
//! (`service.rs`). Field names are the HTTP API's (`orderId`, `createdAt`).
//!
//! Credentials keep the C ABI's and Python's rule: a session token or publishable key holding
//! a lone surrogate cannot be a valid one and gets the wrong one's answer (`session_expired`,
//! `partner_not_found`), and such a sign-in code is a wrong code.

use napi_derive::napi;
use rampart_core::checkout::{
    MAX_ORDERS_PAGE, Order as CoreOrder, OrderPage as CorePage, OrderRequest as CoreRequest, SessionState as CoreState,
};
use rampart_core::{ErrorKind, OrderId};

use crate::convert::{Arg, Read};

/// A widget order, as `GET /v1/widget/orders/{id}` shows it. `status` is `"created"`,
/// `"completed"` or `"failed"`; times are Unix seconds; amounts, prices and quantities are
/// decimal text.
#[napi(object)]
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub order_id: String,
    pub contact_id: String,
    pub coin: String,
    pub amount: String,
    pub currency: String,
    pub address: String,
    pub price: String,
    pub quantity: String,
    pub status: String,
    pub created_at: f64,
    pub updated_at: f64,
}

impl From<CoreOrder> for Order {
    fn from(o: CoreOrder) -> Self {
        Self {
            order_id: o.id.to_string(),
            contact_id: o.contact_id.to_string(),
            coin: o.coin,
            amount: o.amount,
            currency: o.currency,
            address: o.address,
            price: o.price,
            quantity: o.quantity,
            status: o.status.as_str().to_owned(),
            created_at: o.created_at as f64,
            updated_at: o.updated_at as f64,
        }
    }
}

/// One page of a contact's orders, newest first; pass `next` as `after` for the next page
/// (absent on the last one: optional fields are left out, as in `Partner`).
#[napi(object)]
#[derive(Debug)]
pub struct OrderPage {
    pub orders: Vec<Order>,
    pub next: Option<String>,
}

impl From<CorePage> for OrderPage {
    fn from(p: CorePage) -> Self {
        Self { orders: p.orders.into_iter().map(Order::from).collect(), next: p.next.map(|id| id.to_string()) }
    }
}

/// Where a widget session stands. `twoFactor` is absent before sign-in, then `"none"`, `"setup"`
/// (create and enable 2FA first), `"verify"` (enter a code) or `"passed"`; `mayPurchase` says
/// whether `placeOrder` would pass the 2FA step and the purchase hold.
#[napi(object)]
#[derive(Debug)]
pub struct SessionState {
    pub partner_id: String,
    pub environment: String,
    /// The embedding page's origin (`""` at the top level).
    pub origin: String,
    pub signed_in: bool,
    pub email: Option<String>,
    pub contact_id: Option<String>,
    pub kyc_passed: bool,
    pub two_factor: Option<String>,
    pub may_purchase: bool,
    /// Until when purchases are on hold after a 2FA recovery or reset (Unix seconds); absent
    /// when there is no hold.
    pub purchase_hold_until: Option<f64>,
    /// Unused recovery codes of the signed-in contact (the widget offers new ones at 3 or fewer).
    pub recovery_codes_remaining: u32,
}

impl From<CoreState> for SessionState {
    fn from(s: CoreState) -> Self {
        Self {
            partner_id: s.partner_id.to_string(),
            environment: s.environment.as_str().to_owned(),
            signed_in: s.signed_in(),
            origin: s.origin,
            email: s.email,
            contact_id: s.contact_id.map(|c| c.to_string()),
            kyc_passed: s.kyc_passed,
            two_factor: s.two_factor.map(|t| t.as_str().to_owned()),
            may_purchase: s.may_purchase,
            purchase_hold_until: s.purchase_hold_until.map(|t| t as f64),
            recovery_codes_remaining: s.recovery_codes_remaining,
        }
    }
}

/// A new widget session: its bearer token (`ws_...`, a secret kept in the widget page's
/// memory) and its state.
#[napi(object)]
#[derive(Debug)]
pub struct OpenedSession {
    pub session_token: String,
    pub session: SessionState,
}

/// A sign-in code to deliver to the email's owner, valid for `expiresIn` seconds.
#[napi(object)]
pub struct SignInCode {
    pub code: String,
    pub expires_in: f64,
}

crate::service::opaque_debug!(SignInCode);

/// What `placeOrder` buys: the review screen's values. `currency` defaults to `"usd"`.
// The shape for index.d.ts; `order_request` reads it field by field.
#[allow(dead_code)]
#[napi(object)]
#[derive(Debug)]
pub struct OrderRequest {
    /// Coin symbol (`"btc"`).
    pub coin: String,
    /// Amount to pay (`"25"`, `"25.50"`).
    pub amount: String,
    /// `"usd"` (default), `"eur"` or `"gbp"`.
    pub currency: Option<String>,
    /// Receive address for `coin`.
    pub address: String,
}

/// Paging of `orders`.
// The shape for index.d.ts; `orders_options` reads it field by field.
#[allow(dead_code)]
#[napi(object)]
#[derive(Debug)]
pub struct OrdersOptions {
    /// The previous page's `next` (default: the first page).
    pub after: Option<String>,
    /// Orders per page, 1 to 100 (default 20).
    pub limit: Option<u32>,
}

/// The page size of `orders` when none is given (as over HTTP).
const DEFAULT_LIMIT: u64 = 20;

/// A widget session token (`ws_...`).
pub(crate) fn session_arg(arg: Arg<'_>) -> Read<String> {
    arg.credential(ErrorKind::SessionExpired)
}

/// A publishable key (`pk_...`).
pub(crate) fn publishable_key_arg(arg: Arg<'_>) -> Read<String> {
    arg.credential(ErrorKind::PartnerNotFound)
}

/// An order id: a hyphenated UUID ("orderId must be a UUID", as over HTTP).
pub(crate) fn order_arg(arg: Arg<'_>) -> Read<OrderId> {
    OrderId::parse(&arg.string()?)
}

/// The `OrderRequest` object.
pub(crate) fn order_request(arg: Arg<'_>) -> Read<CoreRequest> {
    let o = arg.opt_object()?.ok_or_else(|| rampart_core::Error::invalid_input("request", "is required"))?;
    Ok(CoreRequest {
        coin: o.get("coin")?.string()?,
        amount: o.get("amount")?.string()?,
        currency: o.get("currency")?.opt_string()?.unwrap_or_else(|| "usd".to_owned()),
        address: o.get("address")?.string()?,
    })
}

/// The `OrdersOptions` object: `after` and `limit` (any value outside 1 to 100 is the core's
/// "limit must be 1 to 100").
pub(crate) fn orders_options(arg: Arg<'_>) -> Read<(Option<OrderId>, usize)> {
    let Some(o) = arg.opt_object()? else { return Ok((None, DEFAULT_LIMIT as usize)) };
    let after = o.get("after")?.opt_string()?.map(|a| OrderId::parse(&a)).transpose()?;
    let limit = o.get("limit")?.opt_whole(1, MAX_ORDERS_PAGE as u64, "must be 1 to 100")?.unwrap_or(DEFAULT_LIMIT);
    Ok((after, limit as usize))
}

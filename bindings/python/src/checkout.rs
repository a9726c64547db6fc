//! The widget's purchase flow (SPEC section 6.3) as Python values: `Order`, `OrderPage`,
//! `SessionState` and `SignInCode`, and the arguments of the `Service` methods that take them
//! (`service.rs`). Field names are the HTTP API's in snake_case (`orderId` is `order_id`).
//!
//! Credentials keep the rule of `Service.authenticate`: a session token or publishable key that
//! is not valid Unicode cannot be a valid one and gets the wrong one's answer, and a sign-in code
//! that is not valid Unicode is a wrong code.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use rampart_core::checkout::{Order as CoreOrder, OrderPage as CorePage, SessionState as CoreState};
use rampart_core::{Error, ErrorKind, OrderId, SignInCode as CoreCode};

use crate::convert::{int_arg, py_repr, text_arg};
use crate::errors::Raise;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Order>()?;
    m.add_class::<OrderPage>()?;
    m.add_class::<SessionState>()?;
    m.add_class::<SignInCode>()?;
    Ok(())
}

/// A widget order, as `GET /v1/widget/orders/{id}` shows it. `status` is `"created"`,
/// `"completed"` or `"failed"`; times are Unix seconds; amounts, prices and quantities are
/// decimal text.
#[pyclass(frozen, eq, module = "rampart")]
#[derive(Clone, PartialEq)]
pub(crate) struct Order {
    #[pyo3(get)]
    order_id: String,
    #[pyo3(get)]
    contact_id: String,
    #[pyo3(get)]
    coin: String,
    #[pyo3(get)]
    amount: String,
    #[pyo3(get)]
    currency: String,
    #[pyo3(get)]
    address: String,
    #[pyo3(get)]
    price: String,
    #[pyo3(get)]
    quantity: String,
    #[pyo3(get)]
    status: &'static str,
    #[pyo3(get)]
    created_at: u64,
    #[pyo3(get)]
    updated_at: u64,
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
            status: o.status.as_str(),
            created_at: o.created_at,
            updated_at: o.updated_at,
        }
    }
}

#[pymethods]
impl Order {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Order(order_id='{}', contact_id='{}', coin={}, amount={}, currency={}, status='{}', created_at={})",
            self.order_id,
            self.contact_id,
            py_repr(py, &self.coin),
            py_repr(py, &self.amount),
            py_repr(py, &self.currency),
            self.status,
            self.created_at
        )
    }
}

/// One page of a contact's orders, newest first; pass `next` as `after` for the next page
/// (`None` on the last one).
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct OrderPage {
    #[pyo3(get)]
    orders: Vec<Order>,
    #[pyo3(get)]
    next: Option<String>,
}

impl From<CorePage> for OrderPage {
    fn from(p: CorePage) -> Self {
        Self { orders: p.orders.into_iter().map(Order::from).collect(), next: p.next.map(|id| id.to_string()) }
    }
}

#[pymethods]
impl OrderPage {
    fn __repr__(&self) -> String {
        let next = self.next.as_ref().map_or("None".to_owned(), |n| format!("'{n}'"));
        format!("OrderPage(orders=<{} orders>, next={next})", self.orders.len())
    }
}

/// Where a widget session stands. `two_factor` is `None` before sign-in, then `"none"`,
/// `"setup"` (create and enable 2FA first), `"verify"` (enter a code) or `"passed"`;
/// `may_purchase` says whether `place_order` would pass the 2FA step and the purchase hold;
/// `purchase_hold_until` is a Unix time while purchases are on hold after a 2FA recovery or reset.
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct SessionState {
    #[pyo3(get)]
    partner_id: String,
    #[pyo3(get)]
    environment: &'static str,
    #[pyo3(get)]
    origin: String,
    #[pyo3(get)]
    signed_in: bool,
    #[pyo3(get)]
    email: Option<String>,
    #[pyo3(get)]
    contact_id: Option<String>,
    #[pyo3(get)]
    kyc_passed: bool,
    #[pyo3(get)]
    two_factor: Option<&'static str>,
    #[pyo3(get)]
    may_purchase: bool,
    #[pyo3(get)]
    purchase_hold_until: Option<u64>,
    #[pyo3(get)]
    recovery_codes_remaining: u32,
}

impl From<CoreState> for SessionState {
    fn from(s: CoreState) -> Self {
        Self {
            partner_id: s.partner_id.to_string(),
            environment: s.environment.as_str(),
            signed_in: s.signed_in(),
            origin: s.origin,
            email: s.email,
            contact_id: s.contact_id.map(|c| c.to_string()),
            kyc_passed: s.kyc_passed,
            two_factor: s.two_factor.map(|t| t.as_str()),
            may_purchase: s.may_purchase,
            purchase_hold_until: s.purchase_hold_until,
            recovery_codes_remaining: s.recovery_codes_remaining,
        }
    }
}

#[pymethods]
impl SessionState {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "SessionState(partner_id='{}', signed_in={}, email={}, two_factor={}, may_purchase={})",
            self.partner_id,
            if self.signed_in { "True" } else { "False" },
            self.email.as_deref().map_or("None".to_owned(), |e| py_repr(py, e)),
            self.two_factor.map_or("None".to_owned(), |t| format!("'{t}'")),
            if self.may_purchase { "True" } else { "False" }
        )
    }
}

/// A sign-in code to deliver to the email's owner, valid for `expires_in` seconds. The repr
/// hides it.
#[pyclass(frozen, module = "rampart")]
pub(crate) struct SignInCode {
    #[pyo3(get)]
    code: String,
    #[pyo3(get)]
    expires_in: u64,
}

impl From<CoreCode> for SignInCode {
    fn from(c: CoreCode) -> Self {
        Self { code: c.code.as_str().to_owned(), expires_in: c.expires_in }
    }
}

#[pymethods]
impl SignInCode {
    fn __repr__(&self) -> String {
        format!("SignInCode(<redacted>, expires_in={})", self.expires_in)
    }
}

/// A credential argument: not a str is a `TypeError`; a str that is not valid Unicode is no
/// valid credential, answered as a wrong one (`kind`).
pub(crate) fn credential_arg(obj: &Bound<'_, PyAny>, field: &str, kind: ErrorKind) -> PyResult<String> {
    let s = obj.downcast::<PyString>().map_err(|_| PyTypeError::new_err(format!("{field} must be a str")))?;
    s.to_str().map(str::to_owned).map_err(|_| Error::new(kind)).or_raise()
}

/// A widget session token (`ws_...`).
pub(crate) fn session_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    credential_arg(obj, "session_token", ErrorKind::SessionExpired)
}

/// A sign-in code: a str that is not valid Unicode is not six digits, so a wrong code.
pub(crate) fn sign_in_code_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let s = obj.downcast::<PyString>().map_err(|_| PyTypeError::new_err("code must be a str"))?;
    Ok(s.to_str().map(str::to_owned).unwrap_or_default())
}

/// An order id: a str or `uuid.UUID`, "orderId must be a UUID" as over HTTP.
pub(crate) fn order_arg(obj: &Bound<'_, PyAny>, field: &str) -> PyResult<OrderId> {
    let uuid_type = obj.py().import("uuid")?.getattr("UUID")?;
    let text = if obj.is_instance(&uuid_type)? { obj.str()?.to_cow()?.into_owned() } else { text_arg(obj, field)? };
    OrderId::parse(&text).or_raise()
}

/// A page size: any int outside 1..=100 (or not an int) is the core's "limit must be 1 to 100".
pub(crate) fn limit_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    let max = rampart_core::checkout::MAX_ORDERS_PAGE as u64;
    obj.map_or(Ok(DEFAULT_LIMIT), |o| int_arg(o, "limit", 1..=max, Some("must be 1 to 100")))
}

/// The page size of `Service.orders` when none is given (as over HTTP).
pub(crate) const DEFAULT_LIMIT: usize = 20;

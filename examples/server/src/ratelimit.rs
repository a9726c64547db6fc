//! A per-client-address rate limit for the public widget routes (SPEC section 6:
//! `POST /v1/widget/check` is "rate-limited per client address").
//!
//! A token bucket per IP address: `burst` requests at once, refilled at `per_minute`. The map
//! is bounded: when it holds [`MAX_CLIENTS`] addresses, buckets that have refilled (idle
//! clients) are dropped, and if every one is still in use the map starts over, so memory stays
//! bounded whatever the number of addresses (an attacker with that many addresses gets, at
//! worst, a fresh bucket each).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

/// Most client addresses remembered at once.
pub const MAX_CLIENTS: usize = 10_000;

/// Requests per minute and burst of one client address.
#[derive(Debug)]
pub struct RateLimiter {
    per_minute: u32,
    burst: u32,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    /// `burst` requests at once, refilled at `per_minute` (both at least 1).
    pub fn new(per_minute: u32, burst: u32) -> Self {
        Self { per_minute: per_minute.max(1), burst: burst.max(1), buckets: Mutex::new(HashMap::new()) }
    }

    /// Take one request from `ip`'s bucket at `now`; `Err(seconds)` to wait (whole, rounded up)
    /// when it is empty.
    pub fn take(&self, ip: IpAddr, now: Instant) -> Result<(), u64> {
        let rate = f64::from(self.per_minute) / 60.0;
        let burst = f64::from(self.burst);
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= MAX_CLIENTS && !buckets.contains_key(&ip) {
            buckets.retain(|_, b| b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate < burst);
            if buckets.len() >= MAX_CLIENTS {
                buckets.clear();
            }
        }
        let bucket = buckets.entry(ip).or_insert(Bucket { tokens: burst, at: now });
        let refilled = bucket.tokens + now.saturating_duration_since(bucket.at).as_secs_f64() * rate;
        bucket.tokens = refilled.min(burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / rate).ceil().max(1.0) as u64)
        }
    }
}

/// The client's address (from the connection), or the unspecified address when the server was
/// not started through [`crate::serve_with`] (all such callers then share one bucket).
#[derive(Debug, Clone, Copy)]
pub struct ClientIp(pub IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let ip = parts
            .extensions
            .get::<ConnectInfo<std::net::SocketAddr>>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
        Ok(Self(ip))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_bucket_per_address() {
        let limiter = RateLimiter::new(60, 3);
        let (a, b) = (IpAddr::from([192, 0, 2, 1]), IpAddr::from([192, 0, 2, 2]));
        let t0 = Instant::now();
        for _ in 0..3 {
            limiter.take(a, t0).unwrap();
        }
        assert_eq!(limiter.take(a, t0), Err(1));
        limiter.take(b, t0).unwrap();
        // One token a second comes back.
        limiter.take(a, t0 + Duration::from_millis(1000)).unwrap();
        assert_eq!(limiter.take(a, t0 + Duration::from_millis(1000)), Err(1));
        let slow = RateLimiter::new(6, 1);
        slow.take(a, t0).unwrap();
        assert_eq!(slow.take(a, t0), Err(10));
    }

    #[test]
    fn memory_is_bounded() {
        let limiter = RateLimiter::new(60, 2);
        let t0 = Instant::now();
        for i in 0..(MAX_CLIENTS as u32 + 10) {
            limiter.take(IpAddr::from(i.to_be_bytes()), t0).unwrap();
        }
        assert!(limiter.buckets.lock().unwrap().len() <= MAX_CLIENTS);
    }
}

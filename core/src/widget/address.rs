//! Receive-address checks per chain (being written).

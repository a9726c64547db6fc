//! The audit trail (SPEC section 9.1) as Python values: `AuditRow`, `AuditPage` and
//! `ChainReport`, returned by `Service.audit_events` and `Service.verify_audit` (`service.rs`).
//! Field names are the rows' members in snake_case (`partnerId` is `partner_id`).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rampart_core::audit::{AuditPage as CorePage, AuditRow as CoreRow, ChainReport as CoreReport};
use serde_json::Value;

use crate::convert::{map_to_dict, py_repr};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AuditRow>()?;
    m.add_class::<AuditPage>()?;
    m.add_class::<ChainReport>()?;
    Ok(())
}

/// One row of a partner's audit chain. `hash` is the hex SHA-256 of the RFC 8785 canonical
/// JSON of the other members (`seq`, `id`, `at`, `partnerId`, `contactId`, `actor`, `event`,
/// `details`, `prev`) and `prev` the previous row's `hash` (64 zeros for `seq` 1).
#[pyclass(frozen, eq, module = "rampart")]
#[derive(Clone, PartialEq)]
pub(crate) struct AuditRow {
    #[pyo3(get)]
    seq: u64,
    #[pyo3(get)]
    id: String,
    /// RFC 3339 UTC with milliseconds (`2026-11-26T15:00:00.000Z`).
    #[pyo3(get)]
    at: String,
    #[pyo3(get)]
    partner_id: String,
    #[pyo3(get)]
    contact_id: Option<String>,
    /// `partner`, `operator:<name>`, `contact`, `member:<id>` or `system`.
    #[pyo3(get)]
    actor: String,
    #[pyo3(get)]
    event: String,
    /// A JSON object; handed out as a new dict each time, so the row cannot be changed.
    details: Value,
    #[pyo3(get)]
    prev: String,
    #[pyo3(get)]
    hash: String,
}

impl From<CoreRow> for AuditRow {
    fn from(r: CoreRow) -> Self {
        Self {
            seq: r.seq,
            id: r.id,
            at: r.at,
            partner_id: r.partner_id,
            contact_id: r.contact_id,
            actor: r.actor,
            event: r.event,
            details: r.details,
            prev: r.prev,
            hash: r.hash,
        }
    }
}

impl AuditRow {
    fn details_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        match &self.details {
            Value::Object(map) => map_to_dict(py, map),
            // The core only writes objects.
            _ => Ok(PyDict::new(py)),
        }
    }
}

#[pymethods]
impl AuditRow {
    #[getter]
    fn details<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.details_dict(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let details = self.details_dict(py)?.repr()?.to_cow()?.into_owned();
        Ok(format!(
            "AuditRow(seq={}, at='{}', actor={}, event={}, contact_id={}, details={details})",
            self.seq,
            self.at,
            py_repr(py, &self.actor),
            py_repr(py, &self.event),
            self.contact_id.as_ref().map_or("None".to_owned(), |c| format!("'{c}'")),
        ))
    }
}

/// One page of a partner's audit chain, oldest first; pass `next` as `after` for the next
/// page (`None` on the last one).
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct AuditPage {
    #[pyo3(get)]
    events: Vec<AuditRow>,
    #[pyo3(get)]
    next: Option<u64>,
}

impl From<CorePage> for AuditPage {
    fn from(p: CorePage) -> Self {
        Self { events: p.events.into_iter().map(AuditRow::from).collect(), next: p.next }
    }
}

#[pymethods]
impl AuditPage {
    fn __repr__(&self) -> String {
        let next = self.next.map_or("None".to_owned(), |n| n.to_string());
        format!("AuditPage(events=<{} rows>, next={next})", self.events.len())
    }
}

/// The verdict on one partner's audit chain: `rows` checked, and `first_bad_seq` None when the
/// chain holds, else the first `seq` whose hash or link is wrong (one past the last row when
/// rows are missing from the end).
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct ChainReport {
    #[pyo3(get)]
    partner_id: String,
    #[pyo3(get)]
    rows: u64,
    #[pyo3(get)]
    first_bad_seq: Option<u64>,
}

impl From<CoreReport> for ChainReport {
    fn from(r: CoreReport) -> Self {
        Self { partner_id: r.partner_id.to_string(), rows: r.rows, first_bad_seq: r.first_bad_seq }
    }
}

#[pymethods]
impl ChainReport {
    fn __repr__(&self) -> String {
        let bad = self.first_bad_seq.map_or("None".to_owned(), |n| n.to_string());
        format!("ChainReport(partner_id='{}', rows={}, first_bad_seq={bad})", self.partner_id, self.rows)
    }
}

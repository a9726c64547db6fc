// The package entry: everything the addon exports (through index.js, the loader the napi-rs CLI
// generates) plus RampartError, the class of every error the addon throws or rejects with.
//
// A subclass of Error cannot be declared from Rust, so it is declared here and set on the
// addon's exports object, where the addon looks it up to build its errors (src/errors.rs).
// Its declaration is index.header.d.ts, which the CLI puts at the top of index.d.ts.
'use strict'

module.exports = require('./index.js')

/**
 * A failed Rampart call. `code` is the stable name of the error ('token_failed',
 * 'partner_not_found', 'invalid_input', ...), `status` the HTTP-style status (401, 404, 400,
 * ...), `message` the fixed text; `retryAfter` (whole seconds) is set on 'throttled'.
 */
class RampartError extends Error {
  constructor(message, { code, status, retryAfter } = {}) {
    super(message)
    this.code = code
    this.status = status
    if (retryAfter !== undefined) this.retryAfter = retryAfter
  }

  /** The same as `code`: the name the Python binding and the C ABI call the kind. */
  get kind() {
    return this.code
  }
}

Object.defineProperty(RampartError.prototype, 'name', { value: 'RampartError', writable: true, configurable: true })

module.exports.RampartError = RampartError

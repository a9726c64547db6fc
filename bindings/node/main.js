// The package entry: everything the addon exports (through index.js, the loader the napi-rs CLI
// generates) plus RampartError, the class of every error the addon throws or rejects with.
//
// A subclass of Error cannot be declared from Rust, so it is declared here and set on the
// addon's exports object, where the addon looks it up to build its errors (src/errors.rs).
// Its declaration is index.header.d.ts, which the CLI puts at the top of index.d.ts.
'use strict'

// The platform this package ships a prebuilt addon for (`rampart.linux-x64-gnu.node`, beside
// this file); index.js also looks for napi-rs platform packages, none of which exist yet.
const SHIPPED = 'linux-x64-gnu'
// The newest glibc symbol version the addon links (make dist-test checks it against the file).
const GLIBC = '2.34'

/** The running platform as napi-rs names it: `linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, ... */
function platformName() {
  let name = `${process.platform}-${process.arch}`
  if (process.platform === 'linux') {
    let glibc = false
    try {
      process.report.excludeNetwork = true
      glibc = Boolean(process.report.getReport().header.glibcVersionRuntime)
    } catch {
      // No report: say nothing about the C library rather than guess.
      return name
    }
    name += glibc ? '-gnu' : '-musl'
  }
  return name
}

/**
 * The first thing index.js tried (the .node file beside it) failed with the innermost cause of
 * its error chain; its first line, without Node's require stack.
 */
function firstLoadError(error) {
  let inner = error
  while (inner && inner.cause instanceof Error) inner = inner.cause
  return String((inner && inner.message) || inner).split('\n')[0]
}

/** What `require('rampart')` throws when index.js finds no addon it can load. */
function loadError(cause) {
  // index.js's own message blames npm's optional-dependency bug, which is never the reason
  // here: name the platform and say what to do.
  const platform = platformName()
  const node = `Node.js ${process.version}`
  const message =
    platform === SHIPPED
      ? `rampart: the prebuilt ${SHIPPED} addon (rampart.${SHIPPED}.node) did not load on ${node}: ` +
        `${firstLoadError(cause)}. It needs glibc ${GLIBC} or later and Node.js 18 or later; ` +
        'reinstall the package if the file is missing.'
      : `rampart: no prebuilt addon for ${platform} (${node}); this package ships one for ${SHIPPED} only. ` +
        'Build the addon from source (see README.md, "Other platforms") and point ' +
        'NAPI_RS_NATIVE_LIBRARY_PATH at it.'
  return new Error(message, { cause })
}

// In this literal form, so that Node's ESM loader sees index.js's names and
// `import { Service } from 'rampart'` works.
try {
  module.exports = require('./index.js')
} catch (cause) {
  throw loadError(cause)
}

/**
 * A failed Rampart call. `code` is the stable name of the error ('token_failed',
 * 'partner_not_found', 'invalid_input', ...), `status` the HTTP-style status (401, 404, 400,
 * ...), `message` the fixed text; `retryAfter` (whole seconds) is set on 'throttled', `reason`
 * ('too_old', 'no_match', ...) on 'webhook_verification_failed'.
 */
class RampartError extends Error {
  constructor(message, { code, status, retryAfter, reason } = {}) {
    super(message)
    this.code = code
    this.status = status
    if (retryAfter !== undefined) this.retryAfter = retryAfter
    if (reason !== undefined) this.reason = reason
  }

  /** The same as `code`: the name the Python binding and the C ABI call the kind. */
  get kind() {
    return this.code
  }
}

Object.defineProperty(RampartError.prototype, 'name', { value: 'RampartError', writable: true, configurable: true })

module.exports.RampartError = RampartError

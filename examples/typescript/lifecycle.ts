// A partner backend's 2FA logic in TypeScript over the Rampart Node package: the calls a route
// handler makes, and SPEC section 3's answers built from what they return or reject with.
// `tsc --strict` checks it against the package's index.d.ts; `node build/lifecycle.js` runs
// the whole lifecycle once on an in-memory service and prints each answer.

import { randomUUID } from 'node:crypto'
import { RampartError, Service, codeAt, type RampartErrorCode, type TwoFactorSetup, type Verified } from 'rampart'

/** What a route sends: the HTTP status and SPEC section 3's body (with section 8's recovery codes). */
export interface Answer {
  status: number
  body: {
    message: string
    code: number
    status?: boolean
    method?: Verified['method']
    recoveryCodesRemaining?: number
    details?: Omit<TwoFactorSetup, 'uri'> | { recoveryCodes: string[] }
  }
  retryAfter?: number
}

const ok = (message: string, extra: Partial<Answer['body']> = {}): Answer => ({
  status: 200,
  body: { message, code: 200, ...extra },
})

/**
 * A rejected call as its answer: a `RampartError` carries the status and the fixed message;
 * anything else is a 500 whose detail stays in the server's log.
 */
export function errorAnswer(err: unknown, fallback: string): Answer {
  if (!(err instanceof RampartError)) return { status: 500, body: { message: fallback, code: 500 } }
  const answer: Answer = { status: err.status, body: { message: err.message, code: err.status } }
  if (err.retryAfter !== undefined) answer.retryAfter = err.retryAfter
  return answer
}

/** The stable name of a rejection, for the request log (never the token or the secret). */
export function errorCode(err: unknown): RampartErrorCode | 'unexpected' {
  return err instanceof RampartError ? err.code : 'unexpected'
}

export async function create2fa(service: Service, partnerId: string, contactId: string): Promise<Answer> {
  try {
    const { qrCode, manual } = await service.create2fa(partnerId, contactId)
    return ok('Successfully created 2fa!', { details: { qrCode, manual } })
  } catch (err) {
    return errorAnswer(err, 'Error creating 2FA')
  }
}

/** Answers the 10 recovery codes, once (send them with `Cache-Control: no-store`). */
export async function enable2fa(service: Service, partnerId: string, contactId: string, token: unknown): Promise<Answer> {
  try {
    const recoveryCodes = await service.enable2fa(partnerId, contactId, token)
    return ok('Successfully enabled 2fa!', { details: { recoveryCodes } })
  } catch (err) {
    return errorAnswer(err, 'Error enabling 2FA')
  }
}

export async function status2fa(service: Service, partnerId: string, contactId: string): Promise<Answer> {
  try {
    const enabled = await service.status2fa(partnerId, contactId)
    const recoveryCodesRemaining = await service.recoveryCodesRemaining(partnerId, contactId)
    return ok(`2FA is ${enabled}.`, { status: enabled, recoveryCodesRemaining })
  } catch (err) {
    return errorAnswer(err, 'Error retrieving 2FA status')
  }
}

/** `factor` is the `token` as sent, or `{ recoveryCode }` (a lost phone). */
export async function verify2fa(service: Service, partnerId: string, contactId: string, factor: unknown): Promise<Answer> {
  try {
    // A wrong or replayed code resolves to false: an outcome, answered as SPEC's 401.
    const verified = await service.verify2fa(partnerId, contactId, factor)
    if (verified) return ok('2FA token is valid.', { method: verified.method, recoveryCodesRemaining: verified.recoveryCodesRemaining })
    return { status: 401, body: { message: 'Google 2FA failed', code: 401 } }
  } catch (err) {
    return errorAnswer(err, 'Error verifying 2FA')
  }
}

/** Prints an answer without its secrets (the QR code and the manual key, the recovery codes). */
function show(route: string, answer: Answer): void {
  const { details, ...body } = answer.body
  const hidden = details === undefined ? '' : 'recoveryCodes' in details ? ` (with ${details.recoveryCodes.length} recoveryCodes)` : ' (with qrCode and manual)'
  console.log(`${route} ${answer.status} ${JSON.stringify(body)}${hidden}`)
}

async function main(): Promise<void> {
  const service = new Service()
  const { partnerId } = await service.createPartner('TypeScript example')
  const contact = randomUUID()
  const created = await create2fa(service, partnerId, contact)
  show('create2fa', created)
  const setup = created.body.details
  if (setup === undefined || !('manual' in setup)) throw new Error('create2fa gave no manual key')
  const now = Math.floor(Date.now() / 1000)
  const enabled = await enable2fa(service, partnerId, contact, codeAt(setup.manual, now))
  show('enable2fa', enabled)
  const codes = enabled.body.details
  if (codes === undefined || !('recoveryCodes' in codes)) throw new Error('enable2fa gave no recovery codes')
  show('2fa', await status2fa(service, partnerId, contact))
  show('verify2fa', await verify2fa(service, partnerId, contact, codeAt(setup.manual, now + 30)))
  show('verify2fa (replayed)', await verify2fa(service, partnerId, contact, codeAt(setup.manual, now + 30)))
  show('verify2fa (recovery code)', await verify2fa(service, partnerId, contact, { recoveryCode: codes.recoveryCodes[0] }))
  show('2fa (unknown partner)', await status2fa(service, randomUUID(), contact))
  service.close()
}

main().catch((err: unknown) => {
  console.error(`lifecycle failed: ${errorCode(err)}`)
  process.exitCode = 1
})

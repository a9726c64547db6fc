// Compile-time check (tsc --noEmit): the hand-written dist declaration and the loader source
// describe the same API. The source's API must be usable as the declared one, and what the
// declaration promises (options, events) must fit the source.
/// <reference path="../../types/rampart.d.ts" />

import type { ErrorCode, FailureCode, LoaderOptions, RampartApi, WidgetEvent } from "../../src/loader";
import type { PageMessageType } from "../../src/envelope";

declare const api: RampartApi;
export const asDeclared: typeof Rampart = api;

declare const declaredOptions: Rampart.Options;
export const options: LoaderOptions = declaredOptions;

declare const sourceEvent: WidgetEvent;
export const event: Rampart.WidgetEvent = sourceEvent;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const errorCodes: Same<ErrorCode, Rampart.ErrorCode> = true;
export const failureCodes: Same<FailureCode, Rampart.FailureCode> = true;
export const eventTypes: Same<PageMessageType, Rampart.EventType> = true;

// A partner page written against the declaration.
export function partnerPage(): void {
  const handle = window.Rampart.render({
    targetContainerId: "buy",
    publicKey: "pk_sandbox_abc",
    receiveAddress: { btc: "bc1q" },
    darkTheme: true,
    onEvent(e) {
      if (e.type === "order.completed") console.log(e.payload.orderId, e.instanceId);
    },
  });
  try {
    handle.close();
  } catch (e) {
    if (e instanceof Rampart.RampartWidgetError) console.log(e.code, e.path);
  }
}

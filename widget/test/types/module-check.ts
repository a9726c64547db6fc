// Compile-time check (tsc --noEmit): the hand-written declaration of the npm package
// (npm/index.d.ts) and its source (src/module.ts) describe the same API. The source's exports
// must be usable as the declared ones, what the declaration promises (options, events) must fit
// the source, and the unions must be equal.

import type * as Declared from "../../npm/index";
import type * as Source from "../../src/module";
import type { PageMessageType } from "../../src/envelope";

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

// The same value exports, and the source's usable as the declared.
declare const source: typeof Source;
export const asDeclared: typeof Declared = source;
export const exportNames: Same<keyof typeof Source, keyof typeof Declared> = true;

declare const declaredOptions: Declared.LoaderOptions;
export const options: Source.LoaderOptions = declaredOptions;
declare const sourceEvent: Source.WidgetEvent;
export const event: Declared.WidgetEvent = sourceEvent;
declare const sourceHandle: Source.Handle;
export const handle: Declared.Handle = sourceHandle;

export const errorCodes: Same<Source.ErrorCode, Declared.ErrorCode> = true;
export const failureCodes: Same<Source.FailureCode, Declared.FailureCode> = true;
export const eventTypes: Same<Source.EventType, Declared.EventType> = true;
export const pageTypes: Same<PageMessageType, Declared.EventType> = true;
// widgetServer is required in both.
export const serverRequired: Same<Declared.LoaderOptions["widgetServer"], string> = true;
export const serverRequiredInSource: Same<Source.LoaderOptions["widgetServer"], string> = true;
// The global's declaration and the module's share their codes.
/// <reference path="../../types/rampart.d.ts" />
export const globalCodes: Same<Rampart.ErrorCode, Declared.ErrorCode> = true;

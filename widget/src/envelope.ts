// The message envelope between the loader and the widget page (SPEC 6.2), version 1:
// {"source":"rampart-widget","version":1,"type","instanceId","seq","payload"}.
// The JSON Schema is widget/schema/envelope.schema.json; keep both in step.

/** The `source` of every envelope. */
export const ENVELOPE_SOURCE = "rampart-widget";
/** The envelope's major version; a message with any other `version` is ignored. */
export const ENVELOPE_VERSION = 1;

/** What the page may send to the loader. Anything else is ignored without an exception. */
export const PAGE_MESSAGE_TYPES = [
  "ready",
  "screen",
  "resize",
  "order.created",
  "order.completed",
  "order.failed",
  "close",
  "error",
] as const;

/** A type the page sends. */
export type PageMessageType = (typeof PAGE_MESSAGE_TYPES)[number];

/** The one type the loader sends: `hello`, posted to the widget's origin after each iframe load. */
export type LoaderMessageType = "hello";

/** A payload: always a JSON object (see the schema for each type's fields). */
export type Payload = { [key: string]: unknown };

/** One message, either way. */
export interface Envelope<T extends string = PageMessageType> {
  source: typeof ENVELOPE_SOURCE;
  version: typeof ENVELOPE_VERSION;
  type: T;
  instanceId: string;
  /** Counts from 1 per sender and per page load; strictly increasing. */
  seq: number;
  payload: Payload;
}

/** What the loader knows about its own iframe when a message arrives. */
export interface ReceiverState {
  /** The iframe's `contentWindow` (the only window whose messages count). */
  frame: unknown;
  /** The widget's origin, e.g. `https://widget.example.com`. */
  origin: string;
  /** This render's random instance id. */
  instanceId: string;
  /** The last accepted `seq` (0 before the first). */
  seq: number;
}

/** The parts of a `MessageEvent` the checker reads. */
export interface MessageEventLike {
  source?: unknown;
  origin?: unknown;
  data?: unknown;
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The envelope in `event` when the loader must accept it, else `null`. Pure: the caller stores
 * the accepted `seq` in its state. Accepted only when all hold: `event.source` is the loader's
 * own iframe window, `event.origin` the widget origin, `source` "rampart-widget", `version`
 * exactly the number 1, `instanceId` this instance's, `type` a known page type, `seq` an integer
 * above the last accepted one, and `payload` an object. Never throws, whatever `event` holds.
 */
export function acceptMessage(state: ReceiverState, event: MessageEventLike): Envelope | null {
  try {
    if (!state.frame || event.source !== state.frame || event.origin !== state.origin) return null;
    const data = event.data;
    if (!isObject(data)) return null;
    const { source, version, type, instanceId, seq, payload } = data;
    if (
      source !== ENVELOPE_SOURCE ||
      version !== ENVELOPE_VERSION ||
      instanceId !== state.instanceId ||
      (PAGE_MESSAGE_TYPES as readonly unknown[]).indexOf(type) < 0 ||
      typeof seq !== "number" ||
      !Number.isSafeInteger(seq) ||
      seq <= state.seq ||
      !isObject(payload)
    ) {
      return null;
    }
    return { source, version, type: type as PageMessageType, instanceId, seq, payload };
  } catch {
    // A hostile object (a getter that throws) is junk like any other.
    return null;
  }
}

/** The envelope the loader posts. */
export function envelope<T extends string>(type: T, instanceId: string, seq: number, payload: Payload): Envelope<T> {
  return { source: ENVELOPE_SOURCE, version: ENVELOPE_VERSION, type, instanceId, seq, payload };
}

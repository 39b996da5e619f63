// The request and answer types of docs/openapi.yaml, as openapi-typescript
// generates them at build time (src/generated/api.ts): a change of the
// contract breaks the build here rather than at run time.
import type { components, operations } from "./generated/api.js";

export type Schemas = components["schemas"];

/** The JSON body operation `K` takes. */
export type RequestOf<K extends keyof operations> =
  NonNullable<operations[K]["requestBody"]> extends { content: { "application/json": infer B } } ? B : never;

/** The JSON answer of operation `K` with status `S`. */
export type AnswerOf<
  K extends keyof operations,
  S extends keyof operations[K]["responses"],
> = operations[K]["responses"][S] extends { content: { "application/json": infer A } } ? A : never;

/** A lock mode one may ask for. */
export type LockMode = Schemas["LockMode"];
/** A mode a holder may be in (combinations included), or NoLock. */
export type HeldMode = Schemas["HeldMode"];
/** An open session as the server describes it. */
export type SessionInfo = Schemas["Session"];
/** A record read alone, with its body. */
export type RecordInfo = Schemas["Record"];
/** A key in a listing, without its body. */
export type RecordSummary = Schemas["RecordSummary"];
/** An application lock's holders and waiters. */
export type LockEntry = Schemas["LockEntry"];
/** A semaphore's holders and waiters. */
export type SemaphoreEntry = Schemas["SemaphoreEntry"];
/** A granted checkout. */
export type CheckoutGranted = Schemas["CheckoutGranted"];
/** A message leased from the outbox. */
export type ClaimedMessage = Schemas["ClaimedMessage"];
